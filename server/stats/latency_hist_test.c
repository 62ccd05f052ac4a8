/* Latency histograms (latency_hist.h): buckets tile the values with no gap,
 * quantile and le estimates stay within a bucket's width, and threads
 * recording at once lose no count. */
#include "server/stats/latency_hist.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "test/unit/unit.h"

static void test_buckets_tile(void) {
  CHECK_EQ_U64(srv_hist_lower(0), 0);
  for (uint32_t i = 0; i + 1 < SRV_HIST_BUCKETS; i++) {
    CHECK_EQ_U64(srv_hist_upper(i), srv_hist_lower(i + 1));
    CHECK_EQ_U64(srv_hist_bucket(srv_hist_lower(i)), i);
    CHECK_EQ_U64(srv_hist_bucket(srv_hist_upper(i) - 1), i);
    /* A bucket is at most 1/SRV_HIST_SUB of its lower bound wide. */
    if (i >= SRV_HIST_SUB)
      CHECK((srv_hist_upper(i) - srv_hist_lower(i)) * SRV_HIST_SUB <= srv_hist_lower(i));
  }
  CHECK_EQ_U64(srv_hist_bucket(UINT64_MAX), SRV_HIST_BUCKETS - 1);
  CHECK_EQ_U64(srv_hist_bucket(7), 7);
  CHECK_EQ_U64(srv_hist_bucket(100), srv_hist_bucket(96)); /* [96, 104) */
}

static void test_quantiles(void) {
  static srv_latency_hist_t h;
  static uint64_t c[SRV_HIST_BUCKETS];
  CHECK(srv_hist_quantile(c, 0, 0.5) == 0.0);
  /* 1..1000 us, once each. */
  for (uint64_t us = 1; us <= 1000; us++) srv_hist_record(&h, us * 1000 + 999);
  uint64_t total = srv_hist_snapshot(&h, c);
  CHECK_EQ_U64(total, 1000);
  const double qs[] = {0.01, 0.5, 0.9, 0.99, 1.0};
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    double want = ceil(qs[i] * 1000), got = srv_hist_quantile(c, total, qs[i]);
    CHECK(fabs(got - want) <= want / SRV_HIST_SUB + 1);
  }
  CHECK(srv_hist_quantile(c, total, 0.005) == 5.0); /* exact below 8 us */
  /* le: exact on bucket bounds, at most one bucket over otherwise. */
  CHECK_EQ_U64(srv_hist_count_le(c, 7), 7);
  CHECK_EQ_U64(srv_hist_count_le(c, 95), 95);
  uint64_t le100 = srv_hist_count_le(c, 100);
  CHECK(le100 >= 100 && le100 <= 103);
  CHECK_EQ_U64(srv_hist_count_le(c, INFINITY), 1000);
}

enum { THREADS = 8, RECORDS = 100000 };

static srv_latency_hist_t shared;

static void *recorder(void *arg) {
  uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
  for (int i = 0; i < RECORDS; i++) {
    x = x * 1103515245u + 12345u;
    srv_hist_record(&shared, (uint64_t)(x >> 8) * 1000);
  }
  return NULL;
}

static void test_torture(void) {
  pthread_t th[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, recorder, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  static uint64_t c[SRV_HIST_BUCKETS];
  CHECK_EQ_U64(srv_hist_snapshot(&shared, c), (uint64_t)THREADS * RECORDS);
}

UNIT_MAIN("latency_hist", UNIT_CASE(test_buckets_tile), UNIT_CASE(test_quantiles),
          UNIT_CASE(test_torture))
