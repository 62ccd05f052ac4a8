/* An actor's mailbox: intrusive lock-free multi-producer single-consumer
 * queue of act_msg_t whose push says "you must schedule the actor". Any
 * thread pushes; only the actor's current runner pops. See README.md
 * ("Mailbox protocol"): Vyukov's queue with a stub node, plus an "empty
 * and unscheduled" bit in the head pointer. Every operation is inline
 * here (a request's hops make about 20 of these calls). */
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

/* Low bit of `head`: the mailbox is empty and the actor unscheduled. */
#define ACT_MAILBOX_UNSCHEDULED ((uintptr_t)1)

/** Makes the mailbox empty and unscheduled. Not concurrent with anything.
 * Inline, like the rest: a call actor is initialised per request. */
static inline void act_mailbox_init(act_mailbox_t *mb) {
  atomic_init(&mb->stub.next, NULL);
  mb->stub.kind = 0;
  mb->stub.flags = 0;
  mb->tail = &mb->stub;
  atomic_init(&mb->head, (uintptr_t)&mb->stub | ACT_MAILBOX_UNSCHEDULED);
}

/* The two steps of a push (internal). */
static inline uintptr_t act_mailbox_link_in_(act_mailbox_t *mb, act_msg_t *msg) {
  /* relaxed: msg is not reachable yet; the exchange below publishes it. */
  atomic_store_explicit(&msg->next, NULL, memory_order_relaxed);
  /* acq_rel: release orders our NULL store before the next producer's
   * store to msg->next (it acquires msg here); acquire pairs with the
   * runner's release in try_unschedule, so when we see the bit every
   * write of the last run happens-before our scheduling of the actor. */
  uintptr_t prev = atomic_exchange_explicit(&mb->head, (uintptr_t)msg,
                                            memory_order_acq_rel);
  act_msg_t *prev_msg = (act_msg_t *)(prev & ~ACT_MAILBOX_UNSCHEDULED);
  /* release: the runner acquires this link before it reads msg's body. The
   * runner cannot pop prev_msg before this store (its next is still NULL),
   * so prev_msg is still valid here. */
  atomic_store_explicit(&prev_msg->next, msg, memory_order_release);
  return prev;
}

/** Appends msg. Any thread, concurrently with other pushes and with the
 * consumer; wait-free (one exchange, one store). FIFO per producer thread.
 * Returns true when the mailbox was empty and unscheduled: then exactly this
 * caller must schedule the actor (no other push can also see it). msg is the
 * runtime's from the call on; when this returns false the caller must not
 * touch the mailbox's owner again (it may already have run and been freed
 * if msg was its final message). */
static inline bool act_mailbox_push(act_mailbox_t *mb, act_msg_t *msg) {
  return (act_mailbox_link_in_(mb, msg) & ACT_MAILBOX_UNSCHEDULED) != 0;
}

/** Detaches the oldest message; the caller owns it completely (the mailbox
 * keeps no reference). Returns NULL when empty, or when the oldest message's
 * producer is between its two steps (then the mailbox is not empty:
 * act_mailbox_try_unschedule fails and the actor stays scheduled). Only the
 * actor's current runner; wait-free apart from that window. */
static inline act_msg_t *act_mailbox_pop(act_mailbox_t *mb) {
  act_msg_t *stub = &mb->stub;
  act_msg_t *tail = mb->tail;
  /* acquire: pairs with the producer's release link; makes the body of the
   * message we are about to hand out visible. */
  act_msg_t *next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (tail == stub) {
    if (next == NULL) return NULL;
    mb->tail = next;
    tail = next;
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
  }
  if (next != NULL) {
    mb->tail = next;
    /* The next pop reads next->next: start fetching that line (usually
     * written by another core) while the behaviour handles tail. */
    __builtin_prefetch(next);
    return tail;
  }
  /* tail is the newest linked message. Detach it by swinging head from it
   * to the stub (the queue always keeps a node). A CAS rather than a push,
   * so the stub never lands behind a producer that is between its exchange
   * and its link: head == &stub then always means "empty". head has no
   * ACT_MAILBOX_UNSCHEDULED bit here: a running actor is scheduled. relaxed store:
   * published by the CAS. acq_rel on success: release publishes stub.next
   * = NULL to the next producer; relaxed on failure: a push is in flight,
   * its link will come, report "nothing yet". */
  atomic_store_explicit(&stub->next, NULL, memory_order_relaxed);
  uintptr_t expected = (uintptr_t)tail;
  if (!atomic_compare_exchange_strong_explicit(&mb->head, &expected,
                                               (uintptr_t)stub,
                                               memory_order_acq_rel,
                                               memory_order_relaxed))
    return NULL;
  mb->tail = stub;
  return tail;
}

/** The newest message at this instant (never dereferenced by callers): a
 * run stops after popping it, so that messages sent during the run wait for
 * the next turn. Only the runner. */
static inline const act_msg_t *act_mailbox_newest(const act_mailbox_t *mb) {
  /* relaxed: the value is only compared with popped pointers. */
  uintptr_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
  return (const act_msg_t *)(head & ~ACT_MAILBOX_UNSCHEDULED);
}

/** Runner only, after pop returned NULL or the batch ended. If the mailbox
 * is empty, marks it empty-and-unscheduled and returns true: from that
 * instant the next push schedules the actor, so the caller must not touch
 * the actor again. Returns false if a message is queued or being pushed:
 * the caller keeps it scheduled. Lock-free (one CAS). */
static inline bool act_mailbox_try_unschedule(act_mailbox_t *mb) {
  act_msg_t *stub = &mb->stub;
  if (mb->tail != stub) return false; /* a message is linked or in flight */
  /* Empty exactly when no producer has exchanged head since the stub went
   * in. release: everything this run wrote happens-before the run of the
   * producer that sees the bit (it acquires in link_in). relaxed on
   * failure: we keep running and re-read through acquiring loads. */
  uintptr_t expected = (uintptr_t)stub;
  return atomic_compare_exchange_strong_explicit(
      &mb->head, &expected, (uintptr_t)stub | ACT_MAILBOX_UNSCHEDULED,
      memory_order_release, memory_order_relaxed);
}

/** True when nothing is queued or being pushed. Runner only. */
static inline bool act_mailbox_is_drained(const act_mailbox_t *mb) {
  /* relaxed: a snapshot; a push ordered before this call (happens-before)
   * is seen by coherence, and callers treat any other as a race with
   * them (the stop rules). */
  uintptr_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
  return mb->tail == &mb->stub &&
         (act_msg_t *)(head & ~ACT_MAILBOX_UNSCHEDULED) == &mb->stub;
}

#endif
