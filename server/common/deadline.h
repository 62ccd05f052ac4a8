/* Deadlines on CLOCK_MONOTONIC (the clock of act_now_ns), and waits on a
 * semaphore bounded by one: shutdown's timeouts. Any thread. */
#ifndef NEREID_SERVER_COMMON_DEADLINE_H
#define NEREID_SERVER_COMMON_DEADLINE_H

#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

/** A deadline that never comes: waits without bound. */
#define SRV_DEADLINE_NONE UINT64_MAX

/** The deadline `secs` seconds from now (negative counts as 0). */
uint64_t srv_deadline_in_secs(long secs);

/** Whether the deadline has passed. */
bool srv_deadline_passed(uint64_t deadline_ns);

/** Waits on `sem` until it is posted (true; the post is consumed) or the
 *  deadline passes (false; nothing consumed). Waits in slices of at most
 *  100 ms on CLOCK_REALTIME (sem_timedwait: ThreadSanitizer sees it), each
 *  checked against the monotonic deadline, so a jump of the wall clock
 *  moves the end by one slice at most. */
bool srv_sem_wait_until(sem_t *sem, uint64_t deadline_ns);

#endif
