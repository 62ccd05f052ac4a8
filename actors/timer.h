/* Timers: a message delivered to an actor at a deadline, by the runtime's
 * timer thread. Any thread arms and cancels. */
#ifndef NEREID_ACTORS_TIMER_H
#define NEREID_ACTORS_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "actors/actor.h"

/** Runtime-private fields (guarded by the runtime's timer lock); public so
 * that a timer can be embedded in its owner. One timer carries at most one
 * pending delivery. */
typedef struct act_timer {
  uint64_t deadline_ns;
  uint64_t seq;      /* arm order: equal deadlines fire in arm order */
  act_actor_t *to;
  act_msg_t *msg;
  uint32_t slot;     /* heap index + 1 while armed, 0 otherwise */
} act_timer_t;

/** CLOCK_MONOTONIC in nanoseconds. Any thread; vDSO, no syscall. Inline:
 * a request reads it four times. */
static inline uint64_t act_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Makes t unarmed. Not concurrent with anything on t. */
void act_timer_init(act_timer_t *t);

/** Delivers msg to `to` (as act_send would) at deadline_ns (act_now_ns
 * clock; a past deadline fires at once). Microsecond accuracy: the timer
 * thread sleeps with 1 ns timer slack. Any thread; takes the timer lock for
 * a heap insertion (no I/O; a futex wake when the new deadline is the
 * earliest). t must be unarmed (initialised, cancelled, or fired); t, `to`
 * and msg must stay valid until delivery or a successful cancel; msg
 * belongs to the runtime meanwhile. Equal deadlines fire in arm order. */
void act_timer_arm(act_runtime_t *rt, act_timer_t *t, uint64_t deadline_ns,
                   act_actor_t *to, act_msg_t *msg);

/** true: t was armed and is now unarmed before firing; its msg belongs to
 * the caller again. false: t was not armed, or has fired or is firing:
 * its msg is delivered or will be (t itself is already unarmed and may be
 * re-armed). Any thread; takes the timer lock. */
bool act_timer_cancel(act_runtime_t *rt, act_timer_t *t);

#endif
