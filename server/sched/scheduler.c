/* The model actor's behaviour: it owns the queue (queue.c), forms batches
 * (batcher.c) for idle instances, keeps one timer for the batching delay
 * and the queue timeouts, drops cancelled requests, puts responses back in
 * order when the model preserves ordering (reorder.c), and stops in two
 * steps: first answer what waits and let the instances finish, then stop
 * them and itself. Instances report back with their idle message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "actors/timer.h"
#include "server/cache/cache_hook.h"
#include "server/common/log.h"
#include "server/core/server.h"
#include "server/model/model.h"
#include "server/sched/reorder.h"
#include "server/sched/scheduler.h"
#include "server/trace/trace_request.h"

/* ---- requests refused by the server ---- */

void srv_request_fail(TRITONBACKEND_Request *r, TRITONSERVER_Error_Code code,
                      const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  srv_model_t *m = r->model;
  /* Triton's failure reasons: the scheduler refused it (queue full, queue
   * timeout, unloading), it was cancelled, or anything else. */
  srv_fail_reason_t why = code == TRITONSERVER_ERROR_UNAVAILABLE ? SRV_FAIL_REJECTED
                          : code == TRITONSERVER_ERROR_CANCELLED ? SRV_FAIL_CANCELED
                                                                 : SRV_FAIL_OTHER;
  srv_stats_fail(&m->stats, why, act_now_ns() - r->state->request_start_ns);
  TRITONBACKEND_Response *response;
  TRITONBACKEND_ResponseNew(&response, r);
  TRITONSERVER_Error *err = TRITONSERVER_ErrorNew(code, text);
  TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
  TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_Error *rel =
      TRITONBACKEND_RequestRelease(r, TRITONSERVER_REQUEST_RELEASE_ALL);
  if (rel != NULL) TRITONSERVER_ErrorDelete(rel);
}

void srv_model_enqueue(srv_model_t *m, TRITONBACKEND_Request *request) {
  /* Frontends stamp arrival themselves; a request made in the server (BLS,
   * an ensemble's step) starts queueing now. */
  if (request->queue_start_ns == 0) request->queue_start_ns = act_now_ns();
  /* Tracing: one predictable branch for an untraced request while no
   * setting samples (trace.md, "Cost"). */
  srv_infer_state_t *st = request->state;
  if (__builtin_expect(
          st->trace != NULL || (st->trace_sample && srv_tracer_on(m->server->tracer)), 0))
    srv_trace_enqueue(m->server->tracer, m->name, m->version, request);
  /* The response cache: a hit never waits for an instance (cache.md). */
  if (__builtin_expect(m->cache != NULL, 0) && srv_cache_enqueue(m, request)) return;
  srv_model_enqueue_uncached(m, request);
}

void srv_model_enqueue_uncached(srv_model_t *m, TRITONBACKEND_Request *request) {
  request->msg.kind = SRV_MODEL_REQUEST;
  srv_stats_pending_add(&m->stats, 1); /* this thread's slot (stats.h) */
  request->pending = &m->stats;
  if (!srv_model_send(m, &request->msg))
    srv_request_fail(request, TRITONSERVER_ERROR_UNAVAILABLE,
                     "model '%s' version %lld is unloading", m->name,
                     (long long)m->version);
}

bool srv_request_cancel(TRITONBACKEND_Request *r) {
  if (r->cancel != SRV_CANCEL_NONE) return false;
  /* Out until its CANCEL_DONE (either way below) reaches the owner. */
  r->cancel = SRV_CANCEL_OUT;
  /* Relaxed: a hint for backends that poll it; the queue removal below is
   * ordered by the message. */
  atomic_store_explicit(&r->state->cancelled, true, memory_order_relaxed);
  r->cancel_msg.kind = SRV_MODEL_CANCEL;
  if (!srv_model_send(r->model, &r->cancel_msg)) {
    /* The model has stopped: nothing of it is queued any more. Still an
     * answer by message, so every owner has one way to get its cancel back. */
    r->cancel_msg.kind = SRV_MSG_INFER_CANCEL_DONE;
    act_send(r->state->owner, &r->cancel_msg);
  }
  return true;
}

bool srv_model_input_ragged(const srv_model_t *m, const char *name) {
  for (uint32_t i = 0; i < m->input_count; i++)
    if (m->inputs[i].name == name) return m->inputs[i].ragged;
  return false;
}

/* ---- the timer ---- */

/* Whether the timer must change for `at`: set, and none already flying or
 * set at least as early. Most dispatches find it set early enough. */
static inline bool timer_wanted(const srv_model_t *m, uint64_t at) {
  return at != 0 && !m->timer_flying && (m->timer_at == 0 || at < m->timer_at);
}

/* srv_scheduler_timer_want, once timer_wanted. */
static void timer_set(srv_model_t *m, uint64_t at) {
  if (m->timer_at != 0) {
    if (!act_timer_cancel(m->server->runtime, &m->timer)) {
      m->timer_at = 0;
      m->timer_flying = true;
      return;
    }
  }
  m->timer_at = at;
  act_timer_arm(m->server->runtime, &m->timer, at, &m->actor, &m->timer_msg);
}

/* One timer serves the earliest of the batching delay and the queue
 * timeouts. A timer that fired (or could not be cancelled) is on its way;
 * its arrival looks at everything again. */
void srv_scheduler_timer_want(srv_model_t *m, uint64_t at) {
  if (timer_wanted(m, at)) timer_set(m, at);
}

/* ---- scheduling ---- */

static void timed_out(void *ctx, TRITONBACKEND_Request *r) {
  (void)ctx;
  srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE, "Request timeout expired");
}

/* ---- lazy cancellation watching ---- */

static void watch_ask(TRITONBACKEND_Request *r) { srv_request_watch_ask(r->state); }

/* Returns when the next sweep is due (0: the queue is empty). A request is
 * asked between SRV_WATCH_AFTER_NS and twice that after its arrival. */
static uint64_t watch_sweep(srv_model_t *m, uint64_t now) {
  if (m->queue.count == 0) return m->watch_at = 0;
  if (m->watch_at == 0) return m->watch_at = now + SRV_WATCH_AFTER_NS;
  if (now < m->watch_at) return m->watch_at;
  uint64_t next = srv_queue_each_arrived_by(&m->queue, now - SRV_WATCH_AFTER_NS, watch_ask);
  return m->watch_at = next != 0 ? next + SRV_WATCH_AFTER_NS : now + SRV_WATCH_AFTER_NS;
}

static uint64_t earliest(uint64_t a, uint64_t b) {
  return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* `now`: a clock read of the caller's, taken with nothing between it and
 * this call (so one read serves a push and its dispatch). */
static void dispatch_at(srv_model_t *m, uint64_t now) {
  srv_queue_expire(&m->queue, now, timed_out, m);
  uint64_t wait_until = 0;
  while (m->idle != NULL && !m->stopping) {
    srv_instance_t *inst = m->idle;
    uint32_t n = srv_batcher_take(m, inst, now, &wait_until);
    if (n == 0) break;
    m->idle = inst->next_idle;
    m->idle_count--;
    inst->batch_count = n;
    if (m->batcher.preserve_ordering)
      for (uint32_t i = 0; i < n; i++) srv_reorder_track(m, inst->batch[i]->state);
    /* With the rate limiter the formed batch waits for its grant, which
     * sends execute_msg; its queue time goes on (rate_limiter.md). */
    if (inst->rl_ticket == NULL)
      act_send(&inst->actor, &inst->execute_msg);
    else
      srv_rl_ask(m->rl, inst->rl_ticket);
  }
  uint64_t next = earliest(srv_queue_next_timeout(&m->queue), wait_until);
  uint64_t at = earliest(next, watch_sweep(m, now));
  /* The test inline (issue 21): no call on the two dispatches per request
   * that find the timer set early enough. */
  if (timer_wanted(m, at)) timer_set(m, at);
}

static void dispatch(srv_model_t *m) { dispatch_at(m, act_now_ns()); }

static void enqueue(srv_model_t *m, TRITONBACKEND_Request *r) {
  if (m->stopping) {
    srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE,
                     "model '%s' version %lld is unloading", m->name,
                     (long long)m->version);
    return;
  }
  uint64_t now = act_now_ns();
  if (!srv_queue_push(&m->queue, r, now)) {
    /* Triton's text: clients match on it. */
    srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE, "Exceeds maximum queue size");
    return;
  }
  dispatch_at(m, now);
}

/* A cancel may reach us long after the request left: it may wait behind
 * other messages while the backend releases the request and the final
 * response reaches the owner. We may still read r and r->state here only
 * because the owner keeps both until the cancel is back (request.h,
 * srv_request_cancel; model/README.md, "Cancelling a request"), even once
 * released; r->cancel_msg is ours until we send it back. */
static void cancel(srv_model_t *m, TRITONBACKEND_Request *r) {
  act_actor_t *owner = r->state->owner;
  if (r->queued) {
    srv_queue_remove(&m->queue, r);
    srv_request_fail(r, TRITONSERVER_ERROR_CANCELLED,
                     "request '%s' for model '%s' was cancelled before it ran", r->id,
                     m->name);
  }
  r->cancel_msg.kind = SRV_MSG_INFER_CANCEL_DONE;
  act_send(owner, &r->cancel_msg);
}

/* ---- stopping ---- */

/* At shutdown past the exit timeout (srv_core_cancel, which comes before
 * the stop message), what waits is cancelled; otherwise the model unloads. */
static void fail_queued(srv_model_t *m) {
  bool exiting = srv_server_cancelling(m->server);
  TRITONBACKEND_Request *r;
  while ((r = srv_queue_first(&m->queue)) != NULL) {
    srv_queue_remove(&m->queue, r);
    if (exiting)
      srv_request_fail(r, TRITONSERVER_ERROR_CANCELLED,
                       "model '%s': request cancelled, the server's exit timeout "
                       "expired",
                       m->name);
    else
      srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE,
                       "model '%s' version %lld is unloading", m->name,
                       (long long)m->version);
  }
}

/* What the limiter gave back of a batch that waited for its grant when the
 * model stopped: answered as fail_queued answers, the instance idle. */
static void withdrawn(srv_model_t *m, srv_instance_t *inst) {
  bool exiting = srv_server_cancelling(m->server);
  for (uint32_t i = 0; i < inst->batch_count; i++) {
    if (exiting)
      srv_request_fail(inst->batch[i], TRITONSERVER_ERROR_CANCELLED,
                       "model '%s': request cancelled, the server's exit timeout "
                       "expired",
                       m->name);
    else
      srv_request_fail(inst->batch[i], TRITONSERVER_ERROR_UNAVAILABLE,
                       "model '%s' version %lld is unloading", m->name,
                       (long long)m->version);
  }
  inst->batch_count = 0;
  inst->next_idle = m->idle;
  m->idle = inst;
  m->idle_count++;
}

/* At stop: every instance whose batch still waits for the limiter gets it
 * back (SRV_MODEL_RL_WITHDRAWN); one already granted runs and comes back
 * idle as usual. */
static void withdraw_all(srv_model_t *m) {
  if (m->rl == NULL) return;
  for (uint32_t i = 0; i < m->instance_count; i++)
    srv_rl_withdraw(m->rl, m->instances[i]->rl_ticket);
}

/* The final step, once every instance is back and no timer message can
 * come: close the gate, and stop when no gated send is under way. */
static void try_finish(srv_model_t *m) {
  if (!m->stopping || m->idle_count != m->started_count) return;
  srv_scheduler_close(m);
}

void srv_scheduler_close(srv_model_t *m) {
  if (m->timer_flying || m->retry_sent) return;
  /* The limiter lets go of the tickets before the model may be freed. */
  if (m->rl != NULL && !m->rl_detached) {
    if (!m->rl_detaching) srv_rl_detach(m->rl, &m->rl_detach);
    m->rl_detaching = true;
    return;
  }
  if (m->timer_at != 0) {
    if (!act_timer_cancel(m->server->runtime, &m->timer)) {
      m->timer_at = 0;
      m->timer_flying = true;
      return;
    }
    m->timer_at = 0;
  }
  if (!srv_model_gate_close(m)) {
    m->retry_sent = true;
    act_send(&m->actor, &m->stop_retry_msg);
    return;
  }
  /* Requests that arrived before the gate closed were answered; ordered
   * responses go straight to their owners from now on. */
  srv_reorder_flush(m);
  srv_instances_stop(m);
  act_send_stop(&m->actor, &m->stopped_msg);
}

void srv_scheduler_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_model_t *m = act_actor_state(self);
  switch (msg->kind) {
    case SRV_MODEL_REQUEST:
      enqueue(m, (TRITONBACKEND_Request *)msg);
      return;
    case SRV_MODEL_INSTANCE_IDLE: {
      srv_instance_t *inst =
          (srv_instance_t *)((char *)msg - offsetof(srv_instance_t, idle_msg));
      inst->next_idle = m->idle;
      m->idle = inst;
      m->idle_count++;
      if (m->stopping)
        try_finish(m);
      else
        dispatch(m);
      return;
    }
    case SRV_MODEL_CANCEL:
      cancel(m, (TRITONBACKEND_Request *)((char *)msg -
                                          offsetof(TRITONBACKEND_Request, cancel_msg)));
      return;
    case SRV_MODEL_TIMER:
      m->timer_at = 0;
      m->timer_flying = false;
      if (m->stopping)
        try_finish(m);
      else
        dispatch(m);
      return;
    case SRV_MSG_INFER_RESPONSE:
    case SRV_MSG_INFER_FINAL_FLAGS:
      srv_reorder_receive(m, msg);
      return;
    case SRV_MODEL_STOP:
      m->stopping = true;
      fail_queued(m);
      withdraw_all(m);
      try_finish(m);
      return;
    case SRV_MODEL_RL_WITHDRAWN: {
      srv_rl_ticket_t *t =
          (srv_rl_ticket_t *)((char *)msg - offsetof(srv_rl_ticket_t, ask_msg));
      withdrawn(m,
                (srv_instance_t *)((char *)t->runner - offsetof(srv_instance_t, actor)));
      try_finish(m);
      return;
    }
    case SRV_MODEL_RL_DETACHED:
      m->rl_detached = true;
      try_finish(m);
      return;
    case SRV_MODEL_STOP_RETRY:
      m->retry_sent = false;
      try_finish(m);
      return;
    case SRV_MODEL_STOPPED:
      /* The runtime never touches the actor after this: the waiter may free m. */
      sem_post(&m->stopped);
      return;
    default:
      SRV_FATAL("model '%s': unexpected message kind %u", m->name, msg->kind);
  }
}
