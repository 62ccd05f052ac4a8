/* The clock for statistics timestamps: CLOCK_MONOTONIC nanoseconds, the
 * clock of Triton's std::chrono::steady_clock on Linux, which the server
 * compares our timestamps against. Any thread. */
#ifndef NEREID_BACKENDS_COMMON_CLOCK_H
#define NEREID_BACKENDS_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t bk_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
