/* Small shared helpers of the actor runtime: the fatal-error macro, the
 * cache-line size and the CPU pause used in bounded spins. Any thread. */
#ifndef NEREID_ACTORS_BASE_H
#define NEREID_ACTORS_BASE_H

#include <stdio.h>
#include <stdlib.h>

/* Size of a destructive-interference unit on the machines we target. */
#define ACT_CACHE_LINE 64

/* Broken invariants and out-of-memory end the process here, with the place. */
#define ACT_FATAL(...)                                                      \
  do {                                                                      \
    fprintf(stderr, "nereid/actors fatal %s:%d: ", __FILE__, __LINE__);     \
    fprintf(stderr, __VA_ARGS__);                                           \
    fputc('\n', stderr);                                                    \
    abort();                                                                \
  } while (0)

#define ACT_LIKELY(x) __builtin_expect(!!(x), 1)
#define ACT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Tells the core we are spinning (frees pipeline resources for a sibling
 * hyperthread and saves power); no memory effect. */
static inline void act_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

#endif
