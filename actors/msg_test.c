/* Message-pool tests: sizes and alignment, the header a fresh message gets,
 * reuse from the thread cache, and a torture of messages allocated on one
 * thread and freed on another (the fan-in pattern), in both directions. */
#include "actors/msg.h"

#include <stdlib.h>
#include <string.h>

#include "actors/testing.h"
#include "test/unit/unit.h"

enum {
  PAIRS = 3,
  PER_PAIR = ACT_TEST_N(1000000, 400000),
  RING = 1024,
};

static void sizes_alignment_and_header(void) {
  static const size_t sizes[] = {0,   1,   16,  63,   64,   65,   127, 128,
                                 129, 512, 513, 1023, 1024, 1025, 70000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    act_msg_t *m = act_msg_alloc(sizes[i]);
    REQUIRE(m != NULL);
    CHECK(((uintptr_t)m & 15) == 0);
    CHECK(atomic_load(&m->next) == NULL);
    CHECK_EQ_U64(m->kind, 0);
    CHECK_EQ_U64(m->flags, 0);
    size_t usable = sizes[i] < sizeof *m ? sizeof *m : sizes[i];
    memset(m, 0xab, usable); /* ASan: the whole size is ours */
    act_msg_free(m);
  }
}

static void cache_reuses_freed_blocks(void) {
  act_msg_t *a = act_msg_alloc(100);
  act_msg_free(a);
  act_msg_t *b = act_msg_alloc(128); /* same class, same thread: LIFO */
  CHECK(a == b);
  b->kind = 7;
  b->flags = 3;
  act_msg_free(b);
  act_msg_t *c = act_msg_alloc(90);
  CHECK_EQ_U64(c->kind, 0); /* header reset on every alloc */
  CHECK_EQ_U64(c->flags, 0);
  act_msg_free(c);
}

static void many_live_then_freed(void) {
  /* More than two batches outstanding forces depot traffic both ways. */
  enum { LIVE = 1000 };
  static act_msg_t *live[LIVE];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < LIVE; i++) {
      live[i] = act_msg_alloc(64u << (i % 5));
      live[i]->kind = (uint32_t)i;
    }
    for (int i = 0; i < LIVE; i++) {
      CHECK_EQ_U64(live[i]->kind, (uint32_t)i);
      act_msg_free(live[i]);
    }
  }
  act_msg_cache_flush();
  act_msg_pool_trim();
}

/* A single-producer single-consumer ring of message pointers. */
typedef struct {
  act_msg_t *_Atomic slot[RING];
  _Alignas(64) atomic_ullong head;
  _Alignas(64) atomic_ullong tail;
  unsigned long long bad;
} pair_t;

static void *alloc_side(void *arg) {
  pair_t *p = arg;
  for (unsigned long long i = 0; i < PER_PAIR; i++) {
    act_msg_t *m = act_msg_alloc(16 + (i % 5) * 200);
    m->kind = (uint32_t)i;
    while (atomic_load(&p->tail) - atomic_load_explicit(&p->head, memory_order_acquire) == RING)
      sched_yield();
    atomic_store_explicit(&p->slot[i % RING], m, memory_order_relaxed);
    atomic_store_explicit(&p->tail, i + 1, memory_order_release);
  }
  return NULL;
}

static void *free_side(void *arg) {
  pair_t *p = arg;
  for (unsigned long long i = 0; i < PER_PAIR; i++) {
    while (atomic_load_explicit(&p->tail, memory_order_acquire) == i) sched_yield();
    act_msg_t *m = atomic_load_explicit(&p->slot[i % RING], memory_order_relaxed);
    if (m->kind != (uint32_t)i) p->bad++;
    act_msg_free(m);
    atomic_store_explicit(&p->head, i + 1, memory_order_release);
  }
  return NULL;
}

static void torture_cross_thread_free(void) {
  pair_t *pairs = aligned_alloc(64, sizeof(pair_t) * PAIRS);
  REQUIRE(pairs != NULL);
  memset(pairs, 0, sizeof(pair_t) * PAIRS);
  pthread_t th[2 * PAIRS];
  for (int i = 0; i < PAIRS; i++) {
    pthread_create(&th[2 * i], NULL, alloc_side, &pairs[i]);
    pthread_create(&th[2 * i + 1], NULL, free_side, &pairs[i]);
  }
  act_test_join(th, 2 * PAIRS);
  for (int i = 0; i < PAIRS; i++) CHECK_EQ_U64(pairs[i].bad, 0);
  free(pairs);
  /* The threads flushed their caches on exit; LSan checks trim frees all. */
  act_msg_cache_flush();
  act_msg_pool_trim();
}

UNIT_MAIN("msg", UNIT_CASE(sizes_alignment_and_header),
          UNIT_CASE(cache_reuses_freed_blocks), UNIT_CASE(many_live_then_freed),
          UNIT_CASE(torture_cross_thread_free))
