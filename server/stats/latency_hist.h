/* Latency histograms of one model version, for the metrics endpoint's
 * summaries and histograms: fixed log-linear buckets of microseconds, one
 * relaxed atomic add per observation, no lock. Instance threads and owner
 * actors record; the metrics renderer reads (any thread). */
#ifndef NEREID_SERVER_STATS_LATENCY_HIST_H
#define NEREID_SERVER_STATS_LATENCY_HIST_H

#include <stdatomic.h>
#include <stdint.h>

/* Values below SRV_HIST_SUB us have a bucket each; from there on every
 * power of two is cut into SRV_HIST_SUB equal buckets, so a bucket is at
 * most 1/SRV_HIST_SUB (12.5%) of its lower bound wide. The last bucket
 * also holds everything past 2^(SRV_HIST_OCTAVES + 3) us (about 38 h). */
#define SRV_HIST_SUB_BITS 3
#define SRV_HIST_SUB (1u << SRV_HIST_SUB_BITS)
#define SRV_HIST_OCTAVES 34
#define SRV_HIST_BUCKETS (SRV_HIST_SUB + SRV_HIST_OCTAVES * SRV_HIST_SUB)

/* What is measured: Triton's five summaries. */
typedef enum {
  SRV_LAT_REQUEST = 0, /* successful requests, arrival to end */
  SRV_LAT_QUEUE,
  SRV_LAT_COMPUTE_INPUT,
  SRV_LAT_COMPUTE_INFER,
  SRV_LAT_COMPUTE_OUTPUT,
  SRV_LAT_KINDS
} srv_latency_kind_t;

typedef struct {
  _Atomic uint64_t counts[SRV_HIST_BUCKETS];
} srv_latency_hist_t;

/** One histogram per kind; made on the first observation (srv_stats_block). */
typedef struct {
  srv_latency_hist_t kind[SRV_LAT_KINDS];
} srv_latency_hists_t;

/** The bucket of a value in microseconds. Inline: five per request
 *  (srv_hist_record). */
static inline uint32_t srv_hist_bucket(uint64_t us) {
  if (us < SRV_HIST_SUB) return (uint32_t)us;
  uint32_t e = 63u - (uint32_t)__builtin_clzll(us); /* >= SRV_HIST_SUB_BITS */
  uint32_t sub = (uint32_t)(us >> (e - SRV_HIST_SUB_BITS)) & (SRV_HIST_SUB - 1);
  uint32_t i = SRV_HIST_SUB + (e - SRV_HIST_SUB_BITS) * SRV_HIST_SUB + sub;
  return i < SRV_HIST_BUCKETS ? i : SRV_HIST_BUCKETS - 1;
}

/** Bucket i holds the values in [lower, upper) microseconds. */
uint64_t srv_hist_lower(uint32_t i);
uint64_t srv_hist_upper(uint32_t i);

/** Counts one observation of `ns` nanoseconds. Any thread, wait-free. */
static inline void srv_hist_record(srv_latency_hist_t *h, uint64_t ns) {
  /* Relaxed: an independent counter, as every statistic (stats.h). */
  atomic_fetch_add_explicit(&h->counts[srv_hist_bucket(ns / 1000u)], 1,
                            memory_order_relaxed);
}

/** A snapshot of the counts (each read relaxed; the snapshot is what the
 *  math below reads, so it is consistent with itself). Returns the total. */
uint64_t srv_hist_snapshot(const srv_latency_hist_t *h, uint64_t out[SRV_HIST_BUCKETS]);

/** The q-quantile (0 <= q <= 1) of a snapshot of `total` observations, in
 *  microseconds: the bucket that holds rank ceil(q * total) (at least 1),
 *  interpolated linearly inside it. Exact below SRV_HIST_SUB us; past
 *  that, within the bucket's width (12.5% of the value). 0 when empty. */
double srv_hist_quantile(const uint64_t counts[SRV_HIST_BUCKETS], uint64_t total,
                         double q);

/** Observations of a snapshot counted as at most `le_us` microseconds:
 *  every bucket whose lower bound is <= le_us. Exact when le_us + 1 is a
 *  bucket's lower bound; else the bucket that straddles le_us is counted
 *  whole, so values up to 12.5% above le_us can be in (never fewer than
 *  the values at most le_us). */
uint64_t srv_hist_count_le(const uint64_t counts[SRV_HIST_BUCKETS], double le_us);

#endif
