/* Futex sleep and wake (see futex.h). Any thread. */
#include "actors/futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void act_futex_wait(atomic_uint *word, unsigned expected, uint64_t deadline_ns) {
  struct timespec ts, *tsp = NULL;
  if (deadline_ns != UINT64_MAX) {
    ts.tv_sec = (time_t)(deadline_ns / 1000000000u);
    ts.tv_nsec = (long)(deadline_ns % 1000000000u);
    tsp = &ts;
  }
  /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so a
   * retry after a spurious wake-up does not stretch the wait. EINTR,
   * EAGAIN and ETIMEDOUT all mean "re-check", which every caller does. */
  syscall(SYS_futex, (void *)word, FUTEX_WAIT_BITSET_PRIVATE, expected, tsp,
          NULL, FUTEX_BITSET_MATCH_ANY);
}

void act_futex_wake(atomic_uint *word, int count) {
  syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}
