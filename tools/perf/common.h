/* Helpers shared by nereid-perf's modules: the error buffer that fallible
 * functions fill, the fatal exit for broken invariants and out-of-memory,
 * the monotonic clock. Any thread. */
#ifndef NEREID_TOOLS_PERF_COMMON_H
#define NEREID_TOOLS_PERF_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Why a fallible function failed: a human-readable message naming the
 *  flag, tensor, file or RPC at fault. A function that returns false has
 *  filled it and changed nothing else the caller sees. */
typedef struct {
  char msg[1024];
} perf_err_t;

/** Formats the message into err (when not NULL) and returns false. */
bool perf_fail(perf_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Prints "nereid-perf: fatal: ... (file:line)" and aborts. */
_Noreturn void perf_fatal_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define PERF_FATAL(...) perf_fatal_at(__FILE__, __LINE__, __VA_ARGS__)

/** malloc/calloc/realloc/strdup that never return NULL (fatal instead). */
void *perf_malloc(size_t n);
void *perf_calloc(size_t count, size_t size);
void *perf_realloc(void *p, size_t n);
char *perf_strdup(const char *s);
char *perf_strndup(const char *s, size_t n);

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t perf_now_ns(void);

#endif
