/* Scheduler (see scheduler.h and README.md "Scheduling" and "Sleep and
 * wake"): worker threads run actors from their local run queue, the inject
 * queue, or a victim's queue; idle workers spin briefly, then sleep on a
 * futex. Producers (any thread) submit runnable actors and wake sleepers. */
#define _GNU_SOURCE /* pthread_setname_np */
#include "actors/scheduler.h"

#include <ck_backoff.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/base.h"
#include "actors/futex.h"
#include "actors/runq.h"
#include "actors/runtime_internal.h"

/* Worker sleep states (the futex word). */
enum { W_RUNNING = 0, W_SLEEPING = 1, W_NOTIFIED = 2 };

enum {
  INJECT_EVERY = 61, /* turns between inject checks when local work exists */
  INJECT_BATCH = 16, /* actors moved from inject to local per pop */
  SPIN_ROUNDS = 6,   /* backoff rounds before sleeping (~10-20 us) */
  WAIT_YIELD = 64,   /* WAIT turns in a row before yielding the core */
};

struct act_worker {
  act_runq_t rq; /* cache-line aligned inside */
  /* Futex word: written by the worker and by notifiers. */
  _Alignas(ACT_CACHE_LINE) atomic_uint state;
  /* Owner-only from here. */
  _Alignas(ACT_CACHE_LINE) act_sched_t *sched;
  unsigned index;
  uint32_t rng;
  uint32_t tick;
  uint32_t waits;
  pthread_t thread;
};

static _Thread_local act_worker_t *tls_worker ACT_TLS_INITIAL_EXEC;

static act_actor_t *actor_of(act_link_t *l) {
  return (act_actor_t *)((char *)l - offsetof(act_actor_t, link));
}

/* Wakes one sleeping worker, if any is still asleep. */
static void wake_one(act_sched_t *s) {
  unsigned n = s->nworkers;
  unsigned start = tls_worker != NULL ? tls_worker->index + 1 : 0;
  for (unsigned i = 0; i < n; i++) {
    act_worker_t *w = &s->workers[(start + i) % n];
    unsigned expected = W_SLEEPING;
    /* acq_rel: the CAS is the hand-over of "you have been woken"; relaxed
     * on failure: that worker is awake and will look for work itself. */
    if (atomic_compare_exchange_strong_explicit(&w->state, &expected,
                                                W_NOTIFIED,
                                                memory_order_acq_rel,
                                                memory_order_relaxed)) {
      /* seq_cst: every change of nsleeping is in the total order the
       * sleep protocol reasons about (free on x86: a locked op anyway). */
      atomic_fetch_sub_explicit(&s->nsleeping, 1, memory_order_seq_cst);
      act_futex_wake(&w->state, 1);
      return;
    }
  }
}

/* After making work visible (with a seq_cst store or exchange: see
 * act_runq_push and act_inject_push): if a worker may be asleep, wake one.
 * seq_cst load: our push, this load, a sleeper's seq_cst increment and its
 * seq_cst re-check of the queues all sit in one total order, so either the
 * re-check sees our push or this load sees the increment (Dekker; no fence,
 * which TSan cannot model). Being seq_cst it is also an acquire, so the
 * sleeper's state store is visible to wake_one's CAS. */
static void notify(act_sched_t *s) {
  if (atomic_load_explicit(&s->nsleeping, memory_order_seq_cst) == 0) return;
  wake_one(s);
}

/* The local queue is full: move its older half and a to the inject queue. */
static void overflow(act_worker_t *w, act_actor_t *a) {
  act_sched_t *s = w->sched;
  for (unsigned i = 0; i < ACT_RUNQ_CAP / 2; i++) {
    act_actor_t *b = act_runq_pop(&w->rq);
    if (b == NULL) break;
    act_inject_push(&s->inject, &b->link);
  }
  act_inject_push(&s->inject, &a->link);
}

/* The two ways to a worker, kept out of act_sched_submit so that its
 * inline-run path (a completion-queue thread's every hop) saves no
 * registers. */
__attribute__((noinline)) static void submit_local(act_worker_t *w, act_actor_t *a) {
  if (ACT_LIKELY(act_runq_push(&w->rq, a))) {
    /* One queued actor runs right after the current turn: waking a
     * worker for it costs more than it saves (ping-pong pairs stay on one
     * core). Two or more is surplus another worker could take. */
    if (act_runq_len(&w->rq) > 1) notify(w->sched);
    return;
  }
  overflow(w, a);
  notify(w->sched);
}

__attribute__((noinline)) static void submit_inject(act_sched_t *s, act_actor_t *a) {
  act_inject_push(&s->inject, &a->link);
  notify(s);
}

void act_sched_submit(act_sched_t *s, act_actor_t *a) {
  act_worker_t *w = tls_worker;
  if (w != NULL && w->sched == s) {
    submit_local(w, a);
    return;
  }
  /* A completion-queue or pinned thread in an inline run keeps it. */
  if (act_inline_take(s, a)) return;
  submit_inject(s, a);
}

static act_actor_t *from_inject(act_worker_t *w) {
  act_sched_t *s = w->sched;
  act_link_t *got[INJECT_BATCH];
  uint32_t room = ACT_RUNQ_CAP - act_runq_len(&w->rq);
  size_t max = room < INJECT_BATCH ? room : INJECT_BATCH;
  if (max == 0) max = 1;
  size_t n = act_inject_pop(&s->inject, got, max);
  if (n == 0) return NULL;
  for (size_t i = 1; i < n; i++) {
    if (!act_runq_push(&w->rq, actor_of(got[i])))
      act_inject_push(&s->inject, got[i]); /* cannot happen: room counted */
  }
  if (n > 1) notify(s);
  return actor_of(got[0]);
}

static uint32_t next_rand(act_worker_t *w) {
  uint32_t x = w->rng; /* xorshift32 */
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  w->rng = x;
  return x;
}

static act_actor_t *steal(act_worker_t *w) {
  act_sched_t *s = w->sched;
  unsigned n = s->nworkers;
  unsigned start = next_rand(w) % n;
  for (unsigned i = 0; i < n; i++) {
    act_worker_t *v = &s->workers[(start + i) % n];
    if (v == w) continue;
    act_actor_t *a = act_runq_steal(&v->rq, &w->rq);
    if (a != NULL) {
      if (act_runq_len(&w->rq) > 0) notify(s);
      return a;
    }
  }
  return NULL;
}

static act_actor_t *find_work(act_worker_t *w) {
  act_actor_t *a;
  /* A worker busy with local actors still takes from the inject queue now
   * and then, so outside senders are not starved. */
  if (++w->tick % INJECT_EVERY == 0 && (a = from_inject(w)) != NULL) return a;
  if ((a = act_runq_pop(&w->rq)) != NULL) return a;
  if ((a = from_inject(w)) != NULL) return a;
  return steal(w);
}

static act_actor_t *spin_for_work(act_worker_t *w) {
  /* ck_backoff: plain compiler-barrier loops, no shared memory accessed,
   * so nothing for TSan to model. */
  ck_backoff_t backoff = CK_BACKOFF_INITIALIZER;
  for (int i = 0; i < SPIN_ROUNDS; i++) {
    /* Between rounds, not after the last (the sleep gives the core away):
     * the thread that makes our next work (an HTTP loop, a gRPC thread)
     * may be queued behind us on this core, so let it run. */
    if (i > 0) sched_yield();
    ck_backoff_eb(&backoff);
    act_actor_t *a = find_work(w);
    if (a != NULL) return a;
  }
  return NULL;
}

/* Is anything queued anywhere? Both helpers load with seq_cst: this is the
 * re-check half of the sleep protocol. */
static bool has_work(act_sched_t *s) {
  if (!act_inject_is_empty(&s->inject)) return true;
  for (unsigned i = 0; i < s->nworkers; i++)
    if (act_runq_len(&s->workers[i].rq) > 0) return true;
  return false;
}

/* Returns once woken, or at once when the re-check finds work/shutdown. */
static void sleep_until_work(act_worker_t *w) {
  act_sched_t *s = w->sched;
  /* seq_cst store and increment, then seq_cst loads in has_work and of
   * shutdown: the sleeper's half of the Dekker pair described at notify()
   * and at stop_and_join(). A push we miss below is one whose notifier sees
   * our increment, and then (acquire via seq_cst) our SLEEPING state. */
  atomic_store_explicit(&w->state, W_SLEEPING, memory_order_seq_cst);
  atomic_fetch_add_explicit(&s->nsleeping, 1, memory_order_seq_cst);
  if (has_work(s) || atomic_load_explicit(&s->shutdown, memory_order_seq_cst)) {
    unsigned expected = W_SLEEPING;
    /* relaxed CAS: only our own count entry is at stake; seq_cst count
     * change, as everywhere (see wake_one). */
    if (atomic_compare_exchange_strong_explicit(&w->state, &expected,
                                                W_RUNNING, memory_order_relaxed,
                                                memory_order_relaxed))
      atomic_fetch_sub_explicit(&s->nsleeping, 1, memory_order_seq_cst);
    else /* a notifier already took us off the count */
      atomic_store_explicit(&w->state, W_RUNNING, memory_order_relaxed);
    return;
  }
  /* acquire: pairs with the notifier's CAS. */
  while (atomic_load_explicit(&w->state, memory_order_acquire) == W_SLEEPING)
    act_futex_wait(&w->state, W_SLEEPING, UINT64_MAX);
  atomic_store_explicit(&w->state, W_RUNNING, memory_order_relaxed);
}

/* The next actor to run, or NULL when the runtime shuts down. */
static act_actor_t *next_actor(act_worker_t *w) {
  act_sched_t *s = w->sched;
  for (;;) {
    act_actor_t *a = find_work(w);
    if (a == NULL) a = spin_for_work(w);
    if (a != NULL) return a;
    /* acquire: pairs with act_sched_stop's store. */
    if (atomic_load_explicit(&s->shutdown, memory_order_acquire)) return NULL;
    sleep_until_work(w);
  }
}

static void run(act_worker_t *w, act_actor_t *a) {
  act_sched_t *s = w->sched;
  switch (act_actor_turn(a, s->batch)) {
    case ACT_TURN_WAIT:
      /* A sender is between exchange and link; if it was preempted, give
       * it our core instead of spinning on it. */
      if (++w->waits % WAIT_YIELD == 0)
        sched_yield();
      else
        act_cpu_relax();
      act_sched_submit(s, a);
      break;
    case ACT_TURN_MORE:
      w->waits = 0;
      act_sched_submit(s, a);
      break;
    case ACT_TURN_IDLE:
    case ACT_TURN_STOPPED:
      w->waits = 0;
      break;
  }
}

static void *worker_main(void *arg) {
  act_worker_t *w = arg;
  tls_worker = w;
  act_actor_t *a;
  while ((a = next_actor(w)) != NULL) run(w, a);
  tls_worker = NULL;
  return NULL;
}

static void stop_and_join(act_sched_t *s, unsigned started) {
  /* seq_cst store, then seq_cst CAS of each state: with the sleeper's
   * seq_cst state store and shutdown load, one total order holds all four,
   * so a worker either sees shutdown in its re-check or is seen asleep. */
  atomic_store_explicit(&s->shutdown, true, memory_order_seq_cst);
  for (unsigned i = 0; i < s->nworkers; i++) {
    act_worker_t *w = &s->workers[i];
    unsigned expected = W_SLEEPING;
    if (atomic_compare_exchange_strong_explicit(&w->state, &expected,
                                                W_NOTIFIED,
                                                memory_order_seq_cst,
                                                memory_order_seq_cst)) {
      atomic_fetch_sub_explicit(&s->nsleeping, 1, memory_order_seq_cst);
      act_futex_wake(&w->state, 1);
    }
  }
  for (unsigned i = 0; i < started; i++)
    pthread_join(s->workers[i].thread, NULL);
  free(s->workers);
  s->workers = NULL;
}

int act_sched_start(act_sched_t *s, act_runtime_t *rt, unsigned nworkers,
                    unsigned batch) {
  s->nworkers = nworkers;
  s->batch = batch;
  s->rt = rt;
  act_inject_init(&s->inject);
  atomic_init(&s->nsleeping, 0);
  atomic_init(&s->shutdown, false);
  s->workers = aligned_alloc(ACT_CACHE_LINE, nworkers * sizeof(act_worker_t));
  if (s->workers == NULL) return ENOMEM;
  for (unsigned i = 0; i < nworkers; i++) {
    act_worker_t *w = &s->workers[i];
    memset(w, 0, sizeof *w);
    act_runq_init(&w->rq);
    atomic_init(&w->state, W_RUNNING);
    w->sched = s;
    w->index = i;
    w->rng = 2654435761u * (i + 1);
  }
  /* Every worker is initialised before any starts: they look at each
   * other's queues. */
  for (unsigned i = 0; i < nworkers; i++) {
    int err = pthread_create(&s->workers[i].thread, NULL, worker_main,
                             &s->workers[i]);
    if (err != 0) {
      stop_and_join(s, i);
      return err;
    }
    /* Named by us, not by the thread, so the name is there on return. */
    char name[24];
    snprintf(name, sizeof name, "act-worker-%u", i);
    name[15] = '\0'; /* the kernel's limit */
    pthread_setname_np(s->workers[i].thread, name);
  }
  return 0;
}

void act_sched_stop(act_sched_t *s) { stop_and_join(s, s->nworkers); }
