/* What the load saw during one measurement window: latencies of successful
 * requests, counts, and the distinct error messages. A worker fills its
 * own window under its lock; the main thread takes it at each window
 * boundary (load.h) and merges windows into a level's result. */
#ifndef NEREID_TOOLS_PERF_WINDOW_H
#define NEREID_TOOLS_PERF_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "tools/perf/hist.h"

/* Distinct messages kept per window and per level; further distinct ones
 * are only counted (in `others`), so a flood of varied messages cannot
 * grow memory, but every error is counted. */
#define PERF_ERRORS_MAX 16

typedef struct {
  char *text;
  uint64_t count;
} perf_error_t;

typedef struct {
  perf_error_t items[PERF_ERRORS_MAX]; /* in order of first appearance */
  size_t n;
  uint64_t others; /* errors whose message did not fit */
} perf_errors_t;

typedef struct {
  perf_hist_t latency; /* successful requests: send (or schedule) to completion */
  uint64_t completed;  /* successful requests */
  uint64_t failed;     /* failed requests */
  uint64_t responses;  /* responses that carried outputs (decoupled mode) */
  uint64_t sequences;  /* sequence mode: sequences whose last step succeeded */
  uint64_t delayed;    /* request-rate mode: sends held back by --max-inflight */
  uint64_t sends;      /* request-rate mode: sends, and how late they left */
  uint64_t send_late_sum_ns, send_late_max_ns;
  perf_errors_t errors;
} perf_window_t;

/** Counts `count` errors with this message (copied when new). */
void perf_errors_add(perf_errors_t *e, const char *text, size_t len, uint64_t count);

/** Adds from's messages and counts to into; from keeps its own. */
void perf_errors_merge(perf_errors_t *into, const perf_errors_t *from);

/** Total errors counted. */
uint64_t perf_errors_total(const perf_errors_t *e);

/** Frees the messages and empties e. */
void perf_errors_clear(perf_errors_t *e);

/** An empty window (the struct is large: allocate it, or keep it static). */
void perf_window_init(perf_window_t *w);

/** Frees w's messages and empties it. */
void perf_window_reset(perf_window_t *w);

/** Adds from to into; from is unchanged. */
void perf_window_merge(perf_window_t *into, const perf_window_t *from);

/** Moves from's content to into (overwriting it) and leaves from empty:
 *  the window boundary, done under the owning worker's lock. */
void perf_window_take(perf_window_t *into, perf_window_t *from);

#endif
