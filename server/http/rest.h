/* The HTTP/REST frontend: KServe v2 with Triton's extensions, on the HTTP
 * server of http_server.h, over the core (server/core/core.h) as the gRPC
 * frontend is. See http.md. */
#ifndef NEREID_SERVER_HTTP_REST_H
#define NEREID_SERVER_HTTP_REST_H

#include <stdbool.h>
#include <stdint.h>

#include "server/core/core.h"
#include "server/http/http_server.h"

typedef struct srv_rest srv_rest_t;

/** Listens on --http-address:--http-port with --http-thread-count loops.
 *  Main thread. */
srv_status_t *srv_rest_start(srv_server_t *srv, srv_rest_t **out);

/** Shutdown in the gRPC frontend's steps: stop taking requests, wait for
 *  those under way (up to a deadline), free. Main thread. */
void srv_rest_close(srv_rest_t *rest);
bool srv_rest_wait(srv_rest_t *rest, uint64_t deadline_ns);
void srv_rest_free(srv_rest_t *rest);

#endif
