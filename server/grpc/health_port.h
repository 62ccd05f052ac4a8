/* The plaintext health port (--grpc-health-port): a second, insecure
 * listening port of the same grpc_server as a TLS --grpc-port, on which
 * only grpc.health.v1.Health answers, so that Kubernetes' gRPC probes
 * (plaintext only) work while clients need (mutual) TLS. Calls of both
 * ports share the queues and handlers; a call is told apart by its
 * transport's security type. Any thread that owns a call. */
#ifndef NEREID_SERVER_GRPC_HEALTH_PORT_H
#define NEREID_SERVER_GRPC_HEALTH_PORT_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "server/common/status.h"
#include "server/options.h"

/** Adds the health port to `server` (before it starts), when
 *  --grpc-health-port asks for one; *port is the bound port, 0 for none. */
srv_status_t *srv_health_port_bind(grpc_server *server, const srv_options_t *opt,
                                   int *port);

/** UNAVAILABLE when the call came over the health port (plaintext while
 *  --grpc-port is TLS) and `rpc` (an index in srv_rpcs, or srv_rpc_count
 *  for an unregistered method) is not grpc.health.v1; else NULL. Costs
 *  nothing without a health port. */
srv_status_t *srv_health_port_refuse(int health_port, grpc_call *call, size_t rpc);

#endif
