/* The open loop's timing (see load_internal.h). gRPC C core keeps time in
 * milliseconds, so a worker that waits in its completion queue for the
 * next send time wakes up to a millisecond late. And a batch started from
 * another thread while the worker sleeps in epoll may wait for the
 * worker's next wake-up (measured: latencies up to the worker's poll
 * timeout). So each worker gets a pacer thread that sleeps to the exact
 * send time (a futex with an absolute CLOCK_MONOTONIC timeout) and only
 * wakes the worker; the worker starts every batch itself. The wake-up is
 * a doorbell: a call that is created but never sent, with its status
 * batch outstanding; cancelling it (any thread may) completes that batch
 * on the worker's queue. The pacer rings only while the worker sleeps,
 * nothing is held back by --max-inflight, and the next send is near; a
 * worker that is awake sends what is due before it waits again.
 *
 * Waking up takes time: the pacer's timed wait returns late, and the
 * worker wakes some time after the ring (tens of microseconds each on a
 * VM). Both are learned (smoothed over the last few), and the pacer rings
 * that much early (the lead); a worker that wakes before its send polls
 * its queue without blocking until the send is due. So sends leave on
 * time at the cost of up to the lead in polling per send (the actor
 * runtime's timer does the same; docs/perf.md). The lead is capped at
 * LEAD_MAX_NS and at an eighth of the mean gap between the worker's sends,
 * so that polling never takes more than about an eighth of a core per
 * worker; past that, sends are late, which the report shows.
 *
 * Shared under pace_mu: next_send_ns, capped, sleeping, rung, rung_ns,
 * wake_ns, stopping, doorbell. The worker writes them but rung and
 * rung_ns, which the pacer sets. */
#include <errno.h>
#include <grpc/support/time.h>
#include <string.h>
#include <time.h>

#include "tools/perf/load_internal.h"
#include "tools/perf/rpc.h"

/* The pacer's longest sleep, so that it sees the stop flag. */
#define PACER_MAX_NS 50000000u
#define LEAD_MAX_NS 200000u

void perf_pacer_init(perf_worker_t *w) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_mutex_init(&w->pace_mu, NULL);
  pthread_cond_init(&w->pace_cond, &attr);
  pthread_condattr_destroy(&attr);
  w->doorbell_tag = (perf_tag_t){TAG_DOORBELL, w};
  atomic_init(&w->lead_ns, 0);
  grpc_metadata_array_init(&w->doorbell_md);
  w->doorbell_details = grpc_empty_slice();
}

void perf_pacer_destroy(perf_worker_t *w) {
  grpc_metadata_array_destroy(&w->doorbell_md);
  grpc_slice_unref(w->doorbell_details);
  pthread_cond_destroy(&w->pace_cond);
  pthread_mutex_destroy(&w->pace_mu);
}

void perf_doorbell_arm(perf_worker_t *w) {
  if (w->stopping) return;
  grpc_call *call = grpc_channel_create_call(
      w->load->channels[0], NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
      grpc_slice_from_static_string(PERF_METHOD_PREFIX "ServerLive"), NULL,
      gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  op.data.recv_status_on_client.trailing_metadata = &w->doorbell_md;
  op.data.recv_status_on_client.status = &w->doorbell_status;
  op.data.recv_status_on_client.status_details = &w->doorbell_details;
  grpc_call_error e = grpc_call_start_batch(call, &op, 1, &w->doorbell_tag, NULL);
  if (e != GRPC_CALL_OK) PERF_FATAL("doorbell batch refused (gRPC error %d)", (int)e);
  pthread_mutex_lock(&w->pace_mu);
  w->doorbell = call;
  w->rung = false;
  pthread_mutex_unlock(&w->pace_mu);
}

/* Smoothing over about the last 8 samples. */
static uint64_t smooth(uint64_t avg, uint64_t sample) { return (avg * 7 + sample) / 8; }

void perf_doorbell_done(perf_worker_t *w) {
  uint64_t now = perf_now_ns();
  pthread_mutex_lock(&w->pace_mu);
  if (w->rung && !w->stopping && now > w->rung_ns)
    w->wake_ns = smooth(w->wake_ns, now - w->rung_ns);
  grpc_call *call = w->doorbell;
  w->doorbell = NULL;
  pthread_mutex_unlock(&w->pace_mu);
  grpc_call_unref(call);
  w->doorbell_md.count = 0;
  grpc_slice_unref(w->doorbell_details);
  w->doorbell_details = grpc_empty_slice();
  perf_doorbell_arm(w);
}

void perf_pacer_update(perf_worker_t *w, uint64_t next_send_ns, bool capped) {
  pthread_mutex_lock(&w->pace_mu);
  w->next_send_ns = next_send_ns;
  w->capped = capped;
  pthread_cond_signal(&w->pace_cond);
  pthread_mutex_unlock(&w->pace_mu);
}

void perf_pacer_sleeping(perf_worker_t *w, bool sleeping) {
  pthread_mutex_lock(&w->pace_mu);
  w->sleeping = sleeping;
  /* A pacer that found the worker awake with a send near waits for this. */
  if (sleeping) pthread_cond_signal(&w->pace_cond);
  pthread_mutex_unlock(&w->pace_mu);
}

bool perf_pacer_send_is_near(perf_worker_t *w) {
  if (w->stopping || w->capped) return false;
  uint64_t now = perf_now_ns();
  return w->next_send_ns > now &&
         w->next_send_ns - now <= atomic_load_explicit(&w->lead_ns, memory_order_relaxed);
}

void perf_pacer_stop(perf_worker_t *w) {
  pthread_mutex_lock(&w->pace_mu);
  w->stopping = true;
  if (w->doorbell != NULL && !w->rung) {
    grpc_call_cancel(w->doorbell, NULL);
    w->rung = true;
  }
  pthread_cond_signal(&w->pace_cond);
  pthread_mutex_unlock(&w->pace_mu);
}

void perf_pacer_wake(perf_worker_t *w) {
  pthread_mutex_lock(&w->pace_mu);
  pthread_cond_signal(&w->pace_cond);
  pthread_mutex_unlock(&w->pace_mu);
}

/* Returns whether the wait timed out (rather than being signalled). */
static bool wait_until(perf_worker_t *w, uint64_t t) {
  struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
  return pthread_cond_timedwait(&w->pace_cond, &w->pace_mu, &ts) == ETIMEDOUT;
}

void *perf_pacer_main(void *worker) {
  perf_worker_t *w = worker;
  uint64_t late_ns = 0; /* smoothed lateness of this thread's timed waits */
  /* Polling costs CPU that the server may need (on small machines they
   * share the cores): at most an eighth of the time between sends. */
  uint64_t max_lead =
      (uint64_t)(w->gap_ns / 8) < LEAD_MAX_NS ? (uint64_t)(w->gap_ns / 8) : LEAD_MAX_NS;
  pthread_mutex_lock(&w->pace_mu);
  /* Acquire: pairs with perf_load_stop's release (nothing else is published). */
  while (!w->stopping && !atomic_load_explicit(&w->load->stop, memory_order_acquire)) {
    uint64_t lead = late_ns + w->wake_ns;
    if (lead > max_lead) lead = max_lead;
    atomic_store_explicit(&w->lead_ns, lead, memory_order_relaxed);
    uint64_t now = perf_now_ns(), limit = now + PACER_MAX_NS;
    uint64_t ring_at = w->next_send_ns > lead ? w->next_send_ns - lead : 0;
    if (ring_at > now) {
      uint64_t until = ring_at < limit ? ring_at : limit;
      if (wait_until(w, until) && until == ring_at)
        late_ns = smooth(late_ns, perf_now_ns() - ring_at);
      continue;
    }
    if (w->sleeping && !w->capped && !w->rung && w->doorbell != NULL) {
      grpc_call_cancel(w->doorbell, NULL);
      w->rung = true;
      w->rung_ns = perf_now_ns();
    }
    wait_until(w, limit); /* until the worker moves the schedule */
  }
  pthread_mutex_unlock(&w->pace_mu);
  return NULL;
}
