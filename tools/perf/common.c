/* Shared helpers of nereid-perf (see common.h). */
#include "tools/perf/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool perf_fail(perf_err_t *err, const char *fmt, ...) {
  if (err == NULL) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return false;
}

void perf_fatal_at(const char *file, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "nereid-perf: fatal: %s (%s:%d)\n", msg, file, line);
  abort();
}

void *perf_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) PERF_FATAL("out of memory (%zu bytes)", n);
  return p;
}

void *perf_calloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (p == NULL) PERF_FATAL("out of memory (%zu x %zu bytes)", count, size);
  return p;
}

void *perf_realloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (q == NULL) PERF_FATAL("out of memory (%zu bytes)", n);
  return q;
}

char *perf_strndup(const char *s, size_t n) {
  char *p = perf_malloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *perf_strdup(const char *s) { return perf_strndup(s, strlen(s)); }

uint64_t perf_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
