/* Run-queue tests: FIFO and capacity for the owner, then a torture where
 * every thread owns a queue and steals from the others, as workers do. */
#include "actors/runq.h"

#include <stdlib.h>

#include "actors/testing.h"
#include "test/unit/unit.h"

enum { THREADS = 4, ITEMS = ACT_TEST_N(2000000, 1000000) };

/* The queue only stores pointers; fake actors are indices into `taken`. */
static atomic_uchar *taken;

static struct act_actor *fake(uint32_t i) {
  return (struct act_actor *)(uintptr_t)((uintptr_t)(i + 1) << 4);
}
static uint32_t fake_index(struct act_actor *a) {
  return (uint32_t)(((uintptr_t)a >> 4) - 1);
}

static void owner_fifo_and_capacity(void) {
  static act_runq_t q;
  act_runq_init(&q);
  CHECK(act_runq_pop(&q) == NULL);
  for (uint32_t i = 0; i < ACT_RUNQ_CAP; i++) CHECK(act_runq_push(&q, fake(i)));
  CHECK(!act_runq_push(&q, fake(999))); /* full */
  CHECK_EQ_U64(act_runq_len(&q), ACT_RUNQ_CAP);
  for (uint32_t i = 0; i < ACT_RUNQ_CAP; i++) CHECK(act_runq_pop(&q) == fake(i));
  CHECK(act_runq_pop(&q) == NULL);
  CHECK_EQ_U64(act_runq_len(&q), 0);
}

static void steal_takes_half_oldest_first(void) {
  static act_runq_t victim, mine;
  act_runq_init(&victim);
  act_runq_init(&mine);
  CHECK(act_runq_steal(&victim, &mine) == NULL);
  for (uint32_t i = 0; i < 9; i++) act_runq_push(&victim, fake(i));
  CHECK(act_runq_steal(&victim, &mine) == fake(0)); /* 5 taken: 0..4 */
  CHECK_EQ_U64(act_runq_len(&mine), 4);
  CHECK_EQ_U64(act_runq_len(&victim), 4);
  for (uint32_t i = 1; i < 5; i++) CHECK(act_runq_pop(&mine) == fake(i));
  for (uint32_t i = 5; i < 9; i++) CHECK(act_runq_pop(&victim) == fake(i));
  act_runq_push(&victim, fake(42));
  CHECK(act_runq_steal(&victim, &mine) == fake(42)); /* one of one */
}

typedef struct {
  act_runq_t q;
  unsigned id;
  unsigned long long done;
} worker_t;

static worker_t *workers;
static atomic_ullong processed;
static atomic_ullong duplicates;

static void process(worker_t *w, struct act_actor *a) {
  uint32_t i = fake_index(a);
  if (i >= ITEMS || atomic_fetch_add(&taken[i], 1) != 0)
    atomic_fetch_add(&duplicates, 1);
  atomic_fetch_add_explicit(&processed, 1, memory_order_relaxed);
  w->done++;
}

static bool take_any(worker_t *w, unsigned *rng) {
  struct act_actor *a = act_runq_pop(&w->q);
  for (unsigned k = 0; a == NULL && k < THREADS; k++) {
    worker_t *v = &workers[(*rng + k) % THREADS];
    if (v != w) a = act_runq_steal(&v->q, &w->q);
  }
  *rng = *rng * 1103515245u + 12345u;
  if (a == NULL) return false;
  process(w, a);
  return true;
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  unsigned rng = w->id * 7919u + 1;
  uint64_t give_up = act_now_ns() + 40ull * 1000000000u;
  uint32_t next = 0;
  /* Worker 0 produces everything, consuming a little as it goes so that its
   * queue sees pushes, pops and steals at once. */
  while (atomic_load_explicit(&processed, memory_order_relaxed) < ITEMS &&
         act_now_ns() < give_up) {
    if (w->id == 0 && next < ITEMS) {
      if (act_runq_push(&w->q, fake(next)))
        next++;
      else
        take_any(w, &rng);
      if (next % 3 == 0) take_any(w, &rng);
    } else if (!take_any(w, &rng)) {
      sched_yield();
    }
  }
  return NULL;
}

static void torture_owner_and_thieves(void) {
  taken = calloc(ITEMS, sizeof *taken);
  workers = aligned_alloc(ACT_CACHE_LINE, THREADS * sizeof(worker_t));
  REQUIRE(taken != NULL && workers != NULL);
  atomic_store(&processed, 0);
  atomic_store(&duplicates, 0);
  for (unsigned i = 0; i < THREADS; i++) {
    act_runq_init(&workers[i].q);
    workers[i].id = i;
    workers[i].done = 0;
  }
  pthread_t th[THREADS];
  act_test_start(th, THREADS, worker_main, workers, sizeof(worker_t));
  act_test_join(th, THREADS);
  CHECK_EQ_U64(atomic_load(&processed), ITEMS);
  CHECK_EQ_U64(atomic_load(&duplicates), 0);
  unsigned long long missing = 0, thieves = 0;
  for (uint32_t i = 0; i < ITEMS; i++) missing += atomic_load(&taken[i]) != 1;
  for (unsigned i = 1; i < THREADS; i++) thieves += workers[i].done;
  CHECK_EQ_U64(missing, 0);
  CHECK(thieves > 0); /* stealing really happened */
  free(taken);
  free(workers);
}

UNIT_MAIN("runq", UNIT_CASE(owner_fifo_and_capacity),
          UNIT_CASE(steal_takes_half_oldest_first),
          UNIT_CASE(torture_owner_and_thieves))
