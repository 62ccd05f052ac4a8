/* The log-linear histogram against exact percentiles of the same values. */
#include <stdbool.h>
#include <stdlib.h>

#include "test/unit/unit.h"
#include "tools/perf/hist.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t exact(const uint64_t *sorted, size_t n, double p) {
  size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  return sorted[rank - 1];
}

static bool close_to(uint64_t got, uint64_t want) {
  uint64_t d = got > want ? got - want : want - got;
  return d <= want / 200 + 1; /* 0.5% */
}

static void percentiles_match_exact_ones(void) {
  enum { N = 100000 };
  static perf_hist_t h;
  uint64_t *v = malloc(N * sizeof *v);
  REQUIRE(v != NULL);
  perf_hist_reset(&h);
  uint64_t s = 88172645463325252ull, sum = 0;
  for (size_t i = 0; i < N; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    /* Log-uniform from 1 ns to about 1 s. */
    v[i] = (uint64_t)1 << (s % 30);
    v[i] += (s >> 32) % v[i];
    sum += v[i];
    perf_hist_record(&h, v[i]);
  }
  qsort(v, N, sizeof *v, cmp_u64);
  CHECK_EQ_U64(h.count, N);
  CHECK_EQ_U64(h.sum_ns, sum);
  CHECK_EQ_U64(h.min_ns, v[0]);
  CHECK_EQ_U64(h.max_ns, v[N - 1]);
  const double ps[] = {1, 10, 50, 90, 95, 99, 99.9, 100};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
    uint64_t got = perf_hist_percentile(&h, ps[k]), want = exact(v, N, ps[k]);
    if (!close_to(got, want))
      fprintf(stderr, "  p%g: got %llu, want %llu\n", ps[k], (unsigned long long)got,
              (unsigned long long)want);
    CHECK(close_to(got, want));
  }
  free(v);
}

static void small_values_are_exact(void) {
  static perf_hist_t h;
  perf_hist_reset(&h);
  for (uint64_t x = 0; x < 256; x++) perf_hist_record(&h, x);
  CHECK_EQ_U64(perf_hist_percentile(&h, 50), 127);
  CHECK_EQ_U64(perf_hist_percentile(&h, 100), 255);
  CHECK(perf_hist_mean(&h) == 127.5);
}

static void merge_adds_and_empty_is_zero(void) {
  static perf_hist_t a, b;
  perf_hist_reset(&a);
  perf_hist_reset(&b);
  CHECK_EQ_U64(perf_hist_percentile(&a, 50), 0);
  CHECK(perf_hist_mean(&a) == 0);
  perf_hist_record(&a, 1000);
  perf_hist_record(&b, 3000);
  perf_hist_record(&b, UINT64_MAX); /* beyond the range: the top bucket */
  perf_hist_merge(&a, &b);
  CHECK_EQ_U64(a.count, 3);
  CHECK_EQ_U64(a.min_ns, 1000);
  CHECK_EQ_U64(a.max_ns, UINT64_MAX);
  CHECK(close_to(perf_hist_percentile(&a, 50), 3000));
  CHECK(perf_hist_percentile(&a, 100) > (1ull << 40));
}

UNIT_MAIN("hist", UNIT_CASE(percentiles_match_exact_ones),
          UNIT_CASE(small_values_are_exact), UNIT_CASE(merge_adds_and_empty_is_zero))
