/* Benchmark of the block pools (not a test): an alloc/free pair of a
 * call-sized block on one thread, and blocks made on one thread and freed
 * on another (a ring between two threads), from the pool and from malloc
 * (jemalloc in an optimized build). Main thread plus one consumer.
 * Usage: block_pool_bench [MODE [PAIRS]], MODE one of all (default),
 * pool, malloc (one thread only: for callgrind's instruction counts). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/common/block_pool.h"

enum { SIZE = 4608, RING = 64 };

static srv_block_pool_t pool = SRV_BLOCK_POOL_INIT(SIZE, 16, 8);
static void *_Atomic ring[RING];
static int use_pool;
static long pairs = 20000000;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *get(void) { return use_pool ? srv_block_pool_alloc(&pool) : malloc(SIZE); }

static void put(void *p) {
  if (use_pool)
    srv_block_pool_free(&pool, p);
  else
    free(p);
}

/* One thread: the pair, and one byte written so the block is used. */
static double one_thread(void) {
  uint64_t t0 = now_ns();
  for (long i = 0; i < pairs; i++) {
    char *volatile p = get();
    p[0] = (char)i;
    put(p);
  }
  return (double)(now_ns() - t0) / (double)pairs;
}

static void *consumer(void *arg) {
  (void)arg;
  for (long i = 0; i < pairs; i++) {
    void *p;
    /* Acquire: the producer's writes to the block. */
    while ((p = atomic_exchange_explicit(&ring[i % RING], NULL, memory_order_acquire)) ==
           NULL) {
    }
    put(p);
  }
  return NULL;
}

static double two_threads(void) {
  pthread_t t;
  uint64_t t0 = now_ns();
  pthread_create(&t, NULL, consumer, NULL);
  for (long i = 0; i < pairs; i++) {
    char *p = get();
    p[0] = (char)i;
    while (atomic_load_explicit(&ring[i % RING], memory_order_relaxed) != NULL) {
    }
    /* Release: the block's contents go with it. */
    atomic_store_explicit(&ring[i % RING], p, memory_order_release);
  }
  pthread_join(t, NULL);
  return (double)(now_ns() - t0) / (double)pairs;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "all";
  if (argc > 2) pairs = atol(argv[2]);
  if (strcmp(mode, "pool") == 0 || strcmp(mode, "malloc") == 0) {
    use_pool = strcmp(mode, "pool") == 0;
    printf("%s, one thread: %.1f ns per pair\n", mode, one_thread());
    return 0;
  }
  for (use_pool = 0; use_pool < 2; use_pool++) {
    const char *name = use_pool ? "pool  " : "malloc";
    printf("%s one thread:  %.1f ns per alloc/free pair (%d bytes)\n", name, one_thread(),
           SIZE);
    printf("%s two threads: %.1f ns per block made on one, freed on the other\n", name,
           two_threads());
  }
  return 0;
}
