/* The REST frontend's endpoints beyond inference and health: metadata,
 * config, statistics, the repository index, load and unload, shared
 * memory. The loop thread of the exchange. */
#ifndef NEREID_SERVER_HTTP_REST_VIEWS_H
#define NEREID_SERVER_HTTP_REST_VIEWS_H

#include <stdbool.h>

#include "server/core/core.h"
#include "server/http/exchange.h"
#include "server/views/http_views.h"

typedef enum { SRV_REST_METADATA, SRV_REST_CONFIG, SRV_REST_STATS } srv_rest_view_t;

/** Answers x with a (its body taken) and frees what a holds. */
void srv_rest_answer(srv_http_exchange_t *x, srv_http_answer_t *a);

/** GET /v2/models/{name}[/versions/{version}][/config|/stats]; an empty
 *  name with STATS: every model's statistics. */
void srv_rest_model_view(srv_server_t *srv, srv_http_exchange_t *x, srv_rest_view_t what,
                         srv_http_bytes_t name, srv_http_bytes_t version);

/** POST /v2/repository/models/{name}/load or /unload: the body parsed as
 *  Triton takes it, the repository asked, the answer when it is done. */
void srv_rest_repository_op(srv_server_t *srv, srv_http_exchange_t *x, bool load,
                            srv_http_bytes_t name);

typedef enum {
  SRV_REST_SHM_STATUS,
  SRV_REST_SHM_REGISTER,
  SRV_REST_SHM_UNREGISTER
} srv_rest_shm_op_t;

/** /v2/{system,cuda}sharedmemory[/region/{region}]/{status,register,
 *  unregister}, the method already checked (status GET, the others POST):
 *  answered at once from the server's region table (region empty: every
 *  region). */
void srv_rest_shm(srv_server_t *srv, srv_http_exchange_t *x, srv_shm_kind_t kind,
                  srv_http_bytes_t region, srv_rest_shm_op_t op);

#endif
