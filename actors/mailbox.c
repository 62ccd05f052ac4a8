/* Mailbox (see mailbox.h and README.md "Mailbox protocol"): Vyukov's
 * intrusive MPSC queue with a stub node, plus an "empty and unscheduled"
 * bit in the head pointer. Producers: any thread. Consumer: the runner. */
#include "actors/mailbox.h"

#define UNSCHEDULED ((uintptr_t)1)

void act_mailbox_init(act_mailbox_t *mb) {
  atomic_init(&mb->stub.next, NULL);
  mb->stub.kind = 0;
  mb->stub.flags = 0;
  mb->tail = &mb->stub;
  atomic_init(&mb->head, (uintptr_t)&mb->stub | UNSCHEDULED);
}

static inline uintptr_t link_in(act_mailbox_t *mb, act_msg_t *msg) {
  /* relaxed: msg is not reachable yet; the exchange below publishes it. */
  atomic_store_explicit(&msg->next, NULL, memory_order_relaxed);
  /* acq_rel: release orders our NULL store before the next producer's
   * store to msg->next (it acquires msg here); acquire pairs with the
   * runner's release in try_unschedule, so when we see UNSCHEDULED every
   * write of the last run happens-before our scheduling of the actor. */
  uintptr_t prev = atomic_exchange_explicit(&mb->head, (uintptr_t)msg,
                                            memory_order_acq_rel);
  act_msg_t *prev_msg = (act_msg_t *)(prev & ~UNSCHEDULED);
  /* release: the runner acquires this link before it reads msg's body. The
   * runner cannot pop prev_msg before this store (its next is still NULL),
   * so prev_msg is still valid here. */
  atomic_store_explicit(&prev_msg->next, msg, memory_order_release);
  return prev;
}

bool act_mailbox_push(act_mailbox_t *mb, act_msg_t *msg) {
  return (link_in(mb, msg) & UNSCHEDULED) != 0;
}

act_msg_t *act_mailbox_pop(act_mailbox_t *mb) {
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
   * UNSCHEDULED bit here: a running actor is scheduled. relaxed store:
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

const act_msg_t *act_mailbox_newest(const act_mailbox_t *mb) {
  /* relaxed: the value is only compared with popped pointers. */
  uintptr_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
  return (const act_msg_t *)(head & ~UNSCHEDULED);
}

bool act_mailbox_try_unschedule(act_mailbox_t *mb) {
  act_msg_t *stub = &mb->stub;
  if (mb->tail != stub) return false; /* a message is linked or in flight */
  /* Empty exactly when no producer has exchanged head since the stub went
   * in. release: everything this run wrote happens-before the run of the
   * producer that sees the bit (it acquires in link_in). relaxed on
   * failure: we keep running and re-read through acquiring loads. */
  uintptr_t expected = (uintptr_t)stub;
  return atomic_compare_exchange_strong_explicit(
      &mb->head, &expected, (uintptr_t)stub | UNSCHEDULED,
      memory_order_release, memory_order_relaxed);
}

bool act_mailbox_is_drained(const act_mailbox_t *mb) {
  /* relaxed: a debugging snapshot. */
  uintptr_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
  return mb->tail == &mb->stub &&
         (act_msg_t *)(head & ~UNSCHEDULED) == &mb->stub;
}
