/* The writer slots (stats.h): each slot has its own cache lines, threads
 * take distinct slots up to SRV_STATS_SLOTS, and a torture run where more
 * threads than slots count successes, failures and the pending gauge while
 * a reader sums: counts never go back, the gauge never reads below 0, and
 * every count comes out exact. */
#include "server/stats/stats.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "test/unit/unit.h"

static void test_layout(void) {
  CHECK_EQ_U64(sizeof(srv_stats_slot_t) % SRV_STATS_LINE, 0);
  CHECK_EQ_U64(SRV_STATS_SLOTS & (SRV_STATS_SLOTS - 1), 0); /* a power of two */
  srv_stats_t s;
  srv_stats_init(&s, 4);
  CHECK_EQ_U64((uintptr_t)s.slots % SRV_STATS_LINE, 0);
  srv_stats_totals_t t;
  srv_stats_totals(&s, &t);
  CHECK_EQ_U64(t.success.count + t.fail.count + t.pending + t.last_inference_ms, 0);
  uint64_t counts[SRV_HIST_BUCKETS];
  CHECK_EQ_U64(srv_stats_latency_snapshot(&s, SRV_LAT_REQUEST, counts), 0);
  srv_stats_free(&s);
}

/* A -1 summed before its +1 is read (another slot) shows 0, not a wrap. */
static void test_pending_clamped(void) {
  srv_stats_t s;
  srv_stats_init(&s, 1);
  atomic_store(&s.slots[3].pending, -2);
  atomic_store(&s.slots[1].pending, 1);
  srv_stats_totals_t t;
  srv_stats_totals(&s, &t);
  CHECK_EQ_U64(t.pending, 0);
  atomic_store(&s.slots[8].pending, 4);
  srv_stats_totals(&s, &t);
  CHECK_EQ_U64(t.pending, 3);
  srv_stats_free(&s);
}

enum { THREADS = SRV_STATS_SLOTS + 4, ROUNDS = 20000 };

typedef struct {
  srv_stats_t *s;
  int index;
  srv_stats_slot_t *slot; /* the one it wrote */
} writer_t;

static _Atomic int writers_done;

/* Even threads enqueue (+1), odd threads take out (-1): the gauge's two
 * ends on different threads, as a frontend's and an instance's. */
static void *writer(void *arg) {
  writer_t *w = arg;
  w->slot = srv_stats_mine(w->s);
  for (int i = 0; i < ROUNDS; i++) {
    srv_stats_slot_t *mine = srv_stats_mine(w->s);
    srv_duration_add(&mine->success, 3);
    atomic_fetch_add_explicit(&mine->inference_count, 2, memory_order_relaxed);
    if (i % 100 == 0) srv_stats_fail(w->s, SRV_FAIL_REJECTED, 1);
    srv_stats_pending_add(w->s, w->index % 2 == 0 ? 1 : -1);
    srv_stats_latency_add(w->s, SRV_LAT_QUEUE, 2000);
  }
  atomic_fetch_add(&writers_done, 1);
  return NULL;
}

typedef struct {
  srv_stats_t *s;
  bool backwards, over; /* what it saw; checked by the main thread */
} reader_t;

static void *reader(void *arg) {
  reader_t *r = arg;
  srv_stats_t *s = r->s;
  uint64_t last = 0;
  bool backwards = false, over = false;
  while (atomic_load(&writers_done) < THREADS) {
    srv_stats_totals_t t;
    srv_stats_totals(s, &t);
    if (t.success.count < last) backwards = true;
    if (t.success.ns != 0 && t.pending > THREADS * (uint64_t)ROUNDS) over = true;
    last = t.success.count;
  }
  r->backwards = backwards;
  r->over = over;
  return NULL;
}

static void test_torture(void) {
  srv_stats_t s;
  srv_stats_init(&s, 1);
  writer_t w[THREADS];
  pthread_t th[THREADS], rd;
  reader_t r = {.s = &s};
  REQUIRE(pthread_create(&rd, NULL, reader, &r) == 0);
  for (int i = 0; i < THREADS; i++) {
    w[i] = (writer_t){.s = &s, .index = i};
    REQUIRE(pthread_create(&th[i], NULL, writer, &w[i]) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  pthread_join(rd, NULL);
  CHECK(!r.backwards);
  CHECK(!r.over); /* a sum below 0 would show as a huge one */
  /* Slots are taken round robin: any SRV_STATS_SLOTS threads in a row that
   * took theirs one after the other hold distinct ones. */
  int distinct = 0;
  for (int i = 0; i < THREADS; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen |= w[j].slot == w[i].slot;
    distinct += !seen;
  }
  CHECK_EQ_U64(distinct, SRV_STATS_SLOTS);
  srv_stats_totals_t t;
  srv_stats_totals(&s, &t);
  const uint64_t n = (uint64_t)THREADS * ROUNDS;
  CHECK_EQ_U64(t.success.count, n);
  CHECK_EQ_U64(t.success.ns, 3 * n);
  CHECK_EQ_U64(t.inference_count, 2 * n);
  CHECK_EQ_U64(t.fail.count, THREADS * (ROUNDS / 100));
  CHECK_EQ_U64(t.fail_reason[SRV_FAIL_REJECTED], THREADS * (ROUNDS / 100));
  CHECK_EQ_U64(t.pending, 0); /* as many +1 as -1 */
  uint64_t counts[SRV_HIST_BUCKETS];
  CHECK_EQ_U64(srv_stats_latency_snapshot(&s, SRV_LAT_QUEUE, counts), n);
  CHECK_EQ_U64(counts[srv_hist_bucket(2)], n);
  CHECK_EQ_U64(srv_stats_latency_snapshot(&s, SRV_LAT_REQUEST, counts), 0);
  srv_stats_free(&s);
}

UNIT_MAIN("stats", UNIT_CASE(test_layout), UNIT_CASE(test_pending_clamped),
          UNIT_CASE(test_torture))
