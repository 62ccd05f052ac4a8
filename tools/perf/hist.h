/* Latency histogram, HDR-style log-linear: exact below 256 ns, then 128
 * buckets per power of two, so a percentile is off by less than 0.4% (the
 * bucket midpoint is reported). Values are nanoseconds, up to about 18
 * minutes (larger ones land in the top bucket). Not thread-safe: one owner
 * at a time (a worker records into its window under the worker's lock; the
 * main thread merges copies). */
#ifndef NEREID_TOOLS_PERF_HIST_H
#define NEREID_TOOLS_PERF_HIST_H

#include <stdint.h>

#define PERF_HIST_SUB_BITS 7
#define PERF_HIST_SUB (1u << PERF_HIST_SUB_BITS)
/* Exponents 7..40 get PERF_HIST_SUB buckets each, above the linear 0..127. */
#define PERF_HIST_MAX_EXP 40
#define PERF_HIST_BUCKETS ((PERF_HIST_MAX_EXP - PERF_HIST_SUB_BITS + 2) * PERF_HIST_SUB)

typedef struct {
  uint64_t count;
  uint64_t sum_ns;
  uint64_t min_ns; /* UINT64_MAX while empty */
  uint64_t max_ns;
  uint64_t buckets[PERF_HIST_BUCKETS];
} perf_hist_t;

/** Empties h. */
void perf_hist_reset(perf_hist_t *h);

/** Adds one value. */
void perf_hist_record(perf_hist_t *h, uint64_t ns);

/** Adds every value of from to into. */
void perf_hist_merge(perf_hist_t *into, const perf_hist_t *from);

/** The value at percentile p (0 < p <= 100): the midpoint of the bucket
 *  that holds the ceil(p% * count)-th smallest value, clamped to
 *  [min, max]. 0 when empty. */
uint64_t perf_hist_percentile(const perf_hist_t *h, double p);

/** Mean in nanoseconds; 0 when empty. */
double perf_hist_mean(const perf_hist_t *h);

#endif
