/* Mailbox (see mailbox.h and README.md "Mailbox protocol"): Vyukov's
 * intrusive MPSC queue with a stub node, plus an "empty and unscheduled"
 * bit in the head pointer. Producers: any thread. Consumer: the runner.
 * Push, pop, newest and try_unschedule are inline in mailbox.h (a
 * request's hops make about 20 of these calls); init and the assert here. */
#include "actors/mailbox.h"

#define UNSCHEDULED ACT_MAILBOX_UNSCHEDULED

void act_mailbox_init(act_mailbox_t *mb) {
  atomic_init(&mb->stub.next, NULL);
  mb->stub.kind = 0;
  mb->stub.flags = 0;
  mb->tail = &mb->stub;
  atomic_init(&mb->head, (uintptr_t)&mb->stub | UNSCHEDULED);
}

bool act_mailbox_is_drained(const act_mailbox_t *mb) {
  /* relaxed: a debugging snapshot. */
  uintptr_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
  return mb->tail == &mb->stub &&
         (act_msg_t *)(head & ~UNSCHEDULED) == &mb->stub;
}
