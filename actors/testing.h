/* Helpers shared by the actors/ tests: loop sizes scaled down under
 * sanitizers, waiting for a counter with a deadline, thread start/join.
 * Test code only; any test thread. */
#ifndef NEREID_ACTORS_TESTING_H
#define NEREID_ACTORS_TESTING_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "actors/timer.h"

/* Sanitized builds run 10-50x slower; tests pick their sizes at file
 * scope with ACT_TEST_N(normal, sanitized). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ACT_TEST_SANITIZED 1
#else
#define ACT_TEST_SANITIZED 0
#endif
#define ACT_TEST_N(normal, sanitized) (ACT_TEST_SANITIZED ? (sanitized) : (normal))

/* Waits until *v >= want or timeout_s passes; true when reached. Yields
 * rather than spinning hard: the machine may have two cores. */
static inline bool act_test_wait_ge(atomic_ullong *v, unsigned long long want,
                                    double timeout_s) {
  uint64_t end = act_now_ns() + (uint64_t)(timeout_s * 1e9);
  while (atomic_load(v) < want) {
    if (act_now_ns() > end) return false;
    sched_yield();
  }
  return true;
}

static inline void act_test_sleep_us(unsigned us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
  nanosleep(&ts, NULL);
}

/* Starts n threads running fn(&args[i]); args is an array of n elements of
 * size `size`. */
static inline void act_test_start(pthread_t *th, unsigned n,
                                  void *(*fn)(void *), void *args,
                                  size_t size) {
  for (unsigned i = 0; i < n; i++)
    pthread_create(&th[i], NULL, fn, (char *)args + i * size);
}

static inline void act_test_join(pthread_t *th, unsigned n) {
  for (unsigned i = 0; i < n; i++) pthread_join(th[i], NULL);
}

#endif
