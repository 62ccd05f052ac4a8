/* A worker's local run queue: bounded ring of runnable actors. Its owner
 * worker pushes and pops (FIFO); idle workers steal half from the front. */
#ifndef NEREID_ACTORS_RUNQ_H
#define NEREID_ACTORS_RUNQ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actors/base.h"

struct act_actor;

#define ACT_RUNQ_CAP 256u /* power of two */

/** Single producer (the owner), multiple consumers (owner and thieves).
 * `head` and `tail` are free-running counters; the slots between them are
 * queued. */
typedef struct act_runq {
  _Alignas(ACT_CACHE_LINE) _Atomic uint32_t head; /* consumers CAS it */
  _Alignas(ACT_CACHE_LINE) _Atomic uint32_t tail; /* only the owner stores */
  _Alignas(ACT_CACHE_LINE) struct act_actor *_Atomic slot[ACT_RUNQ_CAP];
} act_runq_t;

/** Empties q. Not concurrent with anything. */
void act_runq_init(act_runq_t *q);

/** Appends a. Owner only; wait-free. Returns false when q is full (a is not
 * queued then). */
bool act_runq_push(act_runq_t *q, struct act_actor *a);

/** Removes the oldest actor, or returns NULL when empty. Owner only;
 * lock-free (a CAS that only a thief can make fail). */
struct act_actor *act_runq_pop(act_runq_t *q);

/** Thief: takes about half of victim's actors (at least one when it has
 * any), moves all but one into `into` and returns that one, or NULL when
 * victim is empty. Any worker except victim's owner; `into` must be the
 * caller's own queue, and empty. Lock-free. */
struct act_actor *act_runq_steal(act_runq_t *victim, act_runq_t *into);

/** Number of queued actors at some instant. Any thread. Loads with
 * seq_cst, and pushes store tail with seq_cst: the scheduler's sleep
 * protocol relies on both. */
uint32_t act_runq_len(const act_runq_t *q);

#endif
