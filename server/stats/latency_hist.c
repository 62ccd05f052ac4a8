/* Latency histograms (see latency_hist.h): bucket math and estimates. */
#include "server/stats/latency_hist.h"

#include <math.h>

uint64_t srv_hist_lower(uint32_t i) {
  if (i < SRV_HIST_SUB) return i;
  uint32_t shift = (i - SRV_HIST_SUB) / SRV_HIST_SUB;
  uint32_t sub = (i - SRV_HIST_SUB) % SRV_HIST_SUB;
  return (uint64_t)(SRV_HIST_SUB + sub) << shift;
}

uint64_t srv_hist_upper(uint32_t i) {
  if (i < SRV_HIST_SUB) return i + 1u;
  uint32_t shift = (i - SRV_HIST_SUB) / SRV_HIST_SUB;
  uint32_t sub = (i - SRV_HIST_SUB) % SRV_HIST_SUB;
  return (uint64_t)(SRV_HIST_SUB + sub + 1u) << shift;
}

uint64_t srv_hist_snapshot(const srv_latency_hist_t *h, uint64_t out[SRV_HIST_BUCKETS]) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < SRV_HIST_BUCKETS; i++) {
    /* Relaxed: counters only; see latency_hist.h. */
    out[i] = atomic_load_explicit(&h->counts[i], memory_order_relaxed);
    total += out[i];
  }
  return total;
}

double srv_hist_quantile(const uint64_t counts[SRV_HIST_BUCKETS], uint64_t total,
                         double q) {
  if (total == 0) return 0.0;
  if (q < 0.0) q = 0.0;
  if (q > 1.0) q = 1.0;
  uint64_t rank = (uint64_t)ceil(q * (double)total);
  if (rank == 0) rank = 1;
  uint64_t below = 0;
  for (uint32_t i = 0; i < SRV_HIST_BUCKETS; i++) {
    if (counts[i] == 0 || below + counts[i] < rank) {
      below += counts[i];
      continue;
    }
    double lo = (double)srv_hist_lower(i), hi = (double)srv_hist_upper(i);
    /* Below SRV_HIST_SUB a bucket holds one value: exact. */
    if (i < SRV_HIST_SUB) return lo;
    return lo + (hi - lo) * ((double)(rank - below) / (double)counts[i]);
  }
  return (double)srv_hist_lower(SRV_HIST_BUCKETS - 1);
}

uint64_t srv_hist_count_le(const uint64_t counts[SRV_HIST_BUCKETS], double le_us) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < SRV_HIST_BUCKETS && (double)srv_hist_lower(i) <= le_us; i++)
    n += counts[i];
  return n;
}
