/* Deadlines and bounded semaphore waits (see deadline.h). */
#include "server/common/deadline.h"

#include <errno.h>
#include <time.h>

#define SLICE_NS 100000000ull

/* CLOCK_MONOTONIC, as act_now_ns (common/ does not depend on actors/). */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t srv_deadline_in_secs(long secs) {
  return now_ns() + (secs > 0 ? (uint64_t)secs : 0) * 1000000000ull;
}

bool srv_deadline_passed(uint64_t deadline_ns) {
  return deadline_ns != SRV_DEADLINE_NONE && now_ns() >= deadline_ns;
}

/* One wait of at most `ns` on the wall clock. */
static bool wait_slice(sem_t *sem, uint64_t ns) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  uint64_t nsec = (uint64_t)until.tv_nsec + ns;
  until.tv_sec += (time_t)(nsec / 1000000000ull);
  until.tv_nsec = (long)(nsec % 1000000000ull);
  while (sem_timedwait(sem, &until) != 0)
    if (errno != EINTR) return false;
  return true;
}

bool srv_sem_wait_until(sem_t *sem, uint64_t deadline_ns) {
  if (deadline_ns == SRV_DEADLINE_NONE) {
    while (sem_wait(sem) != 0) {
    }
    return true;
  }
  for (;;) {
    if (sem_trywait(sem) == 0) return true;
    uint64_t now = now_ns();
    if (now >= deadline_ns) return false;
    uint64_t left = deadline_ns - now;
    if (wait_slice(sem, left < SLICE_NS ? left : SLICE_NS)) return true;
  }
}
