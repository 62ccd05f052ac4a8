/* The model actor's request queue: one FIFO per priority level, each with
 * its queue policy (max size, timeout, REJECT or DELAY on timeout), and a
 * min-heap of timeout deadlines so expiry costs O(log n). Requests are
 * linked through their own fields (next, prev, heap_slot): no allocation
 * per request. The model actor's alone. */
#ifndef NEREID_SERVER_SCHED_QUEUE_H
#define NEREID_SERVER_SCHED_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/model/request.h"

typedef struct {
  uint64_t timeout_ns; /* default queue timeout; 0: none */
  uint32_t max_size;   /* 0: unbounded */
  bool allow_override; /* a request's `timeout` may shorten timeout_ns */
  bool delay;          /* on timeout: DELAY (true) or REJECT (false) */
} srv_queue_policy_t;

typedef struct {
  srv_queue_policy_t policy;
  TRITONBACKEND_Request *head, *tail;                 /* waiting, arrival order */
  TRITONBACKEND_Request *delayed_head, *delayed_tail; /* timed out, DELAY */
  uint32_t count;                                     /* both lists */
} srv_queue_level_t;

typedef struct {
  srv_queue_level_t *levels; /* index 0 is priority 1 (served first) */
  uint32_t level_count;
  uint32_t default_level; /* index of the default priority level */
  uint32_t count;         /* requests in all levels */
  /* Each level's count, published for the metrics endpoint (relaxed
   * stores here, relaxed loads by any thread through srv_stats_t). */
  _Atomic uint64_t *depth;
  TRITONBACKEND_Request **heap; /* by timeout_at_ns */
  uint32_t heap_len, heap_cap;
} srv_queue_t;

/** One level per priority (at least one), every level with `policy`. */
void srv_queue_init(srv_queue_t *q, uint32_t level_count, uint32_t default_level,
                    const srv_queue_policy_t *policy);
void srv_queue_free(srv_queue_t *q);

/** The level index of a request priority (0 or out of range: default). */
uint32_t srv_queue_level_of(const srv_queue_t *q, uint32_t priority);

/** Appends r to its level; false when that level is full (r untouched). */
bool srv_queue_push(srv_queue_t *q, TRITONBACKEND_Request *r, uint64_t now_ns);

/** Takes r (queued) out of the queue. */
void srv_queue_remove(srv_queue_t *q, TRITONBACKEND_Request *r);

/** The first request of the levels from `from` on, in service order. */
static inline TRITONBACKEND_Request *srv_queue_level_first(const srv_queue_t *q,
                                                           uint32_t from) {
  for (uint32_t i = from; i < q->level_count; i++) {
    if (q->levels[i].head != NULL) return q->levels[i].head;
    if (q->levels[i].delayed_head != NULL) return q->levels[i].delayed_head;
  }
  return NULL;
}

/** Service order: levels in priority order; in each, waiting requests in
 *  arrival order, then delayed ones. NULL at the end. Inline: read on each
 *  batch taken (issue 21). */
static inline TRITONBACKEND_Request *srv_queue_first(const srv_queue_t *q) {
  return q->count == 0 ? NULL : srv_queue_level_first(q, 0);
}
TRITONBACKEND_Request *srv_queue_next(const srv_queue_t *q,
                                      const TRITONBACKEND_Request *r);

/** Handles every request whose timeout passed by now: DELAY moves it behind
 *  its level's waiting requests; REJECT takes it out and hands it to
 *  `rejected`. */
void srv_queue_expire_due(srv_queue_t *q, uint64_t now_ns,
                          void (*rejected)(void *ctx, TRITONBACKEND_Request *r),
                          void *ctx);
/* Inline: most calls find nothing due (two dispatches per request). */
static inline void srv_queue_expire(srv_queue_t *q, uint64_t now_ns,
                                    void (*rejected)(void *ctx, TRITONBACKEND_Request *r),
                                    void *ctx) {
  if (q->heap_len > 0 && q->heap[0]->timeout_at_ns <= now_ns)
    srv_queue_expire_due(q, now_ns, rejected, ctx);
}

/** Calls fn on each request that arrived (queue_start_ns) by cutoff_ns and
 *  returns the earliest arrival after it (0: none). A level's waiting list
 *  is in arrival order, so it is walked only up to its first younger
 *  request (arrivals stamped on other threads may be out of order by
 *  microseconds: such a request is found by the next walk); delayed lists
 *  are walked whole. */
uint64_t srv_queue_each_arrived_by(const srv_queue_t *q, uint64_t cutoff_ns,
                                   void (*fn)(TRITONBACKEND_Request *r));

/** The earliest pending timeout, or 0. */
static inline uint64_t srv_queue_next_timeout(const srv_queue_t *q) {
  return q->heap_len > 0 ? q->heap[0]->timeout_at_ns : 0;
}

#endif
