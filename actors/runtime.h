/* The runtime: worker threads, the timer thread and pinned threads, and
 * their lifecycle. Created and freed by a thread outside the runtime. */
#ifndef NEREID_ACTORS_RUNTIME_H
#define NEREID_ACTORS_RUNTIME_H

#include "actors/actor.h"

/** Settings for act_runtime_new; zero fields take defaults. */
typedef struct {
  /** Worker threads; 0 = number of online cores. */
  unsigned workers;
  /** Most messages an actor handles per turn before others get a go;
   * 0 = 64. */
  unsigned batch;
} act_config_t;

/** Starts the worker threads and the timer thread. cfg may be NULL (all
 * defaults). Returns NULL on failure (threads or memory), having started
 * nothing. Any thread outside a runtime. */
act_runtime_t *act_runtime_new(const act_config_t *cfg);

/** Number of worker threads. Any thread. */
unsigned act_runtime_workers(const act_runtime_t *rt);

/** Blocks the calling thread until no actor of rt is alive: every actor has
 * handled its stop message (and pinned threads have left their
 * behaviours). Callers send the stop messages first. A thread outside the
 * runtime only (a worker would wait for itself). Returns at once when
 * nothing is alive; new actors may be created afterwards. */
void act_runtime_quiesce(act_runtime_t *rt);

/** Joins the threads of pinned actors that have stopped and keeps their
 * records for reuse, so a long-lived process that creates and stops pinned
 * actors does not accumulate finished threads. A pinned actor's thread is
 * reapable once its stop behaviour has returned (so after
 * act_runtime_quiesce, all are). Any thread except a pinned thread of rt
 * that is still running (it never joins itself, but may wait a moment for
 * a thread that is exiting). */
void act_runtime_reap(act_runtime_t *rt);

/** Stops and joins every thread (workers, timer, pinned), drops timers
 * still armed (their messages are not delivered nor freed: they belong to
 * whoever armed them), frees the runtime, then returns the calling
 * thread's cached messages and the global message pool to the allocator.
 * Requires: quiesced (no actor alive), and every act_send,
 * act_timer_arm/cancel and act_actor_init* call on rt has returned. A
 * thread outside the runtime. */
void act_runtime_free(act_runtime_t *rt);

#endif
