/* The scheduler (runtime-internal): worker threads with local run queues,
 * stealing, the inject queue, and the idle-worker sleep/wake protocol. */
#ifndef NEREID_ACTORS_SCHEDULER_H
#define NEREID_ACTORS_SCHEDULER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "actors/actor.h"
#include "actors/base.h"
#include "actors/inject.h"

typedef struct act_worker act_worker_t;

typedef struct act_sched {
  act_worker_t *workers; /* set at start, read-only after */
  unsigned nworkers;
  unsigned batch;
  act_runtime_t *rt;
  act_inject_t inject;   /* cache-line aligned inside */
  /* Workers that announced they are going to sleep and were not notified
   * yet; producers read it after every push to decide on a wake-up. */
  _Alignas(ACT_CACHE_LINE) atomic_uint nsleeping;
  atomic_bool shutdown;
} act_sched_t;

/** Starts nworkers worker threads. 0 or an errno value (nothing running). */
int act_sched_start(act_sched_t *s, act_runtime_t *rt, unsigned nworkers,
                    unsigned batch);

/** Tells the workers to exit and joins them. Requires empty run queues (the
 * runtime is quiesced). Outside thread. */
void act_sched_stop(act_sched_t *s);

/** Makes a runnable actor (one whose mailbox push said "schedule") run on
 * some worker. On a worker of this scheduler: its local run queue; else the
 * inject queue. Wakes a sleeping worker when that work could otherwise wait.
 * Any thread; lock-free. */
void act_sched_submit(act_sched_t *s, act_actor_t *a);

#endif
