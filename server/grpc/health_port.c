/* The plaintext health port (see health_port.h). */
#include "server/grpc/health_port.h"

#include <grpc/grpc_security.h>
#include <stdio.h>
#include <string.h>

#include "server/grpc/rpc.h"

#define HEALTH_PREFIX "/grpc.health.v1.Health/"

srv_status_t *srv_health_port_bind(grpc_server *server, const srv_options_t *opt,
                                   int *port) {
  *port = 0;
  if (opt->grpc_health_port == 0) return NULL;
  const char *host =
      opt->grpc_health_address != NULL ? opt->grpc_health_address : opt->grpc_address;
  char addr[300];
  const char *fmt = strchr(host, ':') ? "[%s]:%d" : "%s:%d";
  snprintf(addr, sizeof addr, fmt, host, opt->grpc_health_port);
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  *port = grpc_server_add_http2_port(server, addr, creds);
  grpc_server_credentials_release(creds);
  if (*port == 0)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "--grpc-health-port: cannot listen on %s (address in use or "
                          "invalid)",
                          addr);
  return NULL;
}

/* Whether the call's transport is TLS ("ssl" for gRPC's TLS credentials;
 * the health port's is "insecure"). */
static bool call_over_tls(grpc_call *call) {
  grpc_auth_context *ctx = grpc_call_auth_context(call);
  if (ctx == NULL) return false;
  grpc_auth_property_iterator it = grpc_auth_context_find_properties_by_name(
      ctx, GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  const grpc_auth_property *p = grpc_auth_property_iterator_next(&it);
  bool tls = p != NULL && (strcmp(p->value, GRPC_SSL_TRANSPORT_SECURITY_TYPE) == 0 ||
                           strcmp(p->value, GRPC_TLS_TRANSPORT_SECURITY_TYPE) == 0);
  grpc_auth_context_release(ctx);
  return tls;
}

srv_status_t *srv_health_port_refuse(int health_port, grpc_call *call, size_t rpc) {
  if (health_port == 0) return NULL;
  if (rpc < srv_rpc_count &&
      strncmp(srv_rpcs[rpc].path, HEALTH_PREFIX, sizeof HEALTH_PREFIX - 1) == 0)
    return NULL;
  if (call_over_tls(call)) return NULL;
  return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                        "this port (--grpc-health-port %d) serves grpc.health.v1.Health "
                        "only; use the TLS gRPC port",
                        health_port);
}
