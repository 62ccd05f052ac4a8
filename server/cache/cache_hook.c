/* The model side of the response cache (cache_hook.h): lookups before a
 * request queues, answers built from an entry, insertion of responses,
 * and the statistics Triton keeps for them. */
#include "server/cache/cache_hook.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/api/error.h"
#include "server/cache/cache.h"
#include "server/common/log.h"
#include "server/core/server.h"
#include "server/model/model.h"

srv_status_t *srv_cache_model_attach(srv_model_t *m) {
  m->cache = NULL;
  const inference_ModelResponseCache *rc =
      inference_ModelConfig_response_cache(m->config);
  if (rc == NULL || !inference_ModelResponseCache_enable(rc)) return NULL;
  /* Triton: a model asks, the server decides; without a server cache the
   * setting does nothing. */
  if (m->server == NULL || m->server->cache == NULL) return NULL;
  if (m->decoupled)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "Response Cache does not currently support model %s with "
                          "'decoupled' transaction policy. Please disable the response "
                          "cache.",
                          m->name);
  /* Triton's sequence batcher takes no part in caching: requests of a
   * sequence change state, so the same inputs need not give the same
   * answer. Such a model loads and runs uncached. */
  if (m->seq != NULL) return NULL;
  m->cache = m->server->cache;
  m->stats.cache_enabled = true;
  return NULL;
}

/* ---- a hit ---- */

/* Copies e's outputs into a response for r: the one copy of a hit. NULL
 * or the error that stops it (an output that does not fit the client's
 * shared-memory region). */
static TRITONSERVER_Error *answer_fill(TRITONBACKEND_Response *resp,
                                       const srv_cache_entry_t *e) {
  const srv_cache_output_t *o;
  uint32_t n = srv_cache_entry_outputs(e, &o);
  for (uint32_t i = 0; i < n; i++) {
    TRITONBACKEND_Output *out;
    TRITONSERVER_Error *err = TRITONBACKEND_ResponseOutput(
        resp, &out, o[i].name, o[i].datatype, o[i].shape, o[i].dims_count);
    void *buf;
    TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
    int64_t type_id = 0;
    if (err == NULL)
      err = TRITONBACKEND_OutputBuffer(out, &buf, o[i].byte_size, &type, &type_id);
    if (err != NULL) return err;
    /* Host memory: the response's, or a client's host region in place; a
     * GPU region gets its copy when the response settles. */
    if (o[i].byte_size != 0) memcpy(buf, o[i].data, o[i].byte_size);
  }
  return NULL;
}

/* Triton's accounting of a hit: a success whose time is the request's
 * whole life, its queue time up to the lookup, and the lookup and copy as
 * cache_hit; no compute, no inference or execution counted. */
static void hit_count(srv_model_t *m, TRITONBACKEND_Request *r, uint64_t lookup_start,
                      uint64_t end) {
  srv_stats_t *s = &m->stats;
  uint64_t start = r->state->request_start_ns;
  uint64_t total = start != 0 && start <= end ? end - start : end - lookup_start;
  uint64_t queue =
      r->queue_start_ns <= lookup_start ? lookup_start - r->queue_start_ns : 0;
  srv_stats_slot_t *mine = srv_stats_mine(s); /* this thread's (stats README) */
  srv_duration_add(&mine->success, total);
  srv_duration_add(&mine->queue, queue);
  srv_duration_add(&mine->cache_hit, end - lookup_start);
  srv_latency_hist_t *h = srv_stats_slot_latency(mine)->kind;
  srv_hist_record(&h[SRV_LAT_REQUEST], total);
  srv_hist_record(&h[SRV_LAT_QUEUE], queue);
  atomic_store_explicit(&mine->last_inference_ms, srv_stats_wall_ms(),
                        memory_order_relaxed);
}

static void answer(srv_model_t *m, TRITONBACKEND_Request *r, const srv_cache_entry_t *e,
                   uint64_t lookup_start) {
  TRITONBACKEND_Response *resp;
  TRITONBACKEND_ResponseNew(&resp, r);
  TRITONSERVER_Error *err = answer_fill(resp, e);
  uint64_t end = act_now_ns();
  if (err == NULL)
    hit_count(m, r, lookup_start, end);
  else
    srv_stats_fail(&m->stats, SRV_FAIL_OTHER, end - r->state->request_start_ns);
  TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_Error *rel =
      TRITONBACKEND_RequestRelease(r, TRITONSERVER_REQUEST_RELEASE_ALL);
  if (rel != NULL) TRITONSERVER_ErrorDelete(rel);
}

/* A miss: the state remembers the key and the lookup's time, read by the
 * response's sender (the enqueue message publishes them). */
static void miss_note(TRITONBACKEND_Request *r, srv_cache_t *c, const srv_cache_key_t *key,
                      uint64_t lookup_ns) {
  srv_infer_state_t *st = r->state;
  st->cache = c;
  st->cache_key_hi = key->hi;
  st->cache_key_lo = key->lo;
  st->cache_lookup_ns = lookup_ns;
}

/* ---- a library's lookup, on its call threads ---- */

/* A request waiting for a library's answer: it left the enqueueing thread
 * and reaches the model's actor only if the library misses. */
typedef struct {
  srv_cache_job_t job;
  srv_model_t *m; /* alive: r's state holds a reference */
  TRITONBACKEND_Request *r;
  srv_cache_key_t key;
  uint64_t start;
} lookup_job_t;

/* A cancel that came while r waited here found it in no queue (the model
 * actor answered it CANCEL_DONE at once): r is answered cancelled here,
 * as the actor answers one it finds queued. Relaxed: the flag is a hint,
 * as for backends that poll it. */
static bool cancelled_here(srv_model_t *m, TRITONBACKEND_Request *r) {
  if (!atomic_load_explicit(&r->state->cancelled, memory_order_relaxed)) return false;
  srv_request_fail(r, TRITONSERVER_ERROR_CANCELLED,
                   "request '%s' for model '%s' was cancelled before it ran", r->id,
                   m->name);
  return true;
}

static void lookup_run(srv_cache_job_t *job) {
  lookup_job_t *j = (lookup_job_t *)job;
  srv_model_t *m = j->m;
  TRITONBACKEND_Request *r = j->r;
  srv_cache_t *c = m->cache;
  srv_cache_key_t key = j->key;
  uint64_t start = j->start;
  free(j);
  if (cancelled_here(m, r)) return;
  srv_cache_entry_t *e = srv_cache_lookup(c, &key);
  if (e != NULL) {
    answer(m, r, e, start); /* the time waited here counts as the lookup's */
    srv_cache_entry_release(c, e);
    return;
  }
  miss_note(r, c, &key, act_now_ns() - start);
  if (cancelled_here(m, r)) return; /* during the lookup */
  srv_model_enqueue_uncached(m, r); /* the actor's queue, without a second lookup */
}

/* Hands r to the library's call threads; false (r is the caller's, as a
 * miss) when their queue is full. */
static bool lookup_queue(srv_model_t *m, TRITONBACKEND_Request *r,
                         const srv_cache_key_t *key, uint64_t start) {
  lookup_job_t *j = malloc(sizeof *j);
  if (j == NULL) SRV_FATAL("out of memory");
  *j = (lookup_job_t){.job = {.run = lookup_run}, .m = m, .r = r, .key = *key,
                      .start = start};
  /* A round trip is long enough for a client to give up: the owner
   * watches for its cancel from now on (before the push: once pushed, r
   * may be answered and gone). */
  srv_request_watch_ask(r->state);
  if (srv_cache_job_try_push(m->cache, &j->job)) return true;
  free(j);
  SRV_VERBOSE(1,
              "response cache: the cache call queue is full; request '%s' for model "
              "'%s' skips the lookup",
              r->id, m->name);
  miss_note(r, m->cache, key, act_now_ns() - start);
  return false;
}

bool srv_cache_enqueue(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_cache_t *c = m->cache;
  uint64_t start = act_now_ns();
  srv_cache_key_t key;
  /* The load's serial takes part: a reload of the same name and version
   * (new weights, new config) never sees the answers of the old one,
   * which age out of the LRU. */
  uint64_t seed = srv_cache_seed(c) ^ (m->serial * 0x9e3779b97f4a7c15ull);
  if (!srv_cache_key_of(seed, m->name, m->version, r, &key)) return false;
  /* A library may wait on the network: its call threads do that, never
   * the enqueueing thread (an actor worker). */
  if (srv_cache_is_library(c)) return lookup_queue(m, r, &key, start);
  srv_cache_entry_t *e = srv_cache_lookup(c, &key);
  if (e == NULL) {
    miss_note(r, c, &key, act_now_ns() - start);
    return false;
  }
  answer(m, r, e, start);
  srv_cache_entry_release(c, e);
  return true;
}

/* ---- a miss coming back ---- */

enum { STACK_OUTPUTS = 8 };

static void insert_local(srv_cache_t *c, const srv_cache_key_t *key,
                         const srv_cache_output_t *o, uint32_t n) {
  srv_cache_insert_t got = srv_cache_insert(c, key, o, n);
  if (got == SRV_CACHE_TOO_BIG)
    srv_cache_insert_failed(key, "the response is larger than the cache");
  else if (got == SRV_CACHE_NO_ROOM)
    srv_cache_insert_failed(key, "no room left after eviction");
}

/* An answer on its way into a library: its own encoded copy, so that the
 * response leaves at once and its buffers go back to their owner. */
typedef struct {
  srv_cache_job_t job;
  srv_cache_t *c;
  srv_cache_key_t key;
  size_t size;
  void *blob;
} insert_job_t;

static void insert_run(srv_cache_job_t *job) {
  insert_job_t *j = (insert_job_t *)job;
  srv_cache_insert_encoded(j->c, &j->key, j->blob, j->size);
  free(j->blob);
  free(j);
}

static void insert_queue(srv_cache_t *c, const srv_cache_key_t *key,
                         const srv_cache_output_t *o, uint32_t n, const srv_model_t *m) {
  size_t size;
  void *blob = srv_cache_encode(o, n, &size); /* the one copy */
  if (blob == NULL) {
    srv_cache_insert_failed(key, "the response does not fit in memory");
    return;
  }
  insert_job_t *j = malloc(sizeof *j);
  if (j == NULL) SRV_FATAL("out of memory");
  *j = (insert_job_t){.job = {.run = insert_run, .bytes = size}, .c = c, .key = *key,
                      .size = size, .blob = blob};
  if (srv_cache_job_try_push(c, &j->job)) return;
  free(blob);
  free(j);
  SRV_VERBOSE(1,
              "response cache: the cache call queue is full; the response of model "
              "'%s' is not inserted",
              m != NULL ? m->name : "?");
}

void srv_cache_response_sent(TRITONBACKEND_Response *resp) {
  srv_infer_state_t *st = resp->state;
  srv_cache_t *c = st->cache;
  st->cache = NULL;                /* a request inserts at most one response */
  if (resp->error != NULL) return; /* only successes are kept, as in Triton */
  uint64_t start = act_now_ns();
  srv_cache_output_t small[STACK_OUTPUTS], *o = small;
  if (resp->output_count > STACK_OUTPUTS) {
    o = malloc(resp->output_count * sizeof *o);
    if (o == NULL) SRV_FATAL("out of memory");
  }
  bool host = true;
  for (uint32_t i = 0; i < resp->output_count; i++) {
    const struct TRITONBACKEND_Output *x = &resp->outputs[i];
    /* Only host memory is kept (Triton's rule): an output written straight
     * into a client's GPU region is not, nor one the backend never filled. */
    if ((x->in_place && x->shm != NULL &&
         x->shm->memory_type == TRITONSERVER_MEMORY_GPU) ||
        (x->buffer == NULL && x->byte_size != 0))
      host = false;
    o[i] = (srv_cache_output_t){.name = x->name,
                                .datatype = x->datatype,
                                .shape = x->shape,
                                .dims_count = x->dims_count,
                                .data = x->buffer,
                                .byte_size = x->byte_size};
  }
  srv_cache_key_t key = {.hi = st->cache_key_hi, .lo = st->cache_key_lo};
  srv_model_t *m = st->model;
  if (host && srv_cache_is_library(c))
    insert_queue(c, &key, o, resp->output_count, m);
  else if (host)
    insert_local(c, &key, o, resp->output_count);
  if (o != small) free(o);
  /* Triton's cache_miss: the lookup and the insertion (for a library, its
   * copy into the queued job: the call itself runs later, off this thread). */
  if (m != NULL)
    srv_duration_add(&srv_stats_mine(&m->stats)->cache_miss,
                     st->cache_lookup_ns + (act_now_ns() - start));
}
