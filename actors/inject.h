/* The inject queue: runnable actors scheduled by threads outside the
 * runtime (or for a full local queue). Any thread pushes; workers pop. */
#ifndef NEREID_ACTORS_INJECT_H
#define NEREID_ACTORS_INJECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "actors/base.h"

/** Intrusive link embedded in whatever the queue carries (an actor). */
typedef struct act_link {
  struct act_link *_Atomic next;
} act_link_t;

/** Intrusive MPSC queue (Vyukov, with a stub) whose consumer side is
 * serialised by a try-lock, so any number of workers may consume. */
typedef struct act_inject {
  _Alignas(ACT_CACHE_LINE) act_link_t *_Atomic head; /* producers */
  _Alignas(ACT_CACHE_LINE) atomic_bool busy;         /* consumer try-lock */
  act_link_t *tail;                                  /* under busy */
  act_link_t stub;
} act_inject_t;

/** Empties q. Not concurrent with anything. */
void act_inject_init(act_inject_t *q);

/** Appends l. Any thread; wait-free; FIFO per producer. l belongs to the
 * queue until popped. */
void act_inject_push(act_inject_t *q, act_link_t *l);

/** Pops up to max links, oldest first, into out; returns how many. Any
 * thread. Returns 0 when empty, when a push is half done, or when another
 * consumer is popping (never waits for it): a 0 is not proof of emptiness,
 * act_inject_is_empty is. */
size_t act_inject_pop(act_inject_t *q, act_link_t **out, size_t max);

/** True when nothing is queued or being pushed at this instant. Any thread.
 * A seq_cst load, and act_inject_push is a seq_cst exchange: the scheduler's
 * sleep protocol relies on both. */
bool act_inject_is_empty(const act_inject_t *q);

#endif
