/* An HTTP/1.1 server on h2o's event loop (libh2o-evloop): listening
 * sockets, loop threads, and the exchanges (one request and its answer)
 * it hands to a handler. Used by the HTTP/REST frontend (port 8000) and
 * the metrics endpoint (port 8002); see http.md. */
#ifndef NEREID_SERVER_HTTP_HTTP_SERVER_H
#define NEREID_SERVER_HTTP_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"

typedef struct srv_http srv_http_t;
typedef struct srv_http_exchange srv_http_exchange_t;

/** Called on the loop thread that received the request, with its whole
 *  body. It answers with srv_http_reply (now, or later from any thread). */
typedef void (*srv_http_handler_fn)(void *ctx, srv_http_exchange_t *x);

typedef struct {
  const char *name;    /* for logs: "HTTP", "metrics" */
  const char *address; /* an IPv4 or IPv6 literal, e.g. 0.0.0.0 */
  int port;            /* 0 picks a free one (srv_http_port) */
  int threads;         /* loop threads, each accepting connections */
  bool reuse_port;     /* SO_REUSEPORT: a socket per loop, the port shared */
  size_t max_body;     /* larger bodies get 413 before the handler runs */
  srv_http_handler_fn handler;
  void *ctx;
} srv_http_config_t;

/** Binds, listens and starts the loop threads. On error nothing is left
 *  running and the status names the address and the reason. Main thread. */
srv_status_t *srv_http_start(const srv_http_config_t *cfg, srv_http_t **out);

/** The port it listens on (the one picked when the config said 0). */
int srv_http_port(const srv_http_t *h);

/** Stops accepting new connections and requests. Exchanges under way
 *  still get their answers. Main thread. */
void srv_http_close(srv_http_t *h);

/** After srv_http_close: waits until every exchange has its answer (sent,
 *  or dropped with its connection) or the deadline (common/deadline.h)
 *  passes; true when none is left. Main thread. */
bool srv_http_wait(srv_http_t *h, uint64_t deadline_ns);

/** Ends the loop threads and frees the server, after a srv_http_wait that
 *  returned true; otherwise leaves the loops running (an answer may still
 *  come to them) and frees nothing: the process is exiting. Main thread. */
void srv_http_free(srv_http_t *h);

#endif
