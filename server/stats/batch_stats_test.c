/* The sparse per-batch-size table (batch_stats.h): bounds, a walk that
 * costs the blocks made rather than the limit (max_batch_size may be
 * INT32_MAX), and a torture run where threads race to make the same blocks
 * and every count must come out exact. */
#include "server/stats/batch_stats.h"

#include <pthread.h>
#include <stdint.h>

#include "test/unit/unit.h"

/* The sizes a walk from 1 visits, written to out (at most cap). */
static size_t walk(srv_batch_table_t *t, uint64_t *out, size_t cap) {
  size_t n = 0;
  uint64_t size = 1;
  for (; srv_batch_table_next(t, &size) != NULL; size++)
    if (n < cap)
      out[n++] = size;
    else
      n++;
  return n;
}

static void test_bounds(void) {
  srv_batch_table_t *t = srv_batch_table_new(8);
  uint64_t seen[32];
  CHECK_EQ_U64(walk(t, seen, 32), 0);
  CHECK(srv_batch_table_entry(t, 9) == NULL);
  srv_batch_stats_t *e = srv_batch_table_entry(t, 8);
  REQUIRE(e != NULL);
  CHECK(srv_batch_table_entry(t, 8) == e);
  /* The block made holds sizes 1..8 (the limit cuts it): all visited. */
  REQUIRE(walk(t, seen, 32) == 8);
  for (uint64_t i = 0; i < 8; i++) CHECK_EQ_U64(seen[i], i + 1);
  uint64_t from = 8;
  CHECK(srv_batch_table_next(t, &from) == e && from == 8);
  from = 9;
  CHECK(srv_batch_table_next(t, &from) == NULL);
  srv_batch_table_free(t);
}

static void test_sparse_at_int32_max(void) {
  srv_batch_table_t *t = srv_batch_table_new(INT32_MAX);
  const uint64_t node = (uint64_t)SRV_BATCH_STATS_LEAF * SRV_BATCH_STATS_NODE;
  REQUIRE(srv_batch_table_entry(t, 1) != NULL);
  REQUIRE(srv_batch_table_entry(t, 3 * node + 5) != NULL);
  REQUIRE(srv_batch_table_entry(t, INT32_MAX) != NULL);
  CHECK(srv_batch_table_entry(t, (uint64_t)INT32_MAX + 1) == NULL);
  /* Three leaves: 1..15, then a leaf from 3 * node, then the last one. */
  uint64_t seen[64];
  REQUIRE(walk(t, seen, 64) == 15 + 16 + 16);
  CHECK_EQ_U64(seen[0], 1);
  CHECK_EQ_U64(seen[15], 3 * node);
  CHECK_EQ_U64(seen[31], (uint64_t)INT32_MAX - 15);
  CHECK_EQ_U64(seen[46], INT32_MAX);
  srv_batch_table_free(t);
}

enum { THREADS = 8, REPORTS = 20000, LIMIT = 3 * 65536 + 100 };

typedef struct {
  srv_batch_table_t *t;
  uint32_t seed;
} worker_t;

/* A small xorshift: each thread's sizes can be replayed to count them. */
static uint64_t next_size(uint32_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 17;
  *x ^= *x << 5;
  return *x % LIMIT + 1;
}

static void *report(void *arg) {
  worker_t *w = arg;
  uint32_t x = w->seed;
  for (int i = 0; i < REPORTS; i++)
    srv_duration_add(&srv_batch_table_entry(w->t, next_size(&x))->compute_infer, 1);
  return NULL;
}

static void test_torture(void) {
  srv_batch_table_t *t = srv_batch_table_new(LIMIT);
  pthread_t th[THREADS];
  worker_t w[THREADS];
  /* Half the threads share seeds, so they race for the same blocks. */
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker_t){t, 2463534242u + (uint32_t)(i % (THREADS / 2))};
    pthread_create(&th[i], NULL, report, &w[i]);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  static uint32_t want[LIMIT + 1];
  for (int i = 0; i < THREADS; i++) {
    uint32_t x = w[i].seed;
    for (int k = 0; k < REPORTS; k++) want[next_size(&x)]++;
  }
  uint64_t total = 0, wrong = 0;
  uint64_t size = 1;
  for (srv_batch_stats_t *e; (e = srv_batch_table_next(t, &size)) != NULL; size++) {
    uint64_t got = srv_stat_load(&e->compute_infer.count);
    total += got;
    if (got != want[size]) wrong++;
  }
  CHECK_EQ_U64(wrong, 0);
  CHECK_EQ_U64(total, (uint64_t)THREADS * REPORTS);
  srv_batch_table_free(t);
}

UNIT_MAIN("batch_stats", UNIT_CASE(test_bounds), UNIT_CASE(test_sparse_at_int32_max),
          UNIT_CASE(test_torture))
