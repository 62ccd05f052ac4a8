/* The sequence scheduler's batches (sequence.md "One step", 3): requests
 * the slots lent out wait here until their instance is idle and every slot
 * of its last batch answered; then one request per slot at its slot's
 * position, padded with "not ready" requests (direct), or the oldest lent
 * requests under the dynamic batcher's rules (oldest). The model actor's. */
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/log.h"
#include "server/model/config_limits.h"
#include "server/model/model.h"
#include "server/model/response.h"
#include "server/sched/reorder.h"
#include "server/sched/scheduler.h"
#include "server/sched/sequence.h"
#include "server/sched/sequence_internal.h"

/* A padding request (direct strategy) and what it points to; owned by the
 * model actor, lent to an instance, back when released. */
typedef struct srv_seq_null {
  TRITONBACKEND_Request r;
  struct srv_seq_null *next_free;
  struct TRITONBACKEND_Input *inputs;
  srv_buffer_t *buffers;
  int64_t *shapes; /* (SRV_CONFIG_DIMS_MAX + 1) per input */
  uint32_t input_cap;
  void *zeros;
  uint64_t zeros_cap;
  srv_seq_extra_t extra;
} srv_seq_null_t;

/* Marks a padding request's state: its answers are dropped here. */
static char padding_mark;

/* ---- padding requests ---------------------------------------------------- */

bool srv_seq_padding_answer(act_msg_t *msg) {
  srv_infer_state_t *state = msg->kind == SRV_MSG_INFER_RESPONSE
                                 ? ((TRITONBACKEND_Response *)msg)->state
                                 : ((srv_final_msg_t *)msg)->state;
  if (state->owner_data != &padding_mark) return false;
  if (msg->kind == SRV_MSG_INFER_RESPONSE) {
    srv_response_free((TRITONBACKEND_Response *)msg);
  } else {
    srv_final_msg_t *f = (srv_final_msg_t *)msg;
    srv_infer_state_unref(f->state);
    act_msg_free(msg);
  }
  return true;
}

static srv_seq_null_t *null_get(srv_model_t *m, srv_seq_instance_t *si) {
  srv_seq_null_t *n = si->null_free;
  if (n != NULL) {
    si->null_free = n->next_free;
    return n;
  }
  n = calloc(1, sizeof *n);
  if (n == NULL) SRV_FATAL("out of memory");
  n->r.state = srv_infer_state_new(&m->actor);
  n->r.state->owner_data = &padding_mark;
  srv_seq_extra_init(&n->extra, &m->seq->config);
  si->null_count++;
  return n;
}

/* Grows n's storage to `like`'s inputs and its largest tensor's zeros. */
static void null_size(srv_seq_null_t *n, const TRITONBACKEND_Request *like) {
  if (like->input_count > n->input_cap) {
    free(n->inputs);
    free(n->buffers);
    free(n->shapes);
    n->input_cap = like->input_count;
    n->inputs = calloc(n->input_cap, sizeof *n->inputs);
    n->buffers = calloc(n->input_cap, sizeof *n->buffers);
    n->shapes =
        calloc((size_t)n->input_cap * (SRV_CONFIG_DIMS_MAX + 1), sizeof *n->shapes);
    if (n->inputs == NULL || n->buffers == NULL || n->shapes == NULL)
      SRV_FATAL("out of memory");
  }
  uint64_t largest = 0;
  for (uint32_t i = 0; i < like->input_count; i++)
    if (like->inputs[i].byte_size > largest) largest = like->inputs[i].byte_size;
  for (uint32_t i = 0; i < like->extra_count; i++)
    if (like->extra_inputs[i].byte_size > largest)
      largest = like->extra_inputs[i].byte_size;
  if (largest > n->zeros_cap || n->zeros == NULL) {
    free(n->zeros);
    n->zeros = calloc(1, largest ? largest : 1);
    if (n->zeros == NULL) SRV_FATAL("out of memory");
    n->zeros_cap = largest;
  }
}

/* A padding request shaped like `like`: the same inputs, zeros for data
 * (empty strings for BYTES), the model's default outputs. */
static TRITONBACKEND_Request *null_make(srv_model_t *m, srv_seq_instance_t *si,
                                        const TRITONBACKEND_Request *like) {
  srv_seq_null_t *n = null_get(m, si);
  null_size(n, like);
  for (uint32_t i = 0; i < like->input_count; i++) {
    const struct TRITONBACKEND_Input *src = &like->inputs[i];
    int64_t *shape = &n->shapes[(size_t)i * (SRV_CONFIG_DIMS_MAX + 1)];
    uint32_t dims = src->dims_count <= SRV_CONFIG_DIMS_MAX + 1 ? src->dims_count : 0;
    memcpy(shape, src->shape, dims * sizeof *shape);
    uint64_t size = src->byte_size;
    if (src->datatype == TRITONSERVER_TYPE_BYTES) {
      uint64_t count = 1;
      for (uint32_t d = 0; d < dims; d++) count *= (uint64_t)shape[d];
      size = 4 * count; /* as many empty strings; never more than the original */
    }
    n->buffers[i] = (srv_buffer_t){.base = n->zeros, .size = size};
    n->inputs[i] = (struct TRITONBACKEND_Input){
        .name = src->name,
        .datatype = src->datatype,
        .shape = shape,
        .dims_count = dims,
        .byte_size = size,
        .buffers = &n->buffers[i],
        .buffer_count = 1,
    };
  }
  TRITONBACKEND_Request *r = &n->r;
  srv_infer_state_t *state = r->state;
  memset(r, 0, sizeof *r);
  r->state = state;
  r->model = m;
  r->id = "";
  r->inputs = n->inputs;
  r->input_count = like->input_count;
  r->outputs = m->output_names;
  r->output_count = m->output_count;
  r->batch_size = 1;
  r->seq_padding = true;
  atomic_init(&r->released, false);
  srv_seq_padding_fill(m, &n->extra, r, like, n->zeros);
  return r;
}

void srv_seq_padding_back(TRITONBACKEND_Request *r) {
  srv_seq_null_t *n = (srv_seq_null_t *)r;
  srv_seq_instance_t *si = (srv_seq_instance_t *)r->seq_slot;
  n->next_free = si->null_free;
  si->null_free = n;
}

void srv_seq_nulls_free(srv_seq_instance_t *si) {
  srv_seq_null_t *n;
  while ((n = si->null_free) != NULL) {
    si->null_free = n->next_free;
    srv_infer_state_unref(n->r.state);
    srv_seq_extra_release(&n->extra);
    free(n->inputs);
    free(n->buffers);
    free(n->shapes);
    free(n->zeros);
    free(n);
  }
}

/* ---- batches ------------------------------------------------------------- */

static void instance_run(srv_model_t *m, srv_instance_t *inst, uint32_t count) {
  srv_seq_instance_t *si = srv_seq_inst_of(m, inst);
  si->idle = false;
  m->idle_count--;
  inst->batch_count = count;
  /* With the rate limiter the batch waits for its grant (rate_limiter.md);
   * it is never withdrawn: its requests belong to the slots, and a stop
   * lets it run as it lets a running batch finish. */
  if (inst->rl_ticket == NULL)
    act_send(&inst->actor, &inst->execute_msg);
  else
    srv_rl_ask(m->rl, inst->rl_ticket);
}

static void lent_take(srv_seq_instance_t *si, TRITONBACKEND_Request *r, uint32_t pos) {
  r->seq_dispatched = true;
  si->batch_slots[pos] = r->seq_slot;
  si->pending++;
}

/* Direct: positions 0 .. the highest slot with a lent request, the gaps
 * padded, once the slot utilization or the delay says so. */
static uint64_t direct_dispatch(srv_model_t *m, srv_instance_t *inst, uint64_t now) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  srv_seq_instance_t *si = srv_seq_inst_of(m, inst);
  uint32_t per = s->config.slots_per_instance;
  srv_seq_slot_t *slots = &s->slots[(size_t)inst->index * per];
  int64_t top = -1;
  uint32_t ready = 0;
  uint64_t oldest = UINT64_MAX;
  const TRITONBACKEND_Request *like = NULL;
  for (uint32_t k = 0; k < per; k++) {
    TRITONBACKEND_Request *r = slots[k].offered;
    if (r == NULL) continue;
    top = k;
    ready++;
    if (like == NULL) like = r;
    if (r->queue_start_ns < oldest) oldest = r->queue_start_ns;
  }
  if (top < 0) return 0;
  const srv_seq_config_t *c = &s->config;
  if (c->direct_delay_ns > 0 && c->min_slot_utilization > 0.0f &&
      now - oldest < c->direct_delay_ns &&
      (float)ready / (float)per < c->min_slot_utilization) {
    uint64_t at = oldest + c->direct_delay_ns;
    return at < oldest ? UINT64_MAX : at;
  }
  for (uint32_t k = 0; k <= (uint32_t)top; k++) {
    TRITONBACKEND_Request *r = slots[k].offered;
    if (r != NULL) {
      slots[k].offered = NULL;
      inst->batch[k] = r;
      lent_take(si, r, k);
    } else {
      TRITONBACKEND_Request *pad = null_make(m, si, like);
      pad->seq_slot = (srv_seq_slot_t *)si; /* where it goes back */
      inst->batch[k] = pad;
      si->batch_slots[k] = NULL;
    }
  }
  instance_run(m, inst, (uint32_t)top + 1);
  return 0;
}

/* Oldest: the dynamic batcher's rules over the instance's lent requests,
 * with one shortcut of ours: when every sequence bound to the instance has
 * its request waiting (and none waits in the backlog), only a sequence not
 * started yet could join, so the batch does not wait for the delay (at one
 * sequence, Triton's waits the whole max_queue_delay_microseconds). */
static uint64_t oldest_dispatch(srv_model_t *m, srv_instance_t *inst, uint64_t now) {
  srv_seq_instance_t *si = srv_seq_inst_of(m, inst);
  uint64_t wait_until = 0;
  bool all_in = si->ready.count >= si->bound && m->seq->backlog_count == 0;
  uint32_t n = srv_batcher_take_from(m, &si->ready, inst, now, all_in, &wait_until);
  if (n == 0) return wait_until;
  for (uint32_t i = 0; i < n; i++) {
    lent_take(si, inst->batch[i], i);
    if (m->batcher.preserve_ordering) srv_reorder_track(m, inst->batch[i]->state);
  }
  instance_run(m, inst, n);
  return 0;
}

void srv_seq_dispatch(srv_model_t *m) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  uint64_t now = act_now_ns();
  uint64_t next = srv_seq_idle_deadline(s);
  if (!m->stopping)
    for (uint32_t i = 0; i < m->instance_count; i++) {
      srv_instance_t *inst = m->instances[i];
      srv_seq_instance_t *si = &s->instances[i];
      if (!inst->started || !si->idle || si->pending != 0) continue;
      uint64_t at = s->config.strategy == SRV_SEQ_DIRECT ? direct_dispatch(m, inst, now)
                                                         : oldest_dispatch(m, inst, now);
      if (at != 0 && (next == 0 || at < next)) next = at;
    }
  srv_scheduler_timer_want(m, next);
}

/* ---- lent requests ------------------------------------------------------ */

void srv_seq_offered(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_slot_t *slot = r->seq_slot;
  if (m->stopping) {
    srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE,
                     "model '%s' version %lld is unloading", m->name,
                     (long long)m->version);
    return;
  }
  r->queue_start_ns = act_now_ns();
  if (m->seq->config.strategy == SRV_SEQ_DIRECT) {
    slot->offered = r;
  } else {
    srv_seq_instance_t *si = srv_seq_inst_of(m, slot->inst);
    srv_queue_push(&si->ready, r, r->queue_start_ns);
  }
}
