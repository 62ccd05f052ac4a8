/* An actor's mailbox: intrusive lock-free multi-producer single-consumer
 * queue of act_msg_t whose push says "you must schedule the actor". Any
 * thread pushes; only the actor's current runner pops. See README.md. */
#ifndef NEREID_ACTORS_MAILBOX_H
#define NEREID_ACTORS_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actors/msg.h"

/** Runtime-private; public only so that actors can be embedded. `head` is
 * written by every sender, `tail` and `stub` only by the runner, so the
 * padding keeps `head` alone on its cache line whatever the alignment of
 * the struct that embeds the mailbox (no _Alignas: owners may malloc it). */
typedef struct act_mailbox {
  char pad_before[56];
  /* Newest message (or &stub). Low bit set: the mailbox is empty AND the
   * actor is not scheduled; the push that clears it must schedule. */
  _Atomic uintptr_t head;
  char pad_after[56];
  act_msg_t *tail; /* oldest message not yet popped (or &stub) */
  act_msg_t stub;  /* keeps the list non-empty so a popped message is free */
} act_mailbox_t;

/** Makes the mailbox empty and unscheduled. Not concurrent with anything. */
void act_mailbox_init(act_mailbox_t *mb);

/** Appends msg. Any thread, concurrently with other pushes and with the
 * consumer; wait-free (one exchange, one store). FIFO per producer thread.
 * Returns true when the mailbox was empty and unscheduled: then exactly this
 * caller must schedule the actor (no other push can also see it). msg is the
 * runtime's from the call on; when this returns false the caller must not
 * touch the mailbox's owner again (it may already have run and been freed
 * if msg was its final message). */
bool act_mailbox_push(act_mailbox_t *mb, act_msg_t *msg);

/** Detaches the oldest message; the caller owns it completely (the mailbox
 * keeps no reference). Returns NULL when empty, or when the oldest message's
 * producer is between its two steps (then the mailbox is not empty:
 * act_mailbox_try_unschedule fails and the actor stays scheduled). Only the
 * actor's current runner; wait-free apart from that window. */
act_msg_t *act_mailbox_pop(act_mailbox_t *mb);

/** The newest message at this instant (never dereferenced by callers): a
 * run stops after popping it, so that messages sent during the run wait for
 * the next turn. Only the runner. */
const act_msg_t *act_mailbox_newest(const act_mailbox_t *mb);

/** Runner only, after pop returned NULL or the batch ended. If the mailbox
 * is empty, marks it empty-and-unscheduled and returns true: from that
 * instant the next push schedules the actor, so the caller must not touch
 * the actor again. Returns false if a message is queued or being pushed:
 * the caller keeps it scheduled. Lock-free (one CAS). */
bool act_mailbox_try_unschedule(act_mailbox_t *mb);

/** True when nothing is queued or being pushed. Runner only; for asserts. */
bool act_mailbox_is_drained(const act_mailbox_t *mb);

#endif
