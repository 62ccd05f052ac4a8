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

/* For the runtime's thread-locals. The runtime is linked into
 * libtritonserver.so, where the default (general-dynamic) model calls
 * __tls_get_addr on every access: about 700 instructions per ModelInfer
 * (docs/perf.md, "Issue 21: second pass"). Initial-exec reads them at a
 * fixed offset from the thread pointer. The library's TLS block then sits
 * in static TLS, which a dlopen of it must find room for: keep these small
 * (server:dlopen_test bounds the block to 1 KiB). */
#define ACT_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))

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
