/* The clock for statistics timestamps: CLOCK_MONOTONIC nanoseconds, the
 * clock of Triton's std::chrono::steady_clock on Linux, which the server
 * compares our timestamps against; and sleeps on that clock. Any thread. */
#ifndef NEREID_BACKENDS_COMMON_CLOCK_H
#define NEREID_BACKENDS_COMMON_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t bk_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps `ms` milliseconds of CLOCK_MONOTONIC, signals notwithstanding
 * (an EINTR resumes the same deadline). Blocks the calling thread: only
 * for an instance's execute thread or a backend's own threads. */
static inline void bk_sleep_ms(uint32_t ms) {
  uint64_t until = bk_now_ns() + (uint64_t)ms * 1000000u;
  struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

#endif
