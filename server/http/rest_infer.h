/* The inference endpoint of the HTTP/REST frontend (rest_infer.c). */
#ifndef NEREID_SERVER_HTTP_REST_INFER_H
#define NEREID_SERVER_HTTP_REST_INFER_H

#include "server/core/core.h"
#include "server/http/http_server.h"

/** Runs exchange x (a POST .../infer) on model m, whose reference it
 *  takes: answers now when the body is refused, else once the model
 *  answers. The loop thread of x. */
void srv_rest_infer(srv_server_t *srv, srv_http_exchange_t *x, srv_model_t *m);

#endif
