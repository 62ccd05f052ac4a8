/* Where requests meet the response cache: one call on the way in (the
 * model's enqueue, before the request queues) and one on the way out (a
 * final response being sent). A model without caching has m->cache NULL
 * and a request that missed no cache in its state: each side costs those
 * requests one predictable branch. See cache.md. */
#ifndef NEREID_SERVER_CACHE_CACHE_HOOK_H
#define NEREID_SERVER_CACHE_CACHE_HOOK_H

#include <stdbool.h>

#include "server/common/status.h"
#include "server/model/response.h"

/** Whether the cache answered r for model m (which has a cache): then r
 *  was answered and released, and the caller must not touch it. On a miss
 *  r's state remembers the key, and the response inserts it. The
 *  enqueueing thread (the request's owner). */
bool srv_cache_enqueue(srv_model_t *m, TRITONBACKEND_Request *r);

/** The way out: a successful response of a request that missed is copied
 *  into the cache. The thread sending the response, before it leaves. */
void srv_cache_response_sent(TRITONBACKEND_Response *response);

static inline void srv_cache_on_send(TRITONBACKEND_Response *response) {
  if (__builtin_expect(response->state->cache != NULL, 0))
    srv_cache_response_sent(response);
}

/** At load, once the config is complete and m->decoupled known: m uses the
 *  server's cache when its config enables response_cache and the server
 *  has one. Refuses a decoupled model, as Triton does. Loader thread. */
srv_status_t *srv_cache_model_attach(srv_model_t *m);

#endif
