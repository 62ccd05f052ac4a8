/* Log-linear latency histogram (see hist.h). */
#include "tools/perf/hist.h"

#include <math.h>
#include <string.h>

static unsigned bucket_of(uint64_t v) {
  if (v < PERF_HIST_SUB) return (unsigned)v;
  unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= PERF_HIST_SUB_BITS */
  if (e > PERF_HIST_MAX_EXP) return PERF_HIST_BUCKETS - 1;
  unsigned shift = e - PERF_HIST_SUB_BITS;
  unsigned sub = (unsigned)(v >> shift) - PERF_HIST_SUB; /* 0..127 */
  return PERF_HIST_SUB + shift * PERF_HIST_SUB + sub;
}

/* Lowest value of bucket b, and its width. */
static void bucket_range(unsigned b, uint64_t *low, uint64_t *width) {
  if (b < PERF_HIST_SUB) {
    *low = b;
    *width = 1;
    return;
  }
  unsigned shift = (b - PERF_HIST_SUB) / PERF_HIST_SUB;
  uint64_t sub = (b - PERF_HIST_SUB) % PERF_HIST_SUB + PERF_HIST_SUB;
  *low = sub << shift;
  *width = (uint64_t)1 << shift;
}

void perf_hist_reset(perf_hist_t *h) {
  memset(h, 0, sizeof *h);
  h->min_ns = UINT64_MAX;
}

void perf_hist_record(perf_hist_t *h, uint64_t ns) {
  h->buckets[bucket_of(ns)]++;
  h->count++;
  h->sum_ns += ns;
  if (ns < h->min_ns) h->min_ns = ns;
  if (ns > h->max_ns) h->max_ns = ns;
}

void perf_hist_merge(perf_hist_t *into, const perf_hist_t *from) {
  if (from->count == 0) return;
  for (unsigned b = 0; b < PERF_HIST_BUCKETS; b++) into->buckets[b] += from->buckets[b];
  into->count += from->count;
  into->sum_ns += from->sum_ns;
  if (from->min_ns < into->min_ns) into->min_ns = from->min_ns;
  if (from->max_ns > into->max_ns) into->max_ns = from->max_ns;
}

uint64_t perf_hist_percentile(const perf_hist_t *h, double p) {
  if (h->count == 0) return 0;
  uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
  if (rank < 1) rank = 1;
  if (rank > h->count) rank = h->count;
  uint64_t seen = 0;
  for (unsigned b = 0; b < PERF_HIST_BUCKETS; b++) {
    seen += h->buckets[b];
    if (seen < rank) continue;
    uint64_t low, width;
    bucket_range(b, &low, &width);
    uint64_t v = low + width / 2;
    if (v < h->min_ns) v = h->min_ns;
    if (v > h->max_ns) v = h->max_ns;
    return v;
  }
  return h->max_ns;
}

double perf_hist_mean(const perf_hist_t *h) {
  return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}
