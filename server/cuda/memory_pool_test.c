/* The pool allocator on host memory: first fit, alignment, coalescing,
 * exhaustion, the block bound, bad frees, and many threads at once. */
#include "server/cuda/memory_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

#define UNIT SRV_POOL_ALIGN

static void alloc_is_aligned_and_first_fit(void) {
  static char arena[64 * UNIT + UNIT];
  srv_pool_t *pool = srv_pool_new((uintptr_t)arena + 1, 64 * UNIT, 64);
  REQUIRE(pool != NULL);
  /* Rounded start, and one unit lost at the end to the rounding. */
  CHECK_EQ_U64(srv_pool_capacity(pool), 63 * UNIT);
  uintptr_t a, b, c;
  REQUIRE(srv_pool_alloc(pool, 1, &a));
  REQUIRE(srv_pool_alloc(pool, UNIT + 1, &b));
  REQUIRE(srv_pool_alloc(pool, 0, &c));
  CHECK_EQ_U64(a % UNIT, 0);
  CHECK_EQ_U64(b, a + UNIT);
  CHECK_EQ_U64(c, b + 2 * UNIT);
  CHECK_EQ_U64(srv_pool_used(pool), 4 * UNIT);
  /* The hole left by b is the first fit for a request that fits it. */
  CHECK(srv_pool_release(pool, b));
  uintptr_t d;
  REQUIRE(srv_pool_alloc(pool, 2 * UNIT, &d));
  CHECK_EQ_U64(d, b);
  CHECK(srv_pool_release(pool, a));
  CHECK(srv_pool_release(pool, c));
  CHECK(srv_pool_release(pool, d));
  CHECK_EQ_U64(srv_pool_used(pool), 0);
  CHECK_EQ_U64(srv_pool_block_count(pool), 1);
  srv_pool_delete(pool);
}

static void frees_coalesce_in_any_order(void) {
  static char arena[8 * UNIT] __attribute__((aligned(UNIT)));
  srv_pool_t *pool = srv_pool_new((uintptr_t)arena, sizeof arena, 64);
  REQUIRE(pool != NULL);
  uintptr_t p[8];
  for (int i = 0; i < 8; i++) REQUIRE(srv_pool_alloc(pool, UNIT, &p[i]));
  uintptr_t none;
  CHECK(!srv_pool_alloc(pool, 1, &none));
  /* Free every other block: 4 holes of one unit, no room for two. */
  for (int i = 0; i < 8; i += 2) CHECK(srv_pool_release(pool, p[i]));
  CHECK(!srv_pool_alloc(pool, 2 * UNIT, &none));
  /* Freeing the middles joins neighbours on both sides. */
  CHECK(srv_pool_release(pool, p[1]));
  CHECK(srv_pool_release(pool, p[5]));
  CHECK_EQ_U64(srv_pool_block_count(pool), 4); /* [0-2] used3 [4-6] used7 */
  uintptr_t big;
  REQUIRE(srv_pool_alloc(pool, 3 * UNIT, &big));
  CHECK_EQ_U64(big, p[0]);
  CHECK(srv_pool_release(pool, big));
  CHECK(srv_pool_release(pool, p[3]));
  CHECK(srv_pool_release(pool, p[7]));
  CHECK_EQ_U64(srv_pool_block_count(pool), 1);
  REQUIRE(srv_pool_alloc(pool, sizeof arena, &big));
  CHECK_EQ_U64(big, (uintptr_t)arena);
  CHECK(srv_pool_release(pool, big));
  srv_pool_delete(pool);
}

static void exhaustion_and_bounds(void) {
  static char arena[16 * UNIT] __attribute__((aligned(UNIT)));
  CHECK(srv_pool_new((uintptr_t)arena, UNIT - 1, 4) == NULL);
  CHECK(srv_pool_new((uintptr_t)arena, UNIT, 0) == NULL);
  srv_pool_t *pool = srv_pool_new((uintptr_t)arena, sizeof arena, 3);
  REQUIRE(pool != NULL);
  uintptr_t a, b, c;
  CHECK(!srv_pool_alloc(pool, sizeof arena + 1, &a));
  CHECK(!srv_pool_alloc(pool, SIZE_MAX, &a)); /* rounding must not wrap */
  REQUIRE(srv_pool_alloc(pool, UNIT, &a));
  REQUIRE(srv_pool_alloc(pool, UNIT, &b));
  /* Three blocks tracked (a, b, the rest): a split is refused, but the
   * whole rest still fits exactly. */
  CHECK(!srv_pool_alloc(pool, UNIT, &c));
  REQUIRE(srv_pool_alloc(pool, 14 * UNIT, &c));
  CHECK_EQ_U64(srv_pool_used(pool), sizeof arena);
  /* Bad frees change nothing. */
  CHECK(!srv_pool_release(pool, a + 1));
  CHECK(!srv_pool_release(pool, (uintptr_t)arena + sizeof arena));
  CHECK(!srv_pool_release(pool, 0));
  CHECK(srv_pool_release(pool, b));
  CHECK(!srv_pool_release(pool, b)); /* twice */
  CHECK(srv_pool_owns(pool, b));
  CHECK(!srv_pool_owns(pool, (uintptr_t)arena - 1));
  CHECK_EQ_U64(srv_pool_used(pool), 15 * UNIT);
  CHECK(srv_pool_release(pool, a));
  CHECK(srv_pool_release(pool, c));
  CHECK_EQ_U64(srv_pool_used(pool), 0);
  srv_pool_delete(pool);
}

enum { THREADS = 8, ROUNDS = 4000, HELD = 8 };

typedef struct {
  srv_pool_t *pool;
  unsigned seed;
  unsigned failures; /* allocations refused while the pool was busy */
} worker_t;

/* Each thread keeps up to HELD blocks, writes its id into every byte it
 * holds and checks them before freeing: overlapping blocks would show. */
static void *worker(void *arg) {
  worker_t *w = arg;
  uintptr_t held[HELD] = {0};
  size_t sizes[HELD] = {0};
  unsigned char tag = (unsigned char)(w->seed & 0xff);
  for (int r = 0; r < ROUNDS; r++) {
    int slot = rand_r(&w->seed) % HELD;
    if (held[slot] != 0) {
      for (size_t k = 0; k < sizes[slot]; k++)
        if (((unsigned char *)held[slot])[k] != tag) {
          CHECK(!"a block was overwritten by another thread");
          break;
        }
      CHECK(srv_pool_release(w->pool, held[slot]));
      held[slot] = 0;
      continue;
    }
    size_t n = 1 + (size_t)(rand_r(&w->seed) % (3 * UNIT));
    if (!srv_pool_alloc(w->pool, n, &held[slot])) {
      held[slot] = 0;
      w->failures++;
      continue;
    }
    sizes[slot] = n;
    memset((void *)held[slot], tag, n);
  }
  for (int i = 0; i < HELD; i++)
    if (held[i] != 0) CHECK(srv_pool_release(w->pool, held[i]));
  return NULL;
}

static void threads_alloc_and_free_concurrently(void) {
  /* Four times the room every thread's blocks take at their largest: first
   * fit may still fragment, so refusals are counted, not forbidden. */
  size_t size = 4 * THREADS * HELD * 3 * UNIT;
  char *arena = aligned_alloc(UNIT, size);
  REQUIRE(arena != NULL);
  srv_pool_t *pool = srv_pool_new((uintptr_t)arena, size, SRV_POOL_BLOCKS_MAX);
  REQUIRE(pool != NULL);
  pthread_t t[THREADS];
  worker_t w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker_t){.pool = pool, .seed = 0x9e37u * (unsigned)(i + 1)};
    REQUIRE(pthread_create(&t[i], NULL, worker, &w[i]) == 0);
  }
  unsigned failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    failures += w[i].failures;
  }
  CHECK(failures < THREADS * ROUNDS / 100);
  CHECK_EQ_U64(srv_pool_used(pool), 0);
  CHECK_EQ_U64(srv_pool_block_count(pool), 1);
  srv_pool_delete(pool);
  free(arena);
}

UNIT_MAIN("memory_pool", UNIT_CASE(alloc_is_aligned_and_first_fit),
          UNIT_CASE(frees_coalesce_in_any_order), UNIT_CASE(exhaustion_and_bounds),
          UNIT_CASE(threads_alloc_and_free_concurrently))
