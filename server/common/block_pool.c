/* Fixed-size block pools (see block_pool.h, block_pool.md): each thread's
 * cache is its own (thread-local, no atomics); blocks cross threads only
 * inside the depot, under its mutex, a batch at a time. */
#include "server/common/block_pool.h"

#include <stdbool.h>
#include <stdlib.h>

#include "server/common/log.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Slow paths stay out of line: inlined, their register saves would double
 * the fast path's instructions. */
#define COLD __attribute__((noinline, cold))

/* Free blocks are poisoned under ASan past their links (BODY): a use after
 * srv_block_pool_free is reported although the pool keeps the block, and
 * so is a second free. The links stay readable: LeakSanitizer skips
 * poisoned words, and would report every cached block but a chain's first
 * as leaked at exit. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON_BODY(p, n) ASAN_POISON_MEMORY_REGION((char *)(p) + BODY, (n)-BODY)
#define UNPOISON_BODY(p, n) ASAN_UNPOISON_MEMORY_REGION((char *)(p) + BODY, (n)-BODY)
#define BODY_IS_POISONED(p) __asan_address_is_poisoned((char *)(p) + BODY)
#else
#define POISON_BODY(p, n) ((void)(p), (void)(n))
#define UNPOISON_BODY(p, n) ((void)(p), (void)(n))
#define BODY_IS_POISONED(p) ((void)(p), 0)
#endif

/* What a free block holds. `next` links a chain; the first block of a
 * chain in the depot also carries the link to the next chain and its
 * length (blocks are at least 32 bytes). */
typedef struct link {
  struct link *next;
  struct link *next_chain;
  uint64_t count;
} link_t;

enum { BODY = sizeof(link_t) }; /* where a block's poisoned part starts */

/* One thread's cache of one pool. `cur` serves both alloc and free and
 * holds batch - room blocks; `spare` is NULL or one full batch kept back,
 * so that a thread alternating around a batch boundary does not bounce
 * chains through the depot. room == 0 with cur == NULL: the slot was not
 * used yet on this thread (or was flushed), which sends the first free to
 * the slow path that registers the thread. */
typedef struct {
  link_t *cur;
  link_t *spare;
  uint32_t room;
} cache_t;

typedef struct {
  cache_t slot[SRV_BLOCK_POOL_SLOTS];
  bool registered; /* the exit destructor will flush this thread */
} caches_t;

/* Initial-exec: the server's code lives in libtritonserver.so, where the
 * default model reads a thread-local through __tls_get_addr, a call that
 * would cost as much as the pool saves. A dlopen of the library then needs
 * its whole TLS block in glibc's static TLS surplus: keep the library's
 * thread-locals small (block_pool.md, "Cost"; server:dlopen_test). */
static _Thread_local caches_t tls __attribute__((tls_model("initial-exec")));

/* Registered pools, by slot - 1; written under reg_mu before the slot is
 * published, read-only after. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static srv_block_pool_t *pools[SRV_BLOCK_POOL_SLOTS];
static uint32_t pool_count;
static pthread_key_t exit_key;

static void thread_exit(void *arg);

COLD static uint32_t pool_register(srv_block_pool_t *p) {
  pthread_mutex_lock(&reg_mu);
  /* Relaxed: reg_mu orders this load with the store below. */
  uint32_t s = atomic_load_explicit(&p->slot, memory_order_relaxed);
  if (s == 0) {
    if (pool_count == 0 && pthread_key_create(&exit_key, thread_exit) != 0)
      SRV_FATAL("pthread_key_create failed for the block pools");
    if (pool_count == SRV_BLOCK_POOL_SLOTS)
      SRV_FATAL("more than %d block pools", SRV_BLOCK_POOL_SLOTS);
    if (p->batch == 0) SRV_FATAL("a block pool with a batch of 0");
    pools[pool_count] = p;
    s = ++pool_count;
    /* Release: a thread that sees the slot sees pools[] and exit_key. */
    atomic_store_explicit(&p->slot, s, memory_order_release);
  }
  pthread_mutex_unlock(&reg_mu);
  return s;
}

/* This thread's cache of p, NULL while p has no slot yet. */
static inline cache_t *cache_of(srv_block_pool_t *p) {
  /* Acquire: pairs with pool_register's release (a plain load on x86). */
  uint32_t s = atomic_load_explicit(&p->slot, memory_order_acquire);
  return LIKELY(s != 0) ? &tls.slot[s - 1] : NULL;
}

static cache_t *cache_registered(srv_block_pool_t *p) {
  return &tls.slot[pool_register(p) - 1];
}

static void thread_register(void) {
  if (pthread_setspecific(exit_key, &tls) != 0)
    SRV_FATAL("pthread_setspecific failed for the block pools");
  tls.registered = true;
}

/* ---- the depot ---- */

static void chain_free(link_t *b, size_t size) {
  while (b != NULL) {
    UNPOISON_BODY(b, size);
    link_t *next = b->next;
    free(b);
    b = next;
  }
}

static void depot_put(srv_block_pool_t *p, link_t *head, uint32_t count) {
  head->count = count;
  pthread_mutex_lock(&p->mu);
  bool kept = p->chain_count < p->depot_max;
  if (kept) {
    head->next_chain = p->chains;
    p->chains = head;
    p->chain_count++;
    p->depot_blocks += count;
  }
  pthread_mutex_unlock(&p->mu);
  if (!kept) chain_free(head, p->size); /* the depot is full: bounded memory */
}

/* A chain from the depot, NULL when it is empty. */
static link_t *depot_take(srv_block_pool_t *p, uint32_t *count) {
  pthread_mutex_lock(&p->mu);
  link_t *head = p->chains;
  if (head != NULL) {
    p->chains = head->next_chain;
    p->chain_count--;
    p->depot_blocks -= head->count;
    *count = (uint32_t)head->count;
  }
  pthread_mutex_unlock(&p->mu);
  return head;
}

/* ---- the caches ---- */

static void cache_flush(srv_block_pool_t *p, cache_t *c) {
  if (c->cur != NULL) depot_put(p, c->cur, p->batch - c->room);
  if (c->spare != NULL) depot_put(p, c->spare, p->batch);
  *c = (cache_t){NULL, NULL, 0};
}

void srv_block_pool_flush(void) {
  pthread_mutex_lock(&reg_mu);
  uint32_t n = pool_count;
  pthread_mutex_unlock(&reg_mu);
  for (uint32_t i = 0; i < n; i++) cache_flush(pools[i], &tls.slot[i]);
}

/* Thread exit: the caches go to the depots instead of leaking. A later
 * free on this thread (another key's destructor) registers it again, and
 * glibc then runs this destructor once more. */
static void thread_exit(void *arg) {
  (void)arg;
  srv_block_pool_flush();
  tls.registered = false;
}

/* cur is empty: the spare batch, else a chain of the depot, else malloc. */
COLD static void *alloc_slow(srv_block_pool_t *p, cache_t *c) {
  if (UNLIKELY(!tls.registered)) thread_register();
  if (c->spare != NULL) {
    c->cur = c->spare;
    c->spare = NULL;
    c->room = 0;
  } else {
    uint32_t count = 0;
    c->cur = depot_take(p, &count);
    c->room = p->batch - count;
  }
  link_t *b = c->cur;
  if (b == NULL) {
    void *fresh = malloc(p->size);
    if (fresh == NULL) SRV_FATAL("out of memory for a %zu-byte block", p->size);
    return fresh;
  }
  c->cur = b->next;
  c->room++;
  UNPOISON_BODY(b, p->size);
  return b;
}

void *srv_block_pool_alloc(srv_block_pool_t *pool) {
  cache_t *c = cache_of(pool);
  /* Slow cases end in a tail call, so the fast path saves no register. */
  if (UNLIKELY(c == NULL)) return alloc_slow(pool, cache_registered(pool));
  link_t *b = c->cur;
  if (UNLIKELY(b == NULL)) return alloc_slow(pool, c);
  c->cur = b->next;
  c->room++;
  UNPOISON_BODY(b, pool->size);
  return b;
}

static inline void cache_push(srv_block_pool_t *p, cache_t *c, void *block) {
  link_t *b = block;
  b->next = c->cur;
  c->cur = b;
  c->room--;
  POISON_BODY(b, p->size);
}

/* cur is full, or the slot is fresh on this thread: make room, push. */
COLD static void free_slow(srv_block_pool_t *p, cache_t *c, void *block) {
  if (UNLIKELY(!tls.registered)) thread_register();
  if (c->cur == NULL) { /* fresh or flushed */
    c->room = p->batch;
  } else {
    /* cur is a full batch: it becomes the spare; an older spare goes to
     * the depot. That bounds the cache at two batches. */
    if (c->spare != NULL) depot_put(p, c->spare, p->batch);
    c->spare = c->cur;
    c->cur = NULL;
    c->room = p->batch;
  }
  cache_push(p, c, block);
}

void srv_block_pool_free(srv_block_pool_t *pool, void *block) {
  if (BODY_IS_POISONED(block))
    SRV_FATAL("srv_block_pool_free(%p): the block is free already", block);
  cache_t *c = cache_of(pool);
  if (UNLIKELY(c == NULL)) return free_slow(pool, cache_registered(pool), block);
  if (UNLIKELY(c->room == 0)) return free_slow(pool, c, block);
  cache_push(pool, c, block);
}

void srv_block_pool_trim(srv_block_pool_t *pool) {
  pthread_mutex_lock(&pool->mu);
  link_t *chain = pool->chains;
  pool->chains = NULL;
  pool->chain_count = 0;
  pool->depot_blocks = 0;
  pthread_mutex_unlock(&pool->mu);
  while (chain != NULL) {
    link_t *next_chain = chain->next_chain;
    chain_free(chain, pool->size);
    chain = next_chain;
  }
}

uint32_t srv_block_pool_cached(srv_block_pool_t *pool) {
  cache_t *c = cache_of(pool);
  if (c == NULL || (c->cur == NULL && c->spare == NULL)) return 0;
  return (pool->batch - c->room) + (c->spare != NULL ? pool->batch : 0);
}

uint64_t srv_block_pool_depot_blocks(srv_block_pool_t *pool) {
  pthread_mutex_lock(&pool->mu);
  uint64_t n = pool->depot_blocks;
  pthread_mutex_unlock(&pool->mu);
  return n;
}
