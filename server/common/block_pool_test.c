/* Tests of the block pools: reuse on one thread, the per-thread and depot
 * caps, blocks freed on another thread than their maker's coming back
 * through the depot, a thread's cache at its exit, and a torture run with
 * verified contents. Main thread plus the cases' own threads. */
#include "server/common/block_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

/* Each case has its own pool, so that counts start from nothing. */
static srv_block_pool_t one_pool = SRV_BLOCK_POOL_INIT(40, 4, 2);
static srv_block_pool_t cap_pool = SRV_BLOCK_POOL_INIT(64, 4, 2);
static srv_block_pool_t cross_pool = SRV_BLOCK_POOL_INIT(256, 16, 64);
static srv_block_pool_t exit_pool = SRV_BLOCK_POOL_INIT(100, 8, 4);
static srv_block_pool_t torture_pool = SRV_BLOCK_POOL_INIT(128, 8, 8);

static void single_thread_reuses(void) {
  CHECK_EQ_U64(one_pool.size, 48); /* rounded up to 16 */
  void *a[3];
  for (int i = 0; i < 3; i++) {
    a[i] = srv_block_pool_alloc(&one_pool);
    REQUIRE(a[i] != NULL);
    CHECK_EQ_U64((uintptr_t)a[i] % 16, 0);
    memset(a[i], 0xab, one_pool.size);
  }
  CHECK_EQ_U64(srv_block_pool_cached(&one_pool), 0);
  for (int i = 0; i < 3; i++) srv_block_pool_free(&one_pool, a[i]);
  CHECK_EQ_U64(srv_block_pool_cached(&one_pool), 3);
  /* Last freed, first out: the same blocks, no malloc. */
  for (int i = 2; i >= 0; i--) CHECK(srv_block_pool_alloc(&one_pool) == a[i]);
  CHECK_EQ_U64(srv_block_pool_cached(&one_pool), 0);
  for (int i = 0; i < 3; i++) srv_block_pool_free(&one_pool, a[i]);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&one_pool), 0);
}

/* 20 frees with a batch of 4: the thread keeps two batches, the depot two
 * chains, the other 4 blocks go back to malloc's free. */
static void caps_bound_the_memory(void) {
  void *b[20];
  for (int i = 0; i < 20; i++) b[i] = srv_block_pool_alloc(&cap_pool);
  for (int i = 0; i < 20; i++) srv_block_pool_free(&cap_pool, b[i]);
  CHECK_EQ_U64(srv_block_pool_cached(&cap_pool), 8);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&cap_pool), 8);
  /* Everything kept comes back out before anything new is made. */
  void *again[16];
  for (int i = 0; i < 16; i++) {
    again[i] = srv_block_pool_alloc(&cap_pool);
    bool known = false;
    for (int j = 0; j < 20; j++) known |= again[i] == b[j];
    CHECK(known);
  }
  CHECK_EQ_U64(srv_block_pool_cached(&cap_pool), 0);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&cap_pool), 0);
  for (int i = 0; i < 16; i++) srv_block_pool_free(&cap_pool, again[i]);
  srv_block_pool_flush();
  CHECK_EQ_U64(srv_block_pool_cached(&cap_pool), 0);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&cap_pool), 8); /* two chains kept */
  srv_block_pool_trim(&cap_pool);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&cap_pool), 0);
}

/* A producer allocates and fills blocks, a consumer checks and frees them
 * (the response's path: made on the instance thread, freed by the call).
 * The consumer's frees reach the producer through the depot, so the
 * producer's blocks after the first rounds are a bounded set. */
enum { CROSS_BLOCKS = 20000, RING = 64 };
static void *_Atomic ring[RING];
static uint64_t cross_seen[CROSS_BLOCKS];

static void *consumer(void *arg) {
  (void)arg;
  for (uint64_t i = 0; i < CROSS_BLOCKS; i++) {
    void *p;
    /* Acquire: pairs with the producer's release, the block's contents. */
    while ((p = atomic_exchange_explicit(&ring[i % RING], NULL, memory_order_acquire)) ==
           NULL) {
    }
    const uint64_t *w = p;
    CHECK_EQ_U64(w[0], i);
    CHECK_EQ_U64(w[31], ~i);
    srv_block_pool_free(&cross_pool, p);
  }
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void cross_thread_frees_come_back(void) {
  pthread_t t;
  pthread_create(&t, NULL, consumer, NULL);
  for (uint64_t i = 0; i < CROSS_BLOCKS; i++) {
    uint64_t *w = srv_block_pool_alloc(&cross_pool);
    w[0] = i;
    w[31] = ~i;
    cross_seen[i] = (uintptr_t)w;
    /* Release: the consumer reads the block after taking it. */
    while (atomic_load_explicit(&ring[i % RING], memory_order_relaxed) != NULL) {
    }
    atomic_store_explicit(&ring[i % RING], w, memory_order_release);
  }
  pthread_join(t, NULL);
  /* Distinct blocks: at most what is in flight (the ring), both threads'
   * caches, the depot, and what a full depot gave back to free() and
   * malloc handed out again; far fewer than the blocks allocated. */
  qsort(cross_seen, CROSS_BLOCKS, sizeof cross_seen[0], cmp_u64);
  uint64_t distinct = 1;
  for (int i = 1; i < CROSS_BLOCKS; i++) distinct += cross_seen[i] != cross_seen[i - 1];
  CHECK(distinct <= RING + 4 * 16 + 64 * 16);
  CHECK(srv_block_pool_depot_blocks(&cross_pool) <= 64 * 16);
  srv_block_pool_flush();
  srv_block_pool_trim(&cross_pool);
}

/* A thread that ends gives its cache to the depot (LSan checks the rest:
 * this test runs under ASan too). */
static void *exit_worker(void *arg) {
  void *b[10];
  for (int i = 0; i < 10; i++) b[i] = srv_block_pool_alloc(&exit_pool);
  for (int i = 0; i < 10; i++) srv_block_pool_free(&exit_pool, b[i]);
  *(uint32_t *)arg = srv_block_pool_cached(&exit_pool);
  return NULL;
}

static void thread_exit_returns_the_cache(void) {
  uint32_t cached = 0;
  pthread_t t;
  pthread_create(&t, NULL, exit_worker, &cached);
  pthread_join(t, NULL);
  CHECK_EQ_U64(cached, 10);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&exit_pool), 10);
  CHECK_EQ_U64(srv_block_pool_cached(&exit_pool), 0);
  /* The main thread takes the exited thread's blocks: its full batch
   * (the spare, put last) first, then the 2 of its partial one. */
  void *p = srv_block_pool_alloc(&exit_pool);
  CHECK_EQ_U64(srv_block_pool_depot_blocks(&exit_pool), 2);
  CHECK_EQ_U64(srv_block_pool_cached(&exit_pool), 7);
  srv_block_pool_free(&exit_pool, p);
  srv_block_pool_flush();
  srv_block_pool_trim(&exit_pool);
}

/* Four threads pass blocks round a ring of mailboxes (one slot each):
 * every thread allocates, frees what others made, checks the stamp. */
enum { TORTURE_THREADS = 4, TORTURE_ROUNDS = 20000 };
static void *_Atomic box[TORTURE_THREADS];
static atomic_uint_fast64_t torture_freed;

static void *torture_worker(void *arg) {
  uintptr_t me = (uintptr_t)arg, next = (me + 1) % TORTURE_THREADS;
  for (uint64_t r = 0; r < TORTURE_ROUNDS; r++) {
    uint64_t *w = srv_block_pool_alloc(&torture_pool);
    w[0] = me;
    w[15] = r;
    /* acq_rel: publish our block, take whatever was left there before. */
    uint64_t *old = atomic_exchange_explicit(&box[next], w, memory_order_acq_rel);
    if (old != NULL) {
      CHECK(old[0] == me);
      CHECK(old[15] < TORTURE_ROUNDS);
      srv_block_pool_free(&torture_pool, old);
      atomic_fetch_add_explicit(&torture_freed, 1, memory_order_relaxed);
    }
    /* Ours to free: what the previous thread left for us. */
    uint64_t *mine = atomic_exchange_explicit(&box[me], NULL, memory_order_acq_rel);
    if (mine != NULL) {
      CHECK(mine[0] == (me + TORTURE_THREADS - 1) % TORTURE_THREADS);
      srv_block_pool_free(&torture_pool, mine);
      atomic_fetch_add_explicit(&torture_freed, 1, memory_order_relaxed);
    }
  }
  return NULL;
}

static void torture_many_threads(void) {
  pthread_t t[TORTURE_THREADS];
  for (uintptr_t i = 0; i < TORTURE_THREADS; i++)
    pthread_create(&t[i], NULL, torture_worker, (void *)i);
  for (int i = 0; i < TORTURE_THREADS; i++) pthread_join(t[i], NULL);
  uint64_t left = 0;
  for (int i = 0; i < TORTURE_THREADS; i++) {
    void *p = atomic_exchange_explicit(&box[i], NULL, memory_order_acquire);
    if (p != NULL) {
      srv_block_pool_free(&torture_pool, p);
      left++;
    }
  }
  CHECK_EQ_U64(atomic_load(&torture_freed) + left, TORTURE_THREADS * TORTURE_ROUNDS);
  CHECK(srv_block_pool_depot_blocks(&torture_pool) <= 8 * 8);
  srv_block_pool_flush();
  srv_block_pool_trim(&torture_pool);
}

UNIT_MAIN("common_block_pool", UNIT_CASE(single_thread_reuses),
          UNIT_CASE(caps_bound_the_memory), UNIT_CASE(cross_thread_frees_come_back),
          UNIT_CASE(thread_exit_returns_the_cache), UNIT_CASE(torture_many_threads))
