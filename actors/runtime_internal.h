/* The runtime's internal wiring: the runtime struct and the calls between
 * its files (scheduler, actors, pinned threads, timers). Not for users. */
#ifndef NEREID_ACTORS_RUNTIME_INTERNAL_H
#define NEREID_ACTORS_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "actors/actor.h"
#include "actors/base.h"
#include "actors/pinned.h"
#include "actors/scheduler.h"

struct act_timers;

struct act_runtime {
  act_sched_t sched;          /* workers, run queues, inject queue */
  act_pinset_t pinned;        /* pinned threads */
  struct act_timers *timers;  /* timer thread */
  unsigned batch;
  /* Actors initialised and not yet past their stop message. */
  _Alignas(ACT_CACHE_LINE) atomic_size_t alive;
  pthread_mutex_t quiesce_mu; /* with quiesce_cv: wakes act_runtime_quiesce */
  pthread_cond_t quiesce_cv;
};

/* An actor became alive / finished its stop message. Any thread. */
void act_runtime_actor_born(act_runtime_t *rt);
void act_runtime_actor_died(act_runtime_t *rt);

/* Result of one turn of an actor. */
typedef enum {
  ACT_TURN_IDLE,    /* mailbox empty: unscheduled, do not touch the actor */
  ACT_TURN_MORE,    /* still scheduled: run it again later */
  ACT_TURN_WAIT,    /* still scheduled, but handled nothing: the next
                       message's sender is between its two steps */
  ACT_TURN_STOPPED, /* handled its stop message: gone */
} act_turn_t;

/* Runs up to `batch` messages of a scheduled actor (stopping after the
 * newest message seen at the start). The scheduled actor's runner only. */
act_turn_t act_actor_turn(act_actor_t *a, unsigned batch);

/* This thread's inline run (inline.c, inline.h): the actors its sends
 * made runnable, kept to run at the outermost act_inline_end. The
 * thread's own (no atomics). Here, not in inline.c, so that
 * act_sched_submit takes into it without a call. */
enum {
  /* Actors kept at most; more go to the workers. A run keeps one to three
   * (call, model, ensemble); the FIFO is thread-local, and
   * libtritonserver.so's thread-locals must stay small enough for a
   * dlopen (server/common/block_pool.md, "Cost"). */
  ACT_INLINE_CAP = 32,
};
typedef struct {
  act_sched_t *sched; /* the open run's scheduler; NULL: none open */
  unsigned depth;     /* nesting of begin/end */
  unsigned head, len; /* len is 0 outside a run: every end drains it */
  act_actor_t *items[ACT_INLINE_CAP];
} act_inline_fifo_t;

extern _Thread_local act_inline_fifo_t act_inline_fifo ACT_TLS_INITIAL_EXEC;

/* Keeps `a` for this thread's inline run when one is open for scheduler s
 * and has room; false: schedule it as usual. The calling thread's own. */
static inline bool act_inline_take(act_sched_t *s, act_actor_t *a) {
  act_inline_fifo_t *t = &act_inline_fifo;
  if (t->sched != s || t->len == ACT_INLINE_CAP) return false;
  t->items[(t->head + t->len++) % ACT_INLINE_CAP] = a;
  return true;
}

/* Timer thread (timer.c). start: NULL on failure. stop: joins it. */
struct act_timers *act_timers_start(act_runtime_t *rt);
void act_timers_stop(struct act_timers *tm);

#endif
