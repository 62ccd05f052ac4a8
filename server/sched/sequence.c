/* The sequence scheduler's model actor (see sequence.h, sequence.md): its
 * behaviour, which hands each message to its handler, the cancels, the
 * sequences a client left, and the stop. Routing and the backlog live in
 * sequence_route.c, batches in sequence_batch.c. The model actor's. */
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/log.h"
#include "server/core/server.h"
#include "server/model/model.h"
#include "server/model/response.h"
#include "server/sched/ensemble.h"
#include "server/sched/reorder.h"
#include "server/sched/scheduler.h"
#include "server/sched/sequence.h"
#include "server/sched/sequence_internal.h"

/* The gauges, after each message (relaxed: readers want a recent value). */
static void gauges_publish(srv_seq_sched_t *s) {
  atomic_store_explicit(&s->stats.active, s->active, memory_order_relaxed);
  atomic_store_explicit(&s->stats.backlog, s->backlog_count, memory_order_relaxed);
}

/* ---- cancels ------------------------------------------------------------- */

/* The owner keeps r and its state while the cancel is out (request.h). */
static void cancel(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  act_actor_t *owner = r->state->owner;
  if (r->queued && r->seq_slot == NULL) { /* in the backlog */
    srv_seq_backlog_cancel(m, r);
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
    srv_seq_instance_t *si = srv_seq_inst_of(m, slot->inst);
    srv_queue_remove(&si->ready, r);
  }
  srv_request_fail(r, TRITONSERVER_ERROR_CANCELLED,
                   "request '%s' for model '%s' was cancelled before it ran", r->id,
                   m->name);
}

/* ---- sequences whose client left ------------------------------------------ */

typedef struct {
  act_msg_t msg;
  uint64_t id, owner;
  uint32_t id_len;
  bool is_string;
  char id_string[]; /* id_len bytes and a NUL */
} seq_end_msg_t;

void srv_model_sequence_end(srv_model_t *m, uint64_t id, const char *id_string,
                            uint64_t owner) {
  if (m->ens != NULL) { /* its steps' sequence models hold the sequence */
    srv_ensemble_sequence_end(m, id, id_string, owner);
    return;
  }
  size_t len = id_string != NULL ? strlen(id_string) : 0;
  seq_end_msg_t *e = act_msg_alloc(sizeof *e + len + 1);
  e->msg.kind = SRV_MODEL_SEQ_END;
  e->id = id;
  e->owner = owner;
  e->id_len = (uint32_t)len;
  e->is_string = id_string != NULL;
  if (id_string != NULL) memcpy(e->id_string, id_string, len + 1);
  if (!srv_model_send(m, &e->msg)) act_msg_free(&e->msg); /* stopped: nothing to end */
}

static void sequence_end(srv_model_t *m, seq_end_msg_t *e) {
  if (!m->stopping)
    srv_seq_end_by_id(m, e->id, e->is_string ? e->id_string : NULL, e->owner);
  act_msg_free(&e->msg);
}

/* ---- stopping ------------------------------------------------------------ */

static void stop_begin(srv_model_t *m) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  bool exiting = srv_server_cancelling(m->server);
  TRITONSERVER_Error_Code code =
      exiting ? TRITONSERVER_ERROR_CANCELLED : TRITONSERVER_ERROR_UNAVAILABLE;
  const char *why = exiting ? "request cancelled, the server's exit timeout expired"
                            : "the model is unloading";
  srv_seq_backlog_fail(m, code, why);
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
  srv_seq_sched_t *s = srv_seq_sched_of(m);
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

/* ---- the behaviour's handlers -------------------------------------------- */

#define CONTAINER(ptr, type, field) ((type *)((char *)(ptr)-offsetof(type, field)))

static void step_answered(srv_model_t *m, srv_seq_slot_t *slot) {
  srv_seq_inst_of(m, slot->inst)->pending--;
}

/* Nothing to batch yet: the slot lends it. */
static void on_request(srv_model_t *m, TRITONBACKEND_Request *r) {
  /* Slots hold requests out of the swept queue: a lazy owner watches from
   * now on. */
  srv_request_watch_ask(r->state);
  srv_seq_route(m, r);
}

/* What a slot tells the model actor (sequence.h): a request lent, a step
 * answered, the slot free, drained or gone. */
static void on_slot_message(srv_model_t *m, act_msg_t *msg) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  switch (msg->kind) {
    case SRV_SEQ_OFFER_AFTER_STEP:
      step_answered(m, ((TRITONBACKEND_Request *)msg)->seq_slot);
      /* fall through */
    case SRV_SEQ_OFFER:
      srv_seq_offered(m, (TRITONBACKEND_Request *)msg);
      break;
    case SRV_SEQ_VACANT_AFTER_STEP:
      step_answered(m, CONTAINER(msg, srv_seq_slot_t, vacant_msg));
      break;
    case SRV_SEQ_FREED_AFTER_STEP:
    case SRV_SEQ_FREED: {
      srv_seq_slot_t *slot = CONTAINER(msg, srv_seq_slot_t, freed_msg);
      if (msg->kind == SRV_SEQ_FREED_AFTER_STEP) step_answered(m, slot);
      srv_seq_slot_freed(m, slot);
      break;
    }
    case SRV_SEQ_DRAINED:
      s->drained++;
      break;
    case SRV_SEQ_GONE:
      s->gone++;
      break;
  }
}

static void on_instance_idle(srv_model_t *m, act_msg_t *msg) {
  srv_seq_inst_of(m, CONTAINER(msg, srv_instance_t, idle_msg))->idle = true;
  m->idle_count++;
}

static void on_timer(srv_model_t *m) {
  m->timer_at = 0;
  m->timer_flying = false;
  if (!m->stopping) srv_seq_reap(m, act_now_ns());
}

/* A response or final flags: a padding request's are dropped. */
static void on_answer(srv_model_t *m, act_msg_t *msg) {
  if (!srv_seq_padding_answer(msg)) srv_reorder_receive(m, msg);
}

static void on_stop(srv_model_t *m) {
  m->stopping = true;
  stop_begin(m);
}

/* ---- the behaviour ------------------------------------------------------- */

void srv_seq_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_model_t *m = act_actor_state(self);
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  switch (msg->kind) {
    case SRV_MODEL_REQUEST:
      on_request(m, (TRITONBACKEND_Request *)msg);
      gauges_publish(s);
      return;
    case SRV_SEQ_OFFER:
    case SRV_SEQ_OFFER_AFTER_STEP:
    case SRV_SEQ_VACANT_AFTER_STEP:
    case SRV_SEQ_FREED:
    case SRV_SEQ_FREED_AFTER_STEP:
    case SRV_SEQ_DRAINED:
    case SRV_SEQ_GONE:
      on_slot_message(m, msg);
      break;
    case SRV_MODEL_INSTANCE_IDLE:
      on_instance_idle(m, msg);
      break;
    case SRV_MODEL_CANCEL:
      cancel(m, CONTAINER(msg, TRITONBACKEND_Request, cancel_msg));
      break;
    case SRV_MODEL_TIMER:
      on_timer(m);
      break;
    case SRV_MSG_INFER_RESPONSE:
    case SRV_MSG_INFER_FINAL_FLAGS:
      on_answer(m, msg);
      return;
    case SRV_MSG_INFER_RELEASED: /* a padding request */
      srv_seq_padding_back((TRITONBACKEND_Request *)msg);
      break;
    case SRV_MODEL_SEQ_END:
      sequence_end(m, (seq_end_msg_t *)msg);
      break;
    case SRV_MODEL_STOP:
      on_stop(m);
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
    srv_seq_dispatch(m);
}
