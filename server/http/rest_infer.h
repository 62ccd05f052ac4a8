/* The inference endpoint of the HTTP/REST frontend (rest_infer.c). */
#ifndef NEREID_SERVER_HTTP_REST_INFER_H
#define NEREID_SERVER_HTTP_REST_INFER_H

#include "server/core/core.h"
#include "server/http/http_server.h"

/** The endpoint: KServe's infer, or Triton's generate and generate_stream
 *  (server-sent events). */
typedef enum {
  SRV_REST_INFER,
  SRV_REST_GENERATE,
  SRV_REST_GENERATE_STREAM,
} srv_rest_mode_t;

/** Runs exchange x (a POST to the endpoint `mode`) on model m, whose
 *  reference it takes: answers now when the body is refused, else as the
 *  model answers. The loop thread of x. */
void srv_rest_infer(srv_server_t *srv, srv_http_exchange_t *x, srv_model_t *m,
                    srv_rest_mode_t mode);

#endif
