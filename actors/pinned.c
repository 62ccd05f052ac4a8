/* Pinned actors (see pinned.h and README.md "Pinned actors"): each has a
 * thread that runs its turns and sleeps on `wake` when the mailbox is
 * empty. Senders: any thread. The set: any thread, under its mutex. */
#define _GNU_SOURCE /* pthread_setname_np */
#include "actors/pinned.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "actors/futex.h"
#include "actors/runtime_internal.h"
#include "actors/timer.h"

/* `wake` values. IDLE: the thread is awake or about to sleep; NOTIFIED: a
 * sender scheduled the actor; SLEEPING: the thread is (about to be) in the
 * futex and a sender must wake it. */
enum { PIN_IDLE = 0, PIN_NOTIFIED = 1, PIN_SLEEPING = 2 };

enum {
  /* How long the thread polls its mailbox before it sleeps. A sleeping
   * thread's wake costs the sender a futex call and the request the time
   * a halted vCPU takes to come back: on the 2-vCPU VM of docs/perf.md,
   * ModelInfer at one in flight took 62-84 us with 5 us of polling and
   * 34-40 us with 50 us. On a slower day of that VM the next request came
   * after more than 50 us, the thread slept every time and the request
   * took 104-111 us; 100 us of polling gave 52-74 us, 200 us 52 us
   * (actors/README.md). Under load the thread rarely sleeps at all. */
  PIN_SPIN_NS = 200000,
  PIN_SPIN_CHECK = 16, /* polls between two reads of the clock */
  WAIT_YIELD = 64,     /* WAIT turns in a row before yielding the core */
};

void act_pinset_init(act_pinset_t *s) {
  pthread_mutex_init(&s->mu, NULL);
  s->live = NULL;
  s->spare = NULL;
}

void act_pinned_wake(act_pin_t *p) {
  /* release: pairs with the thread's acquire in pin_wait, so the thread
   * that sees NOTIFIED also sees the mailbox state that made us send it
   * (the mailbox's own acquire/release pairs carry the message itself). */
  if (atomic_exchange_explicit(&p->wake, PIN_NOTIFIED, memory_order_release) ==
      PIN_SLEEPING)
    act_futex_wake(&p->wake, 1);
}

/* Returns once a sender has scheduled the actor. Exactly one sender does so
 * per unschedule, so the consume below cannot overwrite a second notice. */
static void pin_wait(act_pin_t *p) {
  uint64_t until = act_now_ns() + PIN_SPIN_NS;
  for (unsigned i = 1;; i++) {
    /* relaxed poll; the acquire load below confirms. */
    if (atomic_load_explicit(&p->wake, memory_order_relaxed) == PIN_NOTIFIED)
      break;
    act_cpu_relax();
    if (i % PIN_SPIN_CHECK == 0 && act_now_ns() >= until) break;
  }
  for (;;) {
    /* acquire: pairs with act_pinned_wake's release. */
    unsigned v = atomic_load_explicit(&p->wake, memory_order_acquire);
    if (v == PIN_NOTIFIED) {
      /* relaxed: no sender writes `wake` until we unschedule again. */
      atomic_store_explicit(&p->wake, PIN_IDLE, memory_order_relaxed);
      return;
    }
    /* relaxed: the futex re-checks the value; NOTIFIED makes the CAS fail
     * and the loop consume it. */
    if (v == PIN_IDLE &&
        !atomic_compare_exchange_strong_explicit(&p->wake, &v, PIN_SLEEPING,
                                                 memory_order_relaxed,
                                                 memory_order_relaxed))
      continue;
    act_futex_wait(&p->wake, PIN_SLEEPING, UINT64_MAX);
  }
}

static void *pinned_main(void *arg) {
  act_pin_t *p = arg;
  act_actor_t *a = p->actor;
  act_runtime_t *rt = p->rt;
  unsigned batch = rt->batch;
  for (;;) {
    pin_wait(p);
    act_turn_t r;
    unsigned waits = 0;
    while ((r = act_actor_turn(a, batch)) != ACT_TURN_IDLE) {
      if (r == ACT_TURN_STOPPED) goto stopped; /* a is gone */
      if (r == ACT_TURN_WAIT) {
        if (++waits % WAIT_YIELD == 0)
          sched_yield();
        else
          act_cpu_relax();
      }
    }
  }
stopped:
  /* release: act_pinset_reap acquires it before joining. Before the death
   * is counted, so that a reap after act_runtime_quiesce finds it. */
  atomic_store_explicit(&p->exited, true, memory_order_release);
  act_runtime_actor_died(rt);
  return NULL;
}

int act_pinned_start(act_runtime_t *rt, act_actor_t *a, const char *name) {
  act_pinset_t *s = &rt->pinned;
  pthread_mutex_lock(&s->mu);
  act_pin_t *p = s->spare;
  if (p != NULL) s->spare = p->next;
  pthread_mutex_unlock(&s->mu);
  if (p == NULL) {
    p = aligned_alloc(ACT_CACHE_LINE, sizeof *p);
    if (p == NULL) return ENOMEM;
  }
  memset(p, 0, sizeof *p);
  atomic_init(&p->wake, PIN_IDLE);
  atomic_init(&p->exited, false);
  p->actor = a;
  p->rt = rt;
  if (name != NULL) {
    strncpy(p->name, name, sizeof p->name - 1);
    p->name[sizeof p->name - 1] = '\0';
  }
  a->pin = p;
  pthread_mutex_lock(&s->mu);
  int err = pthread_create(&p->thread, NULL, pinned_main, p);
  if (err == 0) {
    /* Named by us, not by the thread, so the name is there on return. */
    if (p->name[0] != '\0') pthread_setname_np(p->thread, p->name);
    p->next = s->live;
    s->live = p;
  } else {
    a->pin = NULL;
    p->next = s->spare;
    s->spare = p;
  }
  pthread_mutex_unlock(&s->mu);
  return err;
}

void act_pinset_reap(act_pinset_t *s) {
  pthread_mutex_lock(&s->mu);
  for (act_pin_t **pp = &s->live; *pp != NULL;) {
    act_pin_t *p = *pp;
    /* acquire: pairs with the thread's last store; it is past its actor. */
    if (!atomic_load_explicit(&p->exited, memory_order_acquire)) {
      pp = &p->next;
      continue;
    }
    pthread_join(p->thread, NULL);
    *pp = p->next;
    p->next = s->spare;
    s->spare = p;
  }
  pthread_mutex_unlock(&s->mu);
}

void act_pinset_free(act_pinset_t *s) {
  act_pin_t *lists[2] = {s->live, s->spare};
  for (int i = 0; i < 2; i++) {
    for (act_pin_t *p = lists[i]; p != NULL;) {
      act_pin_t *next = p->next;
      if (i == 0) pthread_join(p->thread, NULL);
      free(p);
      p = next;
    }
  }
  s->live = s->spare = NULL;
  pthread_mutex_destroy(&s->mu);
}
