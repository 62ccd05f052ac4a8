/* The gRPC port's credentials: plaintext, TLS or mutual TLS, through gRPC
 * core's TLS credentials with a file-watching certificate provider, so
 * that certificate files replaced on disk serve new connections without a
 * restart. Main thread, at start-up. */
#ifndef NEREID_SERVER_GRPC_TLS_H
#define NEREID_SERVER_GRPC_TLS_H

#include <grpc/grpc_security.h>

#include "server/options.h"

/** New server credentials for --grpc-port, as the flags say (checked by
 *  srv_tls_check). The caller releases them
 *  (grpc_server_credentials_release) once the port is added; the server
 *  keeps what it needs, the file watcher included. */
grpc_server_credentials *srv_tls_credentials(const srv_options_t *opt);

#endif
