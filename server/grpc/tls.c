/* The gRPC port's credentials (see tls.h). gRPC's file watcher re-reads
 * the key, the certificate chain and the root bundle every
 * --grpc-ssl-refresh-interval-secs on its own thread; a new handshake
 * uses what it read last, connections already open keep theirs. A read
 * that fails (a file half-written) keeps the previous credentials. */
#include "server/grpc/tls.h"

#include "server/common/log.h"

grpc_server_credentials *srv_tls_credentials(const srv_options_t *opt) {
  if (!opt->grpc_use_ssl && !opt->grpc_use_ssl_mutual)
    return grpc_insecure_server_credentials_create();
  grpc_tls_certificate_provider *provider = grpc_tls_certificate_provider_file_watcher_create(
      opt->grpc_server_key, opt->grpc_server_cert, opt->grpc_root_cert,
      (unsigned)opt->grpc_ssl_refresh_interval_secs);
  grpc_tls_credentials_options *tls = grpc_tls_credentials_options_create();
  if (provider == NULL || tls == NULL) SRV_FATAL("out of memory");
  /* The options take their own reference on the provider. */
  grpc_tls_credentials_options_set_certificate_provider(tls, provider);
  grpc_tls_certificate_provider_release(provider);
  grpc_tls_credentials_options_watch_identity_key_cert_pairs(tls);
  if (opt->grpc_root_cert != NULL) grpc_tls_credentials_options_watch_root_certs(tls);
  /* As tritonserver: mutual TLS requires a client certificate that the
   * root verifies; plain TLS asks for none. */
  grpc_tls_credentials_options_set_cert_request_type(
      tls, opt->grpc_use_ssl_mutual
               ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
               : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  /* Takes the options. */
  grpc_server_credentials *creds = grpc_tls_server_credentials_create(tls);
  if (creds == NULL) SRV_FATAL("gRPC refused the TLS credentials");
  return creds;
}
