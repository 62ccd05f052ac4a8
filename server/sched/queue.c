/* Priority levels, queue policies and timeouts (see queue.h). */
#include "server/sched/queue.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

void srv_queue_init(srv_queue_t *q, uint32_t level_count, uint32_t default_level,
                    const srv_queue_policy_t *policy) {
  memset(q, 0, sizeof *q);
  q->level_count = level_count ? level_count : 1;
  q->default_level = default_level < q->level_count ? default_level : 0;
  q->levels = calloc(q->level_count, sizeof *q->levels);
  if (q->levels == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < q->level_count; i++) q->levels[i].policy = *policy;
  q->depth = calloc(q->level_count, sizeof *q->depth);
  if (q->depth == NULL) SRV_FATAL("out of memory");
}

void srv_queue_free(srv_queue_t *q) {
  free(q->levels);
  free((void *)q->depth);
  free(q->heap);
  memset(q, 0, sizeof *q);
}

/* Release: a reader that sees a request in the depth also sees its +1 in
 * the pending gauge, added before the request was sent here (metrics_text.c,
 * depth_snapshot). A plain store on x86. */
static void publish(srv_queue_t *q, uint32_t level) {
  atomic_store_explicit(&q->depth[level], q->levels[level].count, memory_order_release);
}

uint32_t srv_queue_level_of(const srv_queue_t *q, uint32_t priority) {
  /* Triton's rule: priority 1 is the highest; 0 or past the last level
   * means the default level. */
  if (priority == 0 || priority > q->level_count) return q->default_level;
  return priority - 1;
}

/* ---- timeout heap ---- */

static bool heap_less(const TRITONBACKEND_Request *a, const TRITONBACKEND_Request *b) {
  return a->timeout_at_ns < b->timeout_at_ns;
}

static void heap_set(srv_queue_t *q, uint32_t i, TRITONBACKEND_Request *r) {
  q->heap[i] = r;
  r->heap_slot = i + 1;
}

static void heap_up(srv_queue_t *q, uint32_t i) {
  TRITONBACKEND_Request *r = q->heap[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!heap_less(r, q->heap[parent])) break;
    heap_set(q, i, q->heap[parent]);
    i = parent;
  }
  heap_set(q, i, r);
}

static void heap_down(srv_queue_t *q, uint32_t i) {
  TRITONBACKEND_Request *r = q->heap[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= q->heap_len) break;
    if (child + 1 < q->heap_len && heap_less(q->heap[child + 1], q->heap[child])) child++;
    if (!heap_less(q->heap[child], r)) break;
    heap_set(q, i, q->heap[child]);
    i = child;
  }
  heap_set(q, i, r);
}

static void heap_insert(srv_queue_t *q, TRITONBACKEND_Request *r) {
  if (q->heap_len == q->heap_cap) {
    q->heap_cap = q->heap_cap ? 2 * q->heap_cap : 64;
    q->heap = realloc(q->heap, q->heap_cap * sizeof *q->heap);
    if (q->heap == NULL) SRV_FATAL("out of memory");
  }
  q->heap[q->heap_len] = r;
  heap_up(q, q->heap_len++);
}

static void heap_remove(srv_queue_t *q, TRITONBACKEND_Request *r) {
  uint32_t i = r->heap_slot - 1;
  r->heap_slot = 0;
  TRITONBACKEND_Request *last = q->heap[--q->heap_len];
  if (i == q->heap_len) return;
  q->heap[i] = last;
  heap_up(q, i);
  heap_down(q, last->heap_slot - 1);
}

/* ---- lists ---- */

static void list_append(TRITONBACKEND_Request **head, TRITONBACKEND_Request **tail,
                        TRITONBACKEND_Request *r) {
  r->next = NULL;
  r->prev = *tail;
  if (*tail != NULL)
    (*tail)->next = r;
  else
    *head = r;
  *tail = r;
}

static void list_unlink(TRITONBACKEND_Request **head, TRITONBACKEND_Request **tail,
                        TRITONBACKEND_Request *r) {
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    *head = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  else
    *tail = r->prev;
  r->next = r->prev = NULL;
}

/* The request's own timeout replaces the policy's only when allowed, and
 * only to shorten it (an unset policy timeout counts as infinite). */
static uint64_t timeout_ns(const srv_queue_policy_t *p, const TRITONBACKEND_Request *r) {
  uint64_t own = r->timeout_us > UINT64_MAX / 1000 ? UINT64_MAX : r->timeout_us * 1000;
  if (p->allow_override && own != 0 && (p->timeout_ns == 0 || own < p->timeout_ns))
    return own;
  return p->timeout_ns;
}

bool srv_queue_push(srv_queue_t *q, TRITONBACKEND_Request *r, uint64_t now_ns) {
  uint32_t level = srv_queue_level_of(q, r->priority);
  srv_queue_level_t *l = &q->levels[level];
  if (l->policy.max_size != 0 && l->count >= l->policy.max_size) return false;
  r->level = level;
  r->queued = true;
  r->delayed = false;
  r->heap_slot = 0;
  list_append(&l->head, &l->tail, r);
  l->count++;
  q->count++;
  publish(q, level);
  uint64_t t = timeout_ns(&l->policy, r);
  r->timeout_at_ns = t == 0 ? 0 : (now_ns + t < now_ns ? UINT64_MAX : now_ns + t);
  if (r->timeout_at_ns != 0) heap_insert(q, r);
  return true;
}

void srv_queue_remove(srv_queue_t *q, TRITONBACKEND_Request *r) {
  srv_queue_level_t *l = &q->levels[r->level];
  if (r->delayed)
    list_unlink(&l->delayed_head, &l->delayed_tail, r);
  else
    list_unlink(&l->head, &l->tail, r);
  if (r->heap_slot != 0) heap_remove(q, r);
  l->count--;
  q->count--;
  publish(q, r->level);
  r->queued = false;
}

TRITONBACKEND_Request *srv_queue_next(const srv_queue_t *q,
                                      const TRITONBACKEND_Request *r) {
  if (r->next != NULL) return r->next;
  const srv_queue_level_t *l = &q->levels[r->level];
  if (!r->delayed && l->delayed_head != NULL) return l->delayed_head;
  return srv_queue_level_first(q, r->level + 1);
}

static bool any_due(const srv_queue_t *q, uint64_t now_ns) {
  return q->heap_len > 0 && q->heap[0]->timeout_at_ns <= now_ns;
}

/* srv_queue_expire's work, out of line: the common case (nothing due, two
 * dispatches per request) is the inline test in queue.h. */
void srv_queue_expire_due(srv_queue_t *q, uint64_t now_ns,
                          void (*rejected)(void *ctx, TRITONBACKEND_Request *r),
                          void *ctx) {
  while (any_due(q, now_ns)) {
    TRITONBACKEND_Request *r = q->heap[0];
    srv_queue_level_t *l = &q->levels[r->level];
    if (l->policy.delay) {
      /* Delayed requests wait behind the level's others and never expire
       * again. */
      heap_remove(q, r);
      list_unlink(&l->head, &l->tail, r);
      r->delayed = true;
      list_append(&l->delayed_head, &l->delayed_tail, r);
    } else {
      srv_queue_remove(q, r);
      rejected(ctx, r);
    }
  }
}

/* One list up to its first request younger than the cutoff (stop) or whole. */
static uint64_t list_arrived_by(TRITONBACKEND_Request *r, uint64_t cutoff_ns, bool stop,
                                void (*fn)(TRITONBACKEND_Request *r)) {
  uint64_t next = 0;
  for (; r != NULL; r = r->next) {
    if (r->queue_start_ns <= cutoff_ns) {
      fn(r);
    } else {
      if (next == 0 || r->queue_start_ns < next) next = r->queue_start_ns;
      if (stop) break;
    }
  }
  return next;
}

uint64_t srv_queue_each_arrived_by(const srv_queue_t *q, uint64_t cutoff_ns,
                                   void (*fn)(TRITONBACKEND_Request *r)) {
  uint64_t next = 0;
  for (uint32_t i = 0; i < q->level_count; i++) {
    const srv_queue_level_t *l = &q->levels[i];
    uint64_t a = list_arrived_by(l->head, cutoff_ns, true, fn);
    uint64_t b = list_arrived_by(l->delayed_head, cutoff_ns, false, fn);
    if (a != 0 && (next == 0 || a < next)) next = a;
    if (b != 0 && (next == 0 || b < next)) next = b;
  }
  return next;
}
