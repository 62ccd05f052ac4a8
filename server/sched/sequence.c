/* The sequence scheduler's model actor (see sequence.h, sequence.md): it
 * routes requests to the slots of their sequences, keeps the backlog of
 * sequences waiting for a slot, ends sequences idle past
 * max_sequence_idle_microseconds, and forms each idle instance's next
 * batch from what its slots lent out: one request per slot, at its slot's
 * position padded with "not ready" requests (direct), or the oldest lent
 * requests under the dynamic batcher's rules (oldest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/log.h"
#include "server/core/server.h"
#include "server/model/config_limits.h"
#include "server/model/model.h"
#include "server/model/response.h"
#include "server/sched/ensemble.h"
#include "server/sched/reorder.h"
#include "server/sched/scheduler.h"
#include "server/sched/sequence.h"
#include "server/sched/sequence_map.h"

#define ID_PRINT_MAX 96u

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

static srv_seq_sched_t *sched_of(srv_model_t *m) { return m->seq; }

static srv_seq_instance_t *inst_of(srv_model_t *m, const srv_instance_t *inst) {
  return &m->seq->instances[inst->index];
}

static void count(_Atomic uint64_t *counter) {
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* The gauges, after each message (relaxed: readers want a recent value). */
static void gauges_publish(srv_seq_sched_t *s) {
  atomic_store_explicit(&s->stats.active, s->active, memory_order_relaxed);
  atomic_store_explicit(&s->stats.backlog, s->backlog_count, memory_order_relaxed);
}

static void id_print(const TRITONBACKEND_Request *r, char *buf, size_t size) {
  if (r->correlation_id_string != NULL)
    snprintf(buf, size, "%s", r->correlation_id_string);
  else
    snprintf(buf, size, "%llu", (unsigned long long)r->correlation_id);
}

/* ---- free slots: a min-heap on (position, instance) ---------------------- */

/* Direct batches reach the highest busy position, so low positions fill
 * first, spread over the instances. */
static bool slot_before(const srv_seq_slot_t *a, const srv_seq_slot_t *b) {
  return a->index != b->index ? a->index < b->index : a->inst_index < b->inst_index;
}

static void heap_set(srv_seq_sched_t *s, uint32_t i, srv_seq_slot_t *slot) {
  s->free_heap[i] = slot;
  slot->heap_pos = i + 1;
}

static void heap_push(srv_seq_sched_t *s, srv_seq_slot_t *slot) {
  uint32_t i = s->free_count++;
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!slot_before(slot, s->free_heap[parent])) break;
    heap_set(s, i, s->free_heap[parent]);
    i = parent;
  }
  heap_set(s, i, slot);
}

static srv_seq_slot_t *heap_pop(srv_seq_sched_t *s) {
  if (s->free_count == 0) return NULL;
  srv_seq_slot_t *top = s->free_heap[0];
  top->heap_pos = 0;
  srv_seq_slot_t *last = s->free_heap[--s->free_count];
  if (s->free_count == 0) return top;
  uint32_t i = 0;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, best = i;
    srv_seq_slot_t *pick = last;
    if (l < s->free_count && slot_before(s->free_heap[l], pick)) {
      best = l;
      pick = s->free_heap[l];
    }
    if (r < s->free_count && slot_before(s->free_heap[r], pick)) best = r;
    if (best == i) break;
    heap_set(s, i, s->free_heap[best]);
    i = best;
  }
  heap_set(s, i, last);
  return top;
}

/* ---- bound slots by their sequence's last request (idle reaping) ------- */

static void lru_remove(srv_seq_sched_t *s, srv_seq_slot_t *slot) {
  if (slot->lru_prev != NULL)
    slot->lru_prev->lru_next = slot->lru_next;
  else if (s->lru_head == slot)
    s->lru_head = slot->lru_next;
  if (slot->lru_next != NULL)
    slot->lru_next->lru_prev = slot->lru_prev;
  else if (s->lru_tail == slot)
    s->lru_tail = slot->lru_prev;
  slot->lru_prev = slot->lru_next = NULL;
}

static void lru_touch(srv_seq_sched_t *s, srv_seq_slot_t *slot, uint64_t now) {
  lru_remove(s, slot);
  slot->last_ns = now;
  slot->lru_prev = s->lru_tail;
  if (s->lru_tail != NULL)
    s->lru_tail->lru_next = slot;
  else
    s->lru_head = slot;
  s->lru_tail = slot;
}

static uint64_t idle_deadline(const srv_seq_sched_t *s) {
  if (s->lru_head == NULL) return 0;
  uint64_t at = s->lru_head->last_ns + s->config.idle_ns;
  return at < s->lru_head->last_ns ? UINT64_MAX : at;
}

/* ---- padding requests ---------------------------------------------------- */

static void null_answer_free(act_msg_t *msg) {
  if (msg->kind == SRV_MSG_INFER_RESPONSE) {
    srv_response_free((TRITONBACKEND_Response *)msg);
  } else {
    srv_final_msg_t *f = (srv_final_msg_t *)msg;
    srv_infer_state_unref(f->state);
    act_msg_free(msg);
  }
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

/* A padding request shaped like `like`: the same inputs, zeros for data
 * (empty strings for BYTES), the model's default outputs. */
static TRITONBACKEND_Request *null_make(srv_model_t *m, srv_seq_instance_t *si,
                                        const TRITONBACKEND_Request *like) {
  srv_seq_null_t *n = null_get(m, si);
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

static void null_back(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_null_t *n = (srv_seq_null_t *)r;
  (void)m;
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
  srv_seq_instance_t *si = inst_of(m, inst);
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
  srv_seq_sched_t *s = sched_of(m);
  srv_seq_instance_t *si = inst_of(m, inst);
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
  srv_seq_instance_t *si = inst_of(m, inst);
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

/* Every idle instance whose last batch's slots have all answered gets its
 * next batch; the timer is armed for the earliest wait. */
static void dispatch(srv_model_t *m) {
  srv_seq_sched_t *s = sched_of(m);
  uint64_t now = act_now_ns();
  uint64_t next = idle_deadline(s);
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

/* Tells a slot that the sequence it holds ends (idle, its stream left, or
 * it ended in the backlog): what it holds still runs, then it frees
 * itself. A message of its own each time: the slot may have freed itself
 * meanwhile (a cancel), and then ignores it (sequence_slot.c). */
static void slot_end_send(srv_seq_slot_t *slot) {
  act_msg_t *msg = act_msg_alloc(sizeof *msg);
  msg->kind = SRV_SEQ_SLOT_END;
  act_send(&slot->actor, msg);
}

/* ---- routing ------------------------------------------------------------- */

static void slot_send(srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  r->seq_slot = slot;
  r->msg.kind = SRV_SEQ_SLOT_REQUEST;
  act_send(&slot->actor, &r->msg);
}

/* Binds `seq` to a free slot and hands it the requests it gathered. */
static void bind(srv_model_t *m, srv_seq_t *seq, srv_seq_slot_t *slot, uint64_t now) {
  srv_seq_sched_t *s = sched_of(m);
  slot->busy = true;
  s->active++;
  s->instances[slot->inst_index].bound++;
  if (seq->mapped) {
    seq->slot = slot;
    slot->seq = seq;
    lru_touch(s, slot, now);
  }
  if (srv_log_verbose_level() >= 1) {
    char id[ID_PRINT_MAX];
    srv_seq_id_print(seq, id, sizeof id);
    SRV_VERBOSE(1, "model '%s': sequence %s bound to instance '%s' slot %u", m->name, id,
                slot->inst->name, slot->index);
  }
  TRITONBACKEND_Request *r;
  while ((r = seq->backlog_head) != NULL) {
    seq->backlog_head = r->next;
    r->next = NULL;
    r->queued = false;
    slot_send(slot, r);
  }
  seq->backlog_tail = NULL;
  if (!seq->mapped) { /* it ended in the backlog: END, or its stream left */
    srv_seq_free_one(seq);
    slot_end_send(slot); /* after its requests ran */
  }
}

static void backlog_push(srv_seq_sched_t *s, srv_seq_t *seq) {
  seq->backlog_next = NULL;
  if (s->backlog_tail != NULL)
    s->backlog_tail->backlog_next = seq;
  else
    s->backlog_head = seq;
  s->backlog_tail = seq;
  s->backlog_count++;
}

static void backlog_append(srv_seq_t *seq, TRITONBACKEND_Request *r) {
  r->next = NULL;
  r->queued = true; /* a cancel finds it here */
  r->seq_slot = NULL;
  if (seq->backlog_tail != NULL)
    seq->backlog_tail->next = r;
  else
    seq->backlog_head = r;
  seq->backlog_tail = r;
}

static bool reaped_recently(const srv_seq_sched_t *s, const srv_seq_t *key) {
  for (uint32_t i = 0; i < SRV_SEQ_REAPED_KEPT; i++) {
    const srv_seq_t *k = &s->reaped[i].key;
    if ((k->id_string == NULL) != (key->id_string == NULL)) continue;
    if (k->id_string == NULL ? (k->id != 0 && k->id == key->id)
                             : (k->id_len == key->id_len &&
                                memcmp(k->id_string, key->id_string, k->id_len) == 0))
      return true;
  }
  return false;
}

/* Checks a request against the sequence rules; false when it was refused. */
static bool request_check(srv_model_t *m, TRITONBACKEND_Request *r) {
  const srv_seq_control_t *corrid =
      srv_seq_config_control(&m->seq->config, SRV_SEQ_CONTROL_CORRID);
  bool has_id = r->correlation_id_string != NULL ? r->correlation_id_string[0] != '\0'
                                                 : r->correlation_id != 0;
  if (!has_id) {
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "inference request to model '%s' must specify a non-zero or "
                     "non-empty correlation ID",
                     m->name);
    return false;
  }
  if (r->batch_size > 1) {
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "inference request to model '%s' must specify batch-size 1 due to "
                     "requirements of sequence batcher",
                     m->name);
    return false;
  }
  if (corrid != NULL && (corrid->datatype == TRITONSERVER_TYPE_BYTES) !=
                            (r->correlation_id_string != NULL)) {
    char id[ID_PRINT_MAX];
    id_print(r, id, sizeof id);
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "sequence %s to model '%s': the correlation ID is %s, but the "
                     "model's CONTROL_SEQUENCE_CORRID input '%s' is %s",
                     id, m->name,
                     r->correlation_id_string != NULL ? "a string" : "an integer",
                     corrid->name, TRITONSERVER_DataTypeString(corrid->datatype));
    return false;
  }
  return true;
}

static void route(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_sched_t *s = sched_of(m);
  if (m->stopping) {
    srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE,
                     "model '%s' version %lld is unloading", m->name,
                     (long long)m->version);
    return;
  }
  if (!request_check(m, r)) return;
  bool start = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  bool end = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0;
  srv_seq_t key;
  srv_seq_key_of(s->map, r, &key);
  srv_seq_t *seq = srv_seq_map_get(s->map, &key);
  uint64_t now = act_now_ns();
  r->queue_start_ns = now;
  if (seq == NULL && !start) {
    char id[ID_PRINT_MAX];
    id_print(r, id, sizeof id);
    bool reaped = reaped_recently(s, &key);
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "inference request for sequence %s to model '%s' must specify the "
                     "START flag on the first request of the sequence%s",
                     id, m->name,
                     reaped ? " (the sequence was ended after it was idle for longer "
                              "than max_sequence_idle_microseconds)"
                            : "");
    return;
  }
  if (seq != NULL && start) {
    char id[ID_PRINT_MAX];
    id_print(r, id, sizeof id);
    SRV_WARN(
        "sequence %s for model '%s' started again before it ended: the previous "
        "sequence ends here and the new one takes its place",
        id, m->name);
  }
  if (end) count(&s->stats.ended);
  if (seq == NULL) {
    count(&s->stats.started);
    seq = srv_seq_map_add(s->map, &key);
    srv_seq_slot_t *slot = heap_pop(s);
    if (slot == NULL) {
      backlog_push(s, seq);
      if (srv_log_verbose_level() >= 1) {
        char id[ID_PRINT_MAX];
        id_print(r, id, sizeof id);
        SRV_VERBOSE(1, "model '%s': sequence %s waits for a slot (%u in the backlog)",
                    m->name, id, s->backlog_count);
      }
    } else {
      bind(m, seq, slot, now);
    }
  }
  srv_seq_slot_t *slot = seq->slot;
  if (end) srv_seq_map_remove(s->map, seq);
  if (slot == NULL) {
    backlog_append(seq, r);
    return;
  }
  lru_touch(s, slot, now);
  if (end) {
    if (srv_log_verbose_level() >= 1) {
      char id[ID_PRINT_MAX];
      id_print(r, id, sizeof id);
      SRV_VERBOSE(1, "model '%s': sequence %s ends (END)", m->name, id);
    }
    /* The slot frees itself after this request; nothing more comes here. */
    lru_remove(s, slot);
    slot->seq = NULL;
    srv_seq_free_one(seq);
  }
  slot_send(slot, r);
}

/* ---- slots coming back --------------------------------------------------- */

static void slot_freed(srv_model_t *m, srv_seq_slot_t *slot) {
  srv_seq_sched_t *s = sched_of(m);
  if (slot->seq != NULL) { /* it ended itself: a cancel */
    count(&s->stats.cancel_ended);
    srv_seq_t *seq = slot->seq;
    srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
    slot->seq = NULL;
    lru_remove(s, slot);
  }
  slot->busy = false;
  s->active--;
  s->instances[slot->inst_index].bound--;
  if (m->stopping) return;
  srv_seq_t *next = s->backlog_head;
  if (next != NULL) {
    s->backlog_head = next->backlog_next;
    if (s->backlog_head == NULL) s->backlog_tail = NULL;
    s->backlog_count--;
    bind(m, next, slot, act_now_ns());
    return;
  }
  heap_push(s, slot);
}

static void offered(srv_model_t *m, TRITONBACKEND_Request *r) {
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
    srv_seq_instance_t *si = inst_of(m, slot->inst);
    srv_queue_push(&si->ready, r, r->queue_start_ns);
  }
}

/* ---- idle sequences ------------------------------------------------------ */

static void reaped_note(srv_seq_sched_t *s, const srv_seq_t *seq) {
  srv_seq_t *k = &s->reaped[s->reaped_next].key;
  s->reaped_next = (s->reaped_next + 1) % SRV_SEQ_REAPED_KEPT;
  free(k->id_string);
  *k = *seq;
  k->id_string = NULL;
  if (seq->id_string != NULL) {
    k->id_string = malloc(seq->id_len + 1u);
    if (k->id_string == NULL) SRV_FATAL("out of memory");
    memcpy(k->id_string, seq->id_string, seq->id_len + 1u);
  }
}

static void reap(srv_model_t *m, uint64_t now) {
  srv_seq_sched_t *s = sched_of(m);
  srv_seq_slot_t *slot;
  while ((slot = s->lru_head) != NULL && idle_deadline(s) <= now) {
    srv_seq_t *seq = slot->seq;
    char id[ID_PRINT_MAX];
    srv_seq_id_print(seq, id, sizeof id);
    SRV_VERBOSE(1, "model '%s': sequence %s idle for more than %llu us: ended", m->name,
                id, (unsigned long long)(s->config.idle_ns / 1000));
    reaped_note(s, seq);
    count(&s->stats.idle_ended);
    lru_remove(s, slot);
    srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
    slot->seq = NULL;
    slot_end_send(slot);
  }
}

/* ---- cancels ------------------------------------------------------------- */

/* A backlog request was cancelled: as in Triton, its whole sequence ends
 * with it, before it ever held a slot. */
static void backlog_cancel(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_sched_t *s = sched_of(m);
  srv_seq_t *prev_seq = NULL;
  for (srv_seq_t *seq = s->backlog_head; seq != NULL;
       prev_seq = seq, seq = seq->backlog_next) {
    bool here = false;
    for (TRITONBACKEND_Request *x = seq->backlog_head; x != NULL && !here; x = x->next)
      here = x == r;
    if (!here) continue;
    if (prev_seq != NULL)
      prev_seq->backlog_next = seq->backlog_next;
    else
      s->backlog_head = seq->backlog_next;
    if (s->backlog_tail == seq) s->backlog_tail = prev_seq;
    s->backlog_count--;
    count(&s->stats.cancel_ended);
    TRITONBACKEND_Request *x;
    while ((x = seq->backlog_head) != NULL) {
      seq->backlog_head = x->next;
      x->next = NULL;
      x->queued = false;
      if (x == r)
        srv_request_fail(x, TRITONSERVER_ERROR_CANCELLED,
                         "request '%s' for model '%s' was cancelled before it ran", x->id,
                         m->name);
      else
        srv_request_fail(
            x, TRITONSERVER_ERROR_CANCELLED,
            "model '%s': the sequence was cancelled: one of its requests was", m->name);
    }
    srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
    return;
  }
}

/* The owner keeps r and its state while the cancel is out (request.h). */
static void cancel(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_sched_t *s = sched_of(m);
  act_actor_t *owner = r->state->owner;
  if (r->queued && r->seq_slot == NULL) { /* in the backlog */
    backlog_cancel(m, r);
    r->cancel_msg.kind = SRV_MSG_INFER_CANCEL_DONE;
    act_send(owner, &r->cancel_msg);
    return;
  }
  srv_seq_slot_t *slot = r->seq_slot;
  if (slot == NULL || s->stop_sent) {
    r->cancel_msg.kind = SRV_MSG_INFER_CANCEL_DONE;
    act_send(owner, &r->cancel_msg);
    return;
  }
  /* The slot decides whether r still belongs to its sequence; the cancel
   * goes first, so it sees r as lent when r comes back refused below. */
  bool waiting_here = slot->offered == r || r->queued;
  act_send(&slot->actor, &r->cancel_msg);
  if (!waiting_here) return;
  if (slot->offered == r) {
    slot->offered = NULL;
  } else {
    srv_seq_instance_t *si = inst_of(m, slot->inst);
    srv_queue_remove(&si->ready, r);
  }
  srv_request_fail(r, TRITONSERVER_ERROR_CANCELLED,
                   "request '%s' for model '%s' was cancelled before it ran", r->id,
                   m->name);
}

/* ---- sequences whose client left ------------------------------------------ */

typedef struct {
  act_msg_t msg;
  uint64_t id;
  uint32_t id_len;
  bool is_string;
  char id_string[]; /* id_len bytes and a NUL */
} seq_end_msg_t;

void srv_model_sequence_end(srv_model_t *m, uint64_t id, const char *id_string) {
  if (m->ens != NULL) { /* its steps' sequence models hold the sequence */
    srv_ensemble_sequence_end(m, id, id_string);
    return;
  }
  size_t len = id_string != NULL ? strlen(id_string) : 0;
  seq_end_msg_t *e = act_msg_alloc(sizeof *e + len + 1);
  e->msg.kind = SRV_MODEL_SEQ_END;
  e->id = id;
  e->id_len = (uint32_t)len;
  e->is_string = id_string != NULL;
  if (id_string != NULL) memcpy(e->id_string, id_string, len + 1);
  if (!srv_model_send(m, &e->msg)) act_msg_free(&e->msg); /* stopped: nothing to end */
}

/* Like the idle timeout, but now: a bound sequence's slot ends it once
 * what it holds ran; a backlog sequence keeps its requests, ends after them. */
static void sequence_end(srv_model_t *m, seq_end_msg_t *e) {
  srv_seq_sched_t *s = sched_of(m);
  TRITONBACKEND_Request key_request = {
      .correlation_id = e->id,
      .correlation_id_string = e->is_string ? e->id_string : NULL};
  srv_seq_t key;
  srv_seq_key_of(s->map, &key_request, &key);
  srv_seq_t *seq = m->stopping ? NULL : srv_seq_map_get(s->map, &key);
  act_msg_free(&e->msg);
  if (seq == NULL) return;
  count(&s->stats.stream_ended);
  srv_seq_map_remove(s->map, seq);
  srv_seq_slot_t *slot = seq->slot;
  if (slot == NULL) return; /* in the backlog: bind() ends it after its requests */
  lru_remove(s, slot);
  slot->seq = NULL;
  srv_seq_free_one(seq);
  slot_end_send(slot);
}

/* ---- stopping ------------------------------------------------------------ */

static void stop_begin(srv_model_t *m) {
  srv_seq_sched_t *s = sched_of(m);
  bool exiting = srv_server_cancelling(m->server);
  TRITONSERVER_Error_Code code =
      exiting ? TRITONSERVER_ERROR_CANCELLED : TRITONSERVER_ERROR_UNAVAILABLE;
  const char *why = exiting ? "request cancelled, the server's exit timeout expired"
                            : "the model is unloading";
  srv_seq_t *seq;
  while ((seq = s->backlog_head) != NULL) {
    s->backlog_head = seq->backlog_next;
    TRITONBACKEND_Request *r;
    while ((r = seq->backlog_head) != NULL) {
      seq->backlog_head = r->next;
      r->queued = false;
      srv_request_fail(r, code, "model '%s': %s", m->name, why);
    }
    if (seq->mapped) srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
  }
  s->backlog_tail = NULL;
  s->backlog_count = 0;
  for (uint32_t i = 0; i < s->slot_count; i++) {
    srv_seq_slot_t *slot = &s->slots[i];
    slot->drain_msg.kind = SRV_SEQ_SLOT_DRAIN;
    act_send(&slot->actor, &slot->drain_msg);
  }
  s->drain_sent = true;
  /* Lent requests waiting for a batch are refused; they go back to their
   * slots, which are draining now. */
  for (uint32_t i = 0; i < s->slot_count; i++) {
    srv_seq_slot_t *slot = &s->slots[i];
    if (slot->offered != NULL) {
      TRITONBACKEND_Request *r = slot->offered;
      slot->offered = NULL;
      srv_request_fail(r, code, "model '%s': %s", m->name, why);
    }
  }
  for (uint32_t i = 0; i < m->instance_count; i++) {
    srv_queue_t *q = &s->instances[i].ready;
    TRITONBACKEND_Request *r;
    while ((r = srv_queue_first(q)) != NULL) {
      srv_queue_remove(q, r);
      srv_request_fail(r, code, "model '%s': %s", m->name, why);
    }
  }
}

/* Slots drain (nothing lent), instances go idle, then the slots get their
 * final message, then the model closes as every scheduler does. */
static void try_finish(srv_model_t *m) {
  srv_seq_sched_t *s = sched_of(m);
  if (!m->stopping || s->drained < s->slot_count || m->idle_count != m->started_count)
    return;
  if (!s->stop_sent) {
    s->stop_sent = true;
    for (uint32_t i = 0; i < s->slot_count; i++) {
      srv_seq_slot_t *slot = &s->slots[i];
      slot->stop_msg.kind = SRV_SEQ_SLOT_STOP;
      act_send_stop(&slot->actor, &slot->stop_msg);
    }
    return;
  }
  if (s->gone < s->slot_count) return;
  srv_scheduler_close(m);
}

/* ---- the behaviour ------------------------------------------------------- */

static void step_answered(srv_model_t *m, srv_seq_slot_t *slot) {
  inst_of(m, slot->inst)->pending--;
}

void srv_seq_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_model_t *m = act_actor_state(self);
  srv_seq_sched_t *s = sched_of(m);
  switch (msg->kind) {
    case SRV_MODEL_REQUEST: /* nothing to batch yet: the slot lends it */
      /* Slots hold requests out of the swept queue: a lazy owner watches
       * from now on. */
      srv_request_watch_ask(((TRITONBACKEND_Request *)msg)->state);
      route(m, (TRITONBACKEND_Request *)msg);
      gauges_publish(s);
      return;
    case SRV_SEQ_OFFER_AFTER_STEP:
      step_answered(m, ((TRITONBACKEND_Request *)msg)->seq_slot);
      /* fall through */
    case SRV_SEQ_OFFER:
      offered(m, (TRITONBACKEND_Request *)msg);
      break;
    case SRV_SEQ_VACANT_AFTER_STEP:
      step_answered(
          m, (srv_seq_slot_t *)((char *)msg - offsetof(srv_seq_slot_t, vacant_msg)));
      break;
    case SRV_SEQ_FREED_AFTER_STEP:
    case SRV_SEQ_FREED: {
      srv_seq_slot_t *slot =
          (srv_seq_slot_t *)((char *)msg - offsetof(srv_seq_slot_t, freed_msg));
      if (msg->kind == SRV_SEQ_FREED_AFTER_STEP) step_answered(m, slot);
      slot_freed(m, slot);
      break;
    }
    case SRV_MODEL_INSTANCE_IDLE: {
      srv_instance_t *inst =
          (srv_instance_t *)((char *)msg - offsetof(srv_instance_t, idle_msg));
      inst_of(m, inst)->idle = true;
      m->idle_count++;
      break;
    }
    case SRV_MODEL_CANCEL:
      cancel(m, (TRITONBACKEND_Request *)((char *)msg -
                                          offsetof(TRITONBACKEND_Request, cancel_msg)));
      break;
    case SRV_MODEL_TIMER:
      m->timer_at = 0;
      m->timer_flying = false;
      if (!m->stopping) reap(m, act_now_ns());
      break;
    case SRV_MSG_INFER_RESPONSE:
    case SRV_MSG_INFER_FINAL_FLAGS: {
      srv_infer_state_t *state = msg->kind == SRV_MSG_INFER_RESPONSE
                                     ? ((TRITONBACKEND_Response *)msg)->state
                                     : ((srv_final_msg_t *)msg)->state;
      if (state->owner_data == &padding_mark)
        null_answer_free(msg);
      else
        srv_reorder_receive(m, msg);
      return;
    }
    case SRV_MSG_INFER_RELEASED: /* a padding request */
      null_back(m, (TRITONBACKEND_Request *)msg);
      break;
    case SRV_SEQ_DRAINED:
      s->drained++;
      break;
    case SRV_SEQ_GONE:
      s->gone++;
      break;
    case SRV_MODEL_SEQ_END:
      sequence_end(m, (seq_end_msg_t *)msg);
      break;
    case SRV_MODEL_STOP:
      m->stopping = true;
      stop_begin(m);
      break;
    case SRV_MODEL_STOP_RETRY:
      m->retry_sent = false;
      break;
    case SRV_MODEL_RL_DETACHED:
      m->rl_detached = true;
      break;
    case SRV_MODEL_STOPPED:
      sem_post(&m->stopped);
      return;
    default:
      SRV_FATAL("model '%s': unexpected message kind %u", m->name, msg->kind);
  }
  gauges_publish(s);
  if (m->stopping)
    try_finish(m);
  else
    dispatch(m);
}
