/* Mailbox (see mailbox.h and README.md "Mailbox protocol"): Vyukov's
 * intrusive MPSC queue with a stub node, plus an "empty and unscheduled"
 * bit in the head pointer. Producers: any thread. Consumer: the runner.
 * Push, pop, newest, try_unschedule and is_drained are inline in
 * mailbox.h (a request's hops make about 20 of these calls); init here. */
#include "actors/mailbox.h"

#define UNSCHEDULED ACT_MAILBOX_UNSCHEDULED

void act_mailbox_init(act_mailbox_t *mb) {
  atomic_init(&mb->stub.next, NULL);
  mb->stub.kind = 0;
  mb->stub.flags = 0;
  mb->tail = &mb->stub;
  atomic_init(&mb->head, (uintptr_t)&mb->stub | UNSCHEDULED);
}
