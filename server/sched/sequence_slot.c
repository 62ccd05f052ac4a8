/* Sequence slots (see sequence.h and sequence.md): each an actor that holds
 * one sequence's requests in order and lends them out one at a time, with
 * the control inputs and the implicit state the model declares added as
 * inputs. A lent request comes back here when the backend releases it;
 * only then does the next one go out, so the state buffers and the added
 * inputs are never touched by two threads at once: between lending and
 * release they are the executing instance's, otherwise the slot's. */
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/core/server.h"
#include "server/model/config_limits.h"
#include "server/model/model.h"
#include "server/sched/sequence.h"
#include "server/sched/sequence_internal.h"

/* ---- the inputs a slot adds --------------------------------------------- */

void srv_seq_extra_init(srv_seq_extra_t *e, const srv_seq_config_t *c) {
  uint32_t n = c->control_count + c->state_count;
  memset(e, 0, sizeof *e);
  if (n == 0) return;
  e->inputs = calloc(n, sizeof *e->inputs);
  e->buffers = calloc(n, sizeof *e->buffers);
  e->shapes = calloc(2u * (c->control_count ? c->control_count : 1), sizeof *e->shapes);
  e->values = calloc(8u * (c->control_count ? c->control_count : 1), 1);
  if (e->inputs == NULL || e->buffers == NULL || e->shapes == NULL || e->values == NULL)
    SRV_FATAL("out of memory");
}

void srv_seq_extra_release(srv_seq_extra_t *e) {
  free(e->inputs);
  free(e->buffers);
  free(e->shapes);
  free(e->values);
  free(e->corrid);
  memset(e, 0, sizeof *e);
}

static void input_set(struct TRITONBACKEND_Input *in, srv_buffer_t *buf, const char *name,
                      TRITONSERVER_DataType dt, const int64_t *shape, uint32_t dims,
                      const void *data, uint64_t size) {
  buf->base = data;
  buf->size = size;
  *in = (struct TRITONBACKEND_Input){
      .name = name,
      .datatype = dt,
      .shape = shape,
      .dims_count = dims,
      .byte_size = size,
      .buffers = buf,
      .buffer_count = 1,
  };
}

/* The CORRID control's bytes: the integer ID in the control's type (its low
 * bytes, as Triton copies it), or a BYTES element (4-byte length, then the
 * string). A padding request (not ready) sends zero, or the empty string. */
static uint64_t corrid_fill(srv_seq_extra_t *e, const srv_seq_control_t *c,
                            const TRITONBACKEND_Request *r, bool ready, uint8_t *value) {
  if (c->datatype != TRITONSERVER_TYPE_BYTES) {
    uint64_t id = ready ? r->correlation_id : 0;
    uint32_t size = TRITONSERVER_DataTypeByteSize(c->datatype);
    memset(value, 0, 8);
    memcpy(value, &id, size); /* little-endian: the low bytes */
    return size;
  }
  const char *s =
      ready && r->correlation_id_string != NULL ? r->correlation_id_string : "";
  uint32_t len = (uint32_t)strlen(s);
  if (4u + len > e->corrid_cap) {
    uint32_t cap = 4u + len < 64u ? 64u : 4u + len;
    free(e->corrid);
    e->corrid = malloc(cap);
    if (e->corrid == NULL) SRV_FATAL("out of memory");
    e->corrid_cap = cap;
  }
  memcpy(e->corrid, &len, 4);
  memcpy(e->corrid + 4, s, len);
  return 4u + len;
}

/* Control inputs: [1] per request, [1, 1] when the model batches. */
static void controls_fill(const srv_model_t *m, srv_seq_extra_t *e,
                          const TRITONBACKEND_Request *r, bool ready) {
  const srv_seq_config_t *c = &m->seq->config;
  uint32_t dims = m->max_batch_size > 0 ? 2 : 1;
  bool start = ready && (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  bool end = ready && (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0;
  for (uint32_t i = 0; i < c->control_count; i++) {
    const srv_seq_control_t *k = &c->controls[i];
    int64_t *shape = &e->shapes[2 * i];
    shape[0] = shape[1] = 1;
    uint8_t *value = &e->values[8 * i];
    const void *data = value;
    uint64_t size = k->value_size;
    bool on = false;
    switch (k->kind) {
      case SRV_SEQ_CONTROL_START:
        on = start;
        break;
      case SRV_SEQ_CONTROL_END:
        on = end;
        break;
      case SRV_SEQ_CONTROL_READY:
        on = ready;
        break;
      case SRV_SEQ_CONTROL_CORRID:
        size = corrid_fill(e, k, r, ready, value);
        if (k->datatype == TRITONSERVER_TYPE_BYTES) data = e->corrid;
        break;
    }
    if (k->kind != SRV_SEQ_CONTROL_CORRID)
      memcpy(value, on ? k->true_value : k->false_value, k->value_size);
    input_set(&e->inputs[i], &e->buffers[i], k->name, k->datatype, shape, dims, data,
              size);
  }
}

/* ---- implicit state ------------------------------------------------------ */

static uint64_t element_count(const int64_t *shape, uint32_t dims) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < dims; i++) n *= shape[i] > 0 ? (uint64_t)shape[i] : 0;
  return n;
}

static void *grow(void *p, uint64_t *cap, uint64_t size) {
  if (size <= *cap && p != NULL) return p;
  void *bigger = realloc(p, size ? size : 1);
  if (bigger == NULL) SRV_FATAL("out of memory");
  *cap = size;
  return bigger;
}

/* A state as a sequence starts: the initial_state's data, or zeros of the
 * configured dims (a variable dim counts 1, as in Triton). Both buffers
 * get room for the shape with its batch dimension. */
static void state_start(const srv_model_t *m, const srv_seq_state_config_t *sc,
                        srv_seq_state_buf_t *b) {
  uint32_t lead = m->max_batch_size > 0 ? 1 : 0;
  for (int i = 0; i < 2; i++)
    if (b->shape[i] == NULL) {
      b->shape[i] = calloc(SRV_CONFIG_DIMS_MAX + 1, sizeof *b->shape[i]);
      if (b->shape[i] == NULL) SRV_FATAL("out of memory");
    }
  b->cur = 0;
  int64_t *shape = b->shape[0];
  shape[0] = 1;
  const int64_t *dims = sc->has_initial ? sc->initial_dims : sc->dims;
  uint32_t count = sc->has_initial ? sc->initial_dims_count : sc->dims_count;
  for (uint32_t i = 0; i < count; i++) shape[lead + i] = dims[i] < 0 ? 1 : dims[i];
  b->dims_count[0] = lead + count;
  uint64_t size;
  if (sc->has_initial) {
    size = sc->initial_size;
  } else {
    uint64_t each = sc->datatype == TRITONSERVER_TYPE_BYTES
                        ? 4 /* empty strings */
                        : TRITONSERVER_DataTypeByteSize(sc->datatype);
    size = element_count(shape, b->dims_count[0]) * each;
  }
  b->buf[0] = grow(b->buf[0], &b->cap[0], size);
  if (sc->has_initial)
    memcpy(b->buf[0], sc->initial_data, size);
  else
    memset(b->buf[0], 0, size);
  b->size[0] = size;
}

void srv_seq_slot_states_reset(srv_seq_slot_t *slot) {
  const srv_seq_config_t *c = &slot->model->seq->config;
  if (slot->states == NULL) return;
  for (uint32_t i = 0; i < c->state_count; i++) {
    srv_seq_state_buf_t *b = &slot->states[i];
    for (int k = 0; k < 2; k++) {
      free(b->buf[k]);
      free(b->shape[k]);
    }
    memset(b, 0, sizeof *b);
  }
}

/* The state inputs of a lent request: each state's current buffer. */
static void states_fill(const srv_model_t *m, srv_seq_slot_t *slot, bool start) {
  const srv_seq_config_t *c = &m->seq->config;
  if (c->state_count == 0) return;
  if (slot->states == NULL) {
    slot->states = calloc(c->state_count, sizeof *slot->states);
    slot->updates = calloc(c->state_count, sizeof *slot->updates);
    if (slot->states == NULL || slot->updates == NULL) SRV_FATAL("out of memory");
    start = true;
  }
  srv_seq_extra_t *e = &slot->extra;
  for (uint32_t i = 0; i < c->state_count; i++) {
    const srv_seq_state_config_t *sc = &c->states[i];
    srv_seq_state_buf_t *b = &slot->states[i];
    if (start || b->shape[0] == NULL) state_start(m, sc, b);
    uint32_t k = c->control_count + i;
    input_set(&e->inputs[k], &e->buffers[k], sc->input_name, sc->datatype,
              b->shape[b->cur], b->dims_count[b->cur], b->buf[b->cur], b->size[b->cur]);
    struct TRITONBACKEND_State *u = &slot->updates[i];
    u->config = sc;
    u->buf = b;
  }
}

void srv_seq_extra_fill(srv_model_t *m, srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  bool start = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  controls_fill(m, &slot->extra, r, true);
  states_fill(m, slot, start);
  r->extra_inputs = slot->extra.inputs;
  r->extra_count = m->seq->config.control_count + m->seq->config.state_count;
}

/* A padding request's controls say "not ready"; its states are zeros shaped
 * like the representative's (`like`), so the batch stays uniform. */
void srv_seq_padding_fill(srv_model_t *m, srv_seq_extra_t *e, TRITONBACKEND_Request *r,
                          const TRITONBACKEND_Request *like, const void *zeros) {
  const srv_seq_config_t *c = &m->seq->config;
  controls_fill(m, e, r, false);
  for (uint32_t i = 0; i < c->state_count; i++) {
    uint32_t k = c->control_count + i;
    const struct TRITONBACKEND_Input *src = &like->extra_inputs[k];
    input_set(&e->inputs[k], &e->buffers[k], src->name, src->datatype, src->shape,
              src->dims_count, zeros, src->byte_size);
  }
  r->extra_inputs = e->inputs;
  r->extra_count = c->control_count + c->state_count;
}

/* ---- the slot's behaviour ------------------------------------------------ */

static void fifo_push(srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  r->next = NULL;
  if (slot->tail != NULL)
    slot->tail->next = r;
  else
    slot->head = r;
  slot->tail = r;
}

static TRITONBACKEND_Request *fifo_pop(srv_seq_slot_t *slot) {
  TRITONBACKEND_Request *r = slot->head;
  if (r == NULL) return NULL;
  slot->head = r->next;
  if (slot->head == NULL) slot->tail = NULL;
  r->next = NULL;
  return r;
}

static bool fifo_remove(srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  TRITONBACKEND_Request *prev = NULL;
  for (TRITONBACKEND_Request *x = slot->head; x != NULL; prev = x, x = x->next) {
    if (x != r) continue;
    if (prev != NULL)
      prev->next = x->next;
    else
      slot->head = x->next;
    if (slot->tail == x) slot->tail = prev;
    x->next = NULL;
    return true;
  }
  return false;
}

static void send_model(srv_seq_slot_t *slot, act_msg_t *msg, uint32_t kind) {
  msg->kind = kind;
  act_send(&slot->model->actor, msg);
}

/* Lends the next request out: the model actor batches it. */
static void lend_next(srv_seq_slot_t *slot, uint32_t kind) {
  TRITONBACKEND_Request *r = fifo_pop(slot);
  if ((r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0) slot->ending = true;
  srv_seq_extra_fill(slot->model, slot, r);
  r->release_to = &slot->actor;
  r->seq_dispatched = false;
  slot->lent = r;
  send_model(slot, &r->msg, kind);
}

/* Every request still waiting is answered `code` (the sequence ended). */
static void fail_waiting(srv_seq_slot_t *slot, TRITONSERVER_Error_Code code,
                         const char *why) {
  srv_model_t *m = slot->model;
  TRITONBACKEND_Request *r;
  while ((r = fifo_pop(slot)) != NULL)
    srv_request_fail(r, code, "model '%s': %s", m->name, why);
}

static void drain_fail(srv_seq_slot_t *slot) {
  if (srv_server_cancelling(slot->model->server))
    fail_waiting(slot, TRITONSERVER_ERROR_CANCELLED,
                 "request cancelled, the server's exit timeout expired");
  else
    fail_waiting(slot, TRITONSERVER_ERROR_UNAVAILABLE, "the model is unloading");
}

/* The sequence is over: its state goes, the slot is free again. */
static void slot_free(srv_seq_slot_t *slot, uint32_t kind) {
  slot->freed_epoch = slot->epoch;
  slot->active = false;
  slot->ending = false;
  srv_seq_slot_states_reset(slot);
  send_model(slot, &slot->freed_msg, kind);
}

/* The lent request is back: hand it to its owner, then lend the next one,
 * or say there is none, or that the sequence is over. */
static void step_done(srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  bool stepped = r->seq_dispatched; /* it went into a batch, not refused */
  act_actor_t *owner = r->state->owner;
  r->release_to = NULL;
  r->extra_inputs = NULL;
  r->extra_count = 0;
  slot->lent = NULL;
  act_send(owner, &r->msg); /* the owner may free r from here on */
  if (slot->draining) {
    drain_fail(slot);
    if (stepped) send_model(slot, &slot->vacant_msg, SRV_SEQ_VACANT_AFTER_STEP);
    send_model(slot, &slot->drained_msg, SRV_SEQ_DRAINED);
    return;
  }
  if (slot->head == NULL && slot->ending) {
    slot_free(slot, stepped ? SRV_SEQ_FREED_AFTER_STEP : SRV_SEQ_FREED);
    return;
  }
  if (slot->head != NULL) {
    lend_next(slot, stepped ? SRV_SEQ_OFFER_AFTER_STEP : SRV_SEQ_OFFER);
    return;
  }
  if (stepped) send_model(slot, &slot->vacant_msg, SRV_SEQ_VACANT_AFTER_STEP);
}

/* A cancel the model actor passed on: Triton ends a sequence when one of
 * its requests is cancelled, and cancels what else it queued. */
static void cancel(srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  act_actor_t *owner = r->state->owner;
  bool ours = fifo_remove(slot, r);
  if (ours || r == slot->lent) {
    if (ours)
      srv_request_fail(r, TRITONSERVER_ERROR_CANCELLED,
                       "request '%s' for model '%s' was cancelled before it ran", r->id,
                       slot->model->name);
    fail_waiting(slot, TRITONSERVER_ERROR_CANCELLED,
                 "the sequence was cancelled: one of its requests was");
    if (!slot->cancelled) srv_seq_count(&slot->model->seq->stats.cancel_ended);
    slot->ending = true;
    slot->cancelled = true;
    if (slot->lent == NULL) slot_free(slot, SRV_SEQ_FREED);
  }
  r->cancel_msg.kind = SRV_MSG_INFER_CANCEL_DONE;
  act_send(owner, &r->cancel_msg);
}

void srv_seq_slot_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_seq_slot_t *slot = act_actor_state(self);
  switch (msg->kind) {
    case SRV_SEQ_SLOT_REQUEST: {
      TRITONBACKEND_Request *r = (TRITONBACKEND_Request *)msg;
      if ((r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0) {
        slot->epoch = r->seq_epoch;
        /* Routed before the model actor learnt that a cancel ended the
         * sequence: a new one begins here, and the end the cancel left
         * pending (or its FREED, already sent) is for the old one. The
         * other ends (END, idle, a stream's) come with the ID out of the
         * map: no START of it comes here before this slot is free. */
        if (slot->cancelled) slot->ending = false;
        slot->cancelled = false;
      }
      if (slot->draining) {
        fifo_push(slot, r);
        drain_fail(slot);
        return;
      }
      if (slot->cancelled) {
        /* Routed before the model actor learnt of the cancel. */
        srv_request_fail(
            r, TRITONSERVER_ERROR_CANCELLED,
            "model '%s': the sequence was cancelled: one of its requests was",
            slot->model->name);
        return;
      }
      slot->active = true;
      fifo_push(slot, r);
      if (slot->lent == NULL) lend_next(slot, SRV_SEQ_OFFER);
      return;
    }
    case SRV_MSG_INFER_RELEASED:
      step_done(slot, (TRITONBACKEND_Request *)msg);
      return;
    case SRV_MODEL_CANCEL:
      cancel(slot, (TRITONBACKEND_Request *)((char *)msg - offsetof(TRITONBACKEND_Request,
                                                                    cancel_msg)));
      return;
    case SRV_SEQ_SLOT_END:
      /* Idle, its stream left, or ended in the backlog: what waits still
       * runs. A slot that freed itself meanwhile (a cancel crossed this
       * message) holds nothing of that sequence: nothing to do, and its
       * one FREED is already on its way. */
      act_msg_free(msg);
      if (!slot->active) return;
      slot->ending = true;
      if (slot->lent == NULL && slot->head == NULL) slot_free(slot, SRV_SEQ_FREED);
      return;
    case SRV_SEQ_SLOT_DRAIN:
      slot->draining = true;
      drain_fail(slot);
      if (slot->lent == NULL) send_model(slot, &slot->drained_msg, SRV_SEQ_DRAINED);
      return;
    case SRV_SEQ_SLOT_STOP:
      srv_seq_slot_states_reset(slot);
      /* The runtime never touches the slot after this turn. */
      send_model(slot, &slot->gone_msg, SRV_SEQ_GONE);
      return;
    default:
      SRV_FATAL("model '%s' sequence slot %u: unexpected message kind %u",
                slot->model->name, slot->index, msg->kind);
  }
}
