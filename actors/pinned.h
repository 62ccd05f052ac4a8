/* Pinned actors (runtime-internal): an actor that owns a thread, which
 * sleeps on a futex while the mailbox is empty. Senders wake it. */
#ifndef NEREID_ACTORS_PINNED_H
#define NEREID_ACTORS_PINNED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "actors/actor.h"
#include "actors/base.h"

/* A pinned thread's record. Owned by the runtime, not by the actor, so that
 * it outlives an embedded actor freed in its stop behaviour: the thread
 * still has to be joined, and a late futex wake may still touch `wake`. */
typedef struct act_pin {
  /* Futex word, written by the one sender that schedules the actor and by
   * the thread itself; alone on its line. */
  _Alignas(ACT_CACHE_LINE) atomic_uint wake;
  /* Set before the thread starts, read by the thread only. */
  _Alignas(ACT_CACHE_LINE) act_actor_t *actor;
  act_runtime_t *rt;
  char name[16];
  atomic_bool exited;      /* the thread's last act; reap joins after it */
  pthread_t thread;        /* under the set's mutex */
  struct act_pin *next;    /* under the set's mutex */
} act_pin_t;

/* All pin records of a runtime. */
typedef struct act_pinset {
  pthread_mutex_t mu;
  act_pin_t *live;  /* a thread started and not joined yet */
  act_pin_t *spare; /* joined; reused by the next pinned actor */
} act_pinset_t;

void act_pinset_init(act_pinset_t *s);

/* Starts a's thread (a is initialised, alive, with an empty unscheduled
 * mailbox). 0 or an errno value. Any thread. */
int act_pinned_start(act_runtime_t *rt, act_actor_t *a, const char *name);

/* The sender whose push found p's mailbox idle wakes its thread. Any
 * thread; never blocks (a futex wake only if the thread sleeps). */
void act_pinned_wake(act_pin_t *p);

/* Joins the threads that have exited; their records become spares. Any
 * thread except a running pinned thread of the set. */
void act_pinset_reap(act_pinset_t *s);

/* Joins every thread (they must all have been stopped) and frees every
 * record. Outside thread, at runtime free. */
void act_pinset_free(act_pinset_t *s);

#endif
