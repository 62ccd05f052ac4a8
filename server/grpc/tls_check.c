/* TLS start-up checks (see tls_check.h). Main thread only; OpenSSL's
 * objects live only inside each check. A file at fault is
 * FAILED_PRECONDITION (no usage text follows), flags that do not go
 * together INVALID_ARGUMENT. */
#include "server/grpc/tls_check.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "server/common/log.h"

/* The certificates of one PEM file, in file order. */
typedef struct {
  STACK_OF(X509) *certs;
} pem_certs_t;

/* The reason OpenSSL gives for its last failure, or `fallback`. */
static const char *ssl_reason(const char *fallback) {
  unsigned long e = ERR_peek_last_error();
  const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;
  return r != NULL ? r : fallback;
}

static srv_status_t *file_open(const char *flag, const char *path, FILE **out) {
  *out = fopen(path, "r");
  if (*out == NULL)
    return srv_status_new(GRPC_STATUS_FAILED_PRECONDITION, "--%s: cannot read '%s': %s",
                          flag, path, strerror(errno));
  return NULL;
}

/* Every certificate of the file; at least one, or an error. */
static srv_status_t *certs_read(const char *flag, const char *path, pem_certs_t *out) {
  FILE *f;
  srv_status_t *st = file_open(flag, path, &f);
  if (st != NULL) return st;
  out->certs = sk_X509_new_null();
  if (out->certs == NULL) SRV_FATAL("out of memory");
  ERR_clear_error();
  X509 *x;
  while ((x = PEM_read_X509(f, NULL, NULL, NULL)) != NULL)
    if (!sk_X509_push(out->certs, x)) SRV_FATAL("out of memory");
  /* The loop ends at the end of the file (PEM_R_NO_START_LINE) or at a
   * block that is not a certificate. */
  unsigned long e = ERR_peek_last_error();
  bool clean_end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
  fclose(f);
  if (sk_X509_num(out->certs) == 0 || !clean_end) {
    st = srv_status_new(GRPC_STATUS_FAILED_PRECONDITION,
                        "--%s: '%s' is not a PEM certificate file (%s)", flag, path,
                        sk_X509_num(out->certs) == 0 ? "no certificate found"
                                                     : ssl_reason("unreadable block"));
    sk_X509_pop_free(out->certs, X509_free);
    out->certs = NULL;
  }
  ERR_clear_error();
  return st;
}

/* Each certificate is valid now: not expired, not before its start. */
static srv_status_t *certs_valid_now(const char *flag, const char *path,
                                     const pem_certs_t *c) {
  for (int i = 0; i < sk_X509_num(c->certs); i++) {
    X509 *x = sk_X509_value(c->certs, i);
    char subject[256];
    X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof subject);
    if (X509_cmp_current_time(X509_get0_notAfter(x)) <= 0)
      return srv_status_new(GRPC_STATUS_FAILED_PRECONDITION,
                            "--%s: certificate '%s' in '%s' has expired", flag, subject,
                            path);
    if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0)
      return srv_status_new(GRPC_STATUS_FAILED_PRECONDITION,
                            "--%s: certificate '%s' in '%s' is not valid yet", flag,
                            subject, path);
  }
  return NULL;
}

static srv_status_t *key_read(const char *path, EVP_PKEY **out) {
  FILE *f;
  srv_status_t *st = file_open("grpc-server-key", path, &f);
  if (st != NULL) return st;
  ERR_clear_error();
  *out = PEM_read_PrivateKey(f, NULL, NULL, NULL);
  fclose(f);
  if (*out == NULL)
    st = srv_status_new(GRPC_STATUS_FAILED_PRECONDITION,
                        "--grpc-server-key: '%s' is not a PEM private key", path);
  ERR_clear_error();
  return st;
}

/* Whether the roots verify the server's chain; a warning if not: with
 * mutual TLS the root is the CA of the clients, and the server's own
 * certificate may well come from another CA. */
static void root_check_server(const srv_options_t *opt, const pem_certs_t *server,
                              const pem_certs_t *roots) {
  X509_STORE *store = X509_STORE_new();
  X509_STORE_CTX *ctx = X509_STORE_CTX_new();
  if (store == NULL || ctx == NULL) SRV_FATAL("out of memory");
  for (int i = 0; i < sk_X509_num(roots->certs); i++)
    X509_STORE_add_cert(store, sk_X509_value(roots->certs, i));
  X509 *leaf = sk_X509_value(server->certs, 0);
  if (!X509_STORE_CTX_init(ctx, store, leaf, server->certs)) SRV_FATAL("out of memory");
  if (X509_verify_cert(ctx) != 1)
    SRV_WARN("--grpc-root-cert '%s' does not verify --grpc-server-cert '%s' (%s); "
             "clients must trust the server's CA by other means",
             opt->grpc_root_cert, opt->grpc_server_cert,
             X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  ERR_clear_error();
}

/* The files: readable PEM, valid now, the key matching the certificate. */
static srv_status_t *files_check(const srv_options_t *opt) {
  pem_certs_t server = {NULL}, roots = {NULL};
  EVP_PKEY *key = NULL;
  srv_status_t *st = certs_read("grpc-server-cert", opt->grpc_server_cert, &server);
  if (st == NULL) st = certs_valid_now("grpc-server-cert", opt->grpc_server_cert, &server);
  if (st == NULL) st = key_read(opt->grpc_server_key, &key);
  if (st == NULL && X509_check_private_key(sk_X509_value(server.certs, 0), key) != 1)
    st = srv_status_new(GRPC_STATUS_FAILED_PRECONDITION,
                        "--grpc-server-key: the key in '%s' does not match the "
                        "certificate in --grpc-server-cert '%s'",
                        opt->grpc_server_key, opt->grpc_server_cert);
  ERR_clear_error();
  if (st == NULL && opt->grpc_root_cert != NULL) {
    st = certs_read("grpc-root-cert", opt->grpc_root_cert, &roots);
    if (st == NULL) st = certs_valid_now("grpc-root-cert", opt->grpc_root_cert, &roots);
    if (st == NULL) root_check_server(opt, &server, &roots);
  }
  EVP_PKEY_free(key);
  if (server.certs != NULL) sk_X509_pop_free(server.certs, X509_free);
  if (roots.certs != NULL) sk_X509_pop_free(roots.certs, X509_free);
  return st;
}

/* The flags go together: files only with TLS, TLS only with its files. */
static srv_status_t *flags_check(const srv_options_t *opt, bool tls) {
  const char *files[][2] = {{"grpc-server-cert", opt->grpc_server_cert},
                            {"grpc-server-key", opt->grpc_server_key},
                            {"grpc-root-cert", opt->grpc_root_cert}};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    if (!tls && files[i][1] != NULL)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--%s '%s' is given without --grpc-use-ssl", files[i][0],
                            files[i][1]);
  if (!tls && opt->grpc_health_port != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--grpc-health-port is only for a TLS gRPC port "
                          "(--grpc-use-ssl); a plaintext gRPC port answers "
                          "grpc.health.v1 itself");
  if (!tls) return NULL;
  if (opt->grpc_server_cert == NULL || opt->grpc_server_key == NULL)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key");
  if (opt->grpc_use_ssl_mutual && opt->grpc_root_cert == NULL)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--grpc-use-ssl-mutual needs --grpc-root-cert (the CA that "
                          "signs client certificates)");
  if (opt->grpc_health_port != 0 && opt->grpc_health_port == opt->grpc_port)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--grpc-health-port %d is also --grpc-port",
                          opt->grpc_health_port);
  return NULL;
}

srv_status_t *srv_tls_check(const srv_options_t *opt) {
  bool tls = opt->grpc_use_ssl || opt->grpc_use_ssl_mutual;
  srv_status_t *st = flags_check(opt, tls);
  if (st == NULL && tls) st = files_check(opt);
  return st;
}
