/* Dynamic batching (see batcher.h). A batch starts with the first request
 * in service order and takes the ones after it while the batch stays
 * within max_batch_size and their shapes match. It goes out at once when
 * it is full or reached the largest preferred size, or when nothing more
 * could join it; otherwise it waits until its oldest request has waited
 * max_queue_delay. Then it goes out at the largest preferred size it
 * covers, or whole. Batches form only when an instance is idle, so a busy
 * model batches more without any delay configured, as in Triton. */
#include "server/sched/batcher.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/model/config_limits.h"
#include "server/model/model.h"

#define INVALID(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static void policy_read(const inference_ModelQueuePolicy *p, srv_queue_policy_t *out) {
  memset(out, 0, sizeof *out);
  if (p == NULL) return;
  uint64_t us = inference_ModelQueuePolicy_default_timeout_microseconds(p);
  out->timeout_ns = us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000;
  out->allow_override = inference_ModelQueuePolicy_allow_timeout_override(p);
  out->delay =
      inference_ModelQueuePolicy_timeout_action(p) == inference_ModelQueuePolicy_DELAY;
  out->max_size = inference_ModelQueuePolicy_max_queue_size(p); /* uint32, 0: none */
}

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static srv_status_t *preferred_read(srv_model_t *m,
                                    const inference_ModelDynamicBatching *db) {
  srv_batcher_t *b = &m->batcher;
  size_t n;
  const int32_t *sizes = inference_ModelDynamicBatching_preferred_batch_size(db, &n);
  if (n == 0) return NULL;
  b->preferred = calloc(n, sizeof *b->preferred);
  if (b->preferred == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    if (sizes[i] < 1)
      return INVALID("model '%s': dynamic batching preferred size %d must be positive",
                     m->name, (int)sizes[i]);
    if ((uint32_t)sizes[i] > b->max_batch)
      return INVALID(
          "model '%s': dynamic batching preferred size %d exceeds max_batch_size %d",
          m->name, (int)sizes[i], (int)m->max_batch_size);
    b->preferred[b->preferred_count++] = (uint32_t)sizes[i];
  }
  qsort(b->preferred, b->preferred_count, sizeof *b->preferred, u32_cmp);
  return NULL;
}

/* Levels and policies; the queue is set up only when all of it is valid.
 * Both numbers are uint64 in the config: they are compared as read, and
 * the level count is narrowed only once it is known to be within
 * SRV_CONFIG_PRIORITY_LEVELS_MAX. */
static srv_status_t *levels_read(srv_model_t *m,
                                 const inference_ModelDynamicBatching *db) {
  uint64_t levels = db != NULL ? inference_ModelDynamicBatching_priority_levels(db) : 0;
  uint64_t def =
      db != NULL ? inference_ModelDynamicBatching_default_priority_level(db) : 0;
  if (levels > SRV_CONFIG_PRIORITY_LEVELS_MAX)
    return INVALID("model '%s': priority_levels %llu is above the limit of %u", m->name,
                   (unsigned long long)levels, SRV_CONFIG_PRIORITY_LEVELS_MAX);
  if (levels > 0 && (def < 1 || def > levels))
    return INVALID(
        "model '%s': default_priority_level %llu must be in [1, priority_levels %llu]",
        m->name, (unsigned long long)def, (unsigned long long)levels);
  if (levels == 0 && def != 0)
    return INVALID("model '%s': default_priority_level %llu needs priority_levels",
                   m->name, (unsigned long long)def);
  srv_queue_policy_t policy;
  policy_read(db != NULL ? inference_ModelDynamicBatching_default_queue_policy(db) : NULL,
              &policy);
  size_t iter = kUpb_Map_Begin;
  const inference_ModelDynamicBatching_PriorityQueuePolicyEntry *e;
  while (db != NULL && (e = inference_ModelDynamicBatching_priority_queue_policy_next(
                            db, &iter)) != NULL) {
    uint64_t key = inference_ModelDynamicBatching_PriorityQueuePolicyEntry_key(e);
    if (key < 1 || key > levels)
      return INVALID(
          "model '%s': priority_queue_policy for level %llu, outside [1, priority_levels "
          "%llu]",
          m->name, (unsigned long long)key, (unsigned long long)levels);
  }
  srv_queue_init(&m->queue, (uint32_t)levels, levels > 0 ? (uint32_t)def - 1 : 0,
                 &policy);
  iter = kUpb_Map_Begin;
  while (db != NULL && (e = inference_ModelDynamicBatching_priority_queue_policy_next(
                            db, &iter)) != NULL) {
    uint64_t key = inference_ModelDynamicBatching_PriorityQueuePolicyEntry_key(e);
    policy_read(inference_ModelDynamicBatching_PriorityQueuePolicyEntry_value(e),
                &m->queue.levels[key - 1].policy);
  }
  return NULL;
}

srv_status_t *srv_batcher_setup(srv_model_t *m) {
  srv_batcher_t *b = &m->batcher;
  memset(b, 0, sizeof *b);
  const inference_ModelDynamicBatching *db =
      inference_ModelConfig_dynamic_batching(m->config);
  b->dynamic = db != NULL;
  b->max_batch = m->max_batch_size > 0 ? (uint32_t)m->max_batch_size : 1;
  if (db != NULL) {
    uint64_t us = inference_ModelDynamicBatching_max_queue_delay_microseconds(db);
    b->max_delay_ns = us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000;
    b->preserve_ordering = inference_ModelDynamicBatching_preserve_ordering(db);
    srv_status_t *st = preferred_read(m, db);
    if (st != NULL) {
      srv_batcher_free(m);
      return st;
    }
  }
  srv_status_t *st = levels_read(m, db);
  if (st != NULL) srv_batcher_free(m);
  return st;
}

void srv_batcher_free(srv_model_t *m) {
  free(m->batcher.preferred);
  m->batcher.preferred = NULL;
  m->batcher.preferred_count = 0;
  if (m->queue.levels != NULL) srv_queue_free(&m->queue);
}

/* Requests batch together when they give the same inputs with the same
 * shapes past the batch dimension (except inputs that allow ragged
 * batches). Input names are the model's own strings, so pointers compare. */
static bool shapes_match(const srv_model_t *m, const TRITONBACKEND_Request *a,
                         const TRITONBACKEND_Request *b) {
  if (a->input_count != b->input_count) return false;
  uint32_t skip = m->max_batch_size > 0 ? 1 : 0;
  for (uint32_t i = 0; i < a->input_count; i++) {
    const struct TRITONBACKEND_Input *x = &a->inputs[i], *y = NULL;
    for (uint32_t j = 0; j < b->input_count && y == NULL; j++)
      if (b->inputs[j].name == x->name) y = &b->inputs[j];
    if (y == NULL) return false;
    if (srv_model_input_ragged(m, x->name)) continue;
    if (x->dims_count != y->dims_count) return false;
    for (uint32_t d = skip; d < x->dims_count; d++)
      if (x->shape[d] != y->shape[d]) return false;
  }
  return true;
}

/* A binary search of the ascending list: it runs once per request taken. */
static bool is_preferred(const srv_batcher_t *b, uint32_t size) {
  return b->preferred_count > 0 && bsearch(&size, b->preferred, b->preferred_count,
                                           sizeof *b->preferred, u32_cmp) != NULL;
}

/* Room for a batch's first requests; it doubles as batches grow. */
enum { ROOM_FIRST = 8 };

void srv_batcher_room_init(srv_model_t *m, srv_instance_t *inst) {
  inst->batch_cap = m->batcher.max_batch < ROOM_FIRST ? m->batcher.max_batch : ROOM_FIRST;
  inst->batch = calloc(inst->batch_cap, sizeof *inst->batch);
  if (inst->batch == NULL) SRV_FATAL("out of memory");
}

/* Makes room for request `count` + 1 (count < max_batch). */
static TRITONBACKEND_Request **room(const srv_batcher_t *b, srv_instance_t *inst,
                                    uint32_t count) {
  if (count < inst->batch_cap) return inst->batch;
  uint32_t cap = inst->batch_cap > b->max_batch / 2 ? b->max_batch : 2 * inst->batch_cap;
  TRITONBACKEND_Request **bigger = realloc(inst->batch, cap * sizeof *bigger);
  if (bigger == NULL) SRV_FATAL("out of memory");
  inst->batch = bigger;
  inst->batch_cap = cap;
  return bigger;
}

/* When a batch that waits for more gives up: its oldest request's wait plus
 * the delay, saturated (the delay is bounded at load, the sum kept safe). */
static uint64_t wait_end(uint64_t oldest, uint64_t delay) {
  return oldest > UINT64_MAX - delay ? UINT64_MAX : oldest + delay;
}

uint32_t srv_batcher_take(srv_model_t *m, srv_instance_t *inst, uint64_t now_ns,
                          uint64_t *wait_until_ns) {
  return srv_batcher_take_from(m, &m->queue, inst, now_ns, false, wait_until_ns);
}

uint32_t srv_batcher_take_from(srv_model_t *m, srv_queue_t *q, srv_instance_t *inst,
                               uint64_t now_ns, bool nothing_more,
                               uint64_t *wait_until_ns) {
  const srv_batcher_t *b = &m->batcher;
  *wait_until_ns = 0;
  TRITONBACKEND_Request *first = srv_queue_first(q);
  if (first == NULL) return 0;
  TRITONBACKEND_Request **out = inst->batch;
  if (!b->dynamic) { /* the default scheduler: one request per execution */
    srv_queue_remove(q, first);
    out[0] = first;
    return 1;
  }
  uint32_t count = 0, size = 0, best_count = 0;
  uint64_t oldest = first->queue_start_ns;
  bool closed = false; /* nothing more can join this batch */
  TRITONBACKEND_Request *r = first;
  for (; r != NULL; r = srv_queue_next(q, r)) {
    if (size + r->batch_size > b->max_batch ||
        (count > 0 && !shapes_match(m, first, r))) {
      closed = true;
      break;
    }
    size += r->batch_size;
    out = room(b, inst, count);
    out[count++] = r;
    if (r->queue_start_ns < oldest) oldest = r->queue_start_ns;
    if (is_preferred(b, size)) best_count = count;
    if (size == b->max_batch) {
      closed = true;
      break;
    }
  }
  uint32_t largest = b->preferred_count ? b->preferred[b->preferred_count - 1] : 0;
  bool ready = closed || nothing_more || (largest != 0 && size >= largest) ||
               b->max_delay_ns == 0 || now_ns - oldest >= b->max_delay_ns;
  if (!ready) {
    *wait_until_ns = wait_end(oldest, b->max_delay_ns);
    return 0;
  }
  if (best_count != 0 && size != b->max_batch) count = best_count;
  for (uint32_t i = 0; i < count; i++) srv_queue_remove(q, out[i]);
  return count;
}
