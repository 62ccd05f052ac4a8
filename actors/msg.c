/* The message pool (see msg.h): per-thread two-list caches per size class in
 * front of a global, mutex-protected depot of fixed-size chains. Any thread;
 * each thread touches only its own cache, the depot takes a lock per batch. */
#include "actors/msg.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "actors/base.h"

/* Freed messages are poisoned under ASan, so a use after act_msg_free is
 * reported even though the block stays allocated inside the pool. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { CLASSES = 5, MIN_SHIFT = 6, BATCH = 64 };
#define LARGE_CLASS 0xffu
#define MAGIC_LIVE 0x4e4d5347u /* message handed out */
#define MAGIC_FREE 0x66726565u /* message in a cache or the depot */

/* Hidden prefix in front of every message; 16 bytes keep the message
 * 16-byte aligned. Never poisoned: free reads it to find the class. */
typedef struct block {
  struct block *next; /* free-list link while cached */
  uint32_t cls;       /* size class, or LARGE_CLASS */
  uint32_t magic;     /* MAGIC_LIVE or MAGIC_FREE */
} block_t;

/* A chain in the depot keeps its bookkeeping in its first block's body. */
typedef struct {
  block_t *next_chain;
  uint32_t count;
} chain_hdr_t;

typedef struct {
  block_t *head;
  uint32_t count;
} list_t;

/* Per thread: `cur` serves alloc and free; `spare` is one full batch kept
 * back so that alternating alloc/free at a batch boundary does not bounce
 * batches through the depot. At most 2 * BATCH blocks per class. */
typedef struct {
  list_t cur[CLASSES];
  list_t spare[CLASSES];
  bool registered; /* the exit destructor knows this cache */
} cache_t;

typedef struct {
  pthread_mutex_t mu;
  block_t *chains; /* stack of chains, linked through chain_hdr_t */
} depot_t;

static depot_t depot[CLASSES] = {
    {PTHREAD_MUTEX_INITIALIZER, NULL}, {PTHREAD_MUTEX_INITIALIZER, NULL},
    {PTHREAD_MUTEX_INITIALIZER, NULL}, {PTHREAD_MUTEX_INITIALIZER, NULL},
    {PTHREAD_MUTEX_INITIALIZER, NULL},
};
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t cache_key;
static _Thread_local cache_t tls_cache ACT_TLS_INITIAL_EXEC;

static inline size_t class_bytes(unsigned cls) {
  return (size_t)1 << (cls + MIN_SHIFT);
}

static inline unsigned class_of(size_t size) {
  if (size <= ((size_t)1 << MIN_SHIFT)) return 0;
  return (unsigned)(64 - __builtin_clzll((unsigned long long)size - 1)) -
         MIN_SHIFT;
}

static chain_hdr_t *chain_hdr(block_t *b) { return (chain_hdr_t *)(b + 1); }

static void depot_put(unsigned cls, list_t chain) {
  chain_hdr_t *h = chain_hdr(chain.head);
  UNPOISON(h, sizeof *h);
  h->count = chain.count;
  pthread_mutex_lock(&depot[cls].mu);
  h->next_chain = depot[cls].chains;
  depot[cls].chains = chain.head;
  /* Before the unlock: afterwards another thread may take and use it. */
  POISON(h, sizeof *h);
  pthread_mutex_unlock(&depot[cls].mu);
}

/* A chain from the depot, or BATCH fresh blocks when it is empty (the only
 * place the pool calls malloc for small messages). */
static list_t depot_take(unsigned cls) {
  list_t out = {NULL, 0};
  pthread_mutex_lock(&depot[cls].mu);
  block_t *b = depot[cls].chains;
  if (b != NULL) {
    chain_hdr_t *h = chain_hdr(b);
    UNPOISON(h, sizeof *h);
    depot[cls].chains = h->next_chain;
    out.head = b;
    out.count = h->count;
    POISON(h, sizeof *h);
  }
  pthread_mutex_unlock(&depot[cls].mu);
  if (out.head != NULL) return out;
  for (int i = 0; i < BATCH; i++) {
    block_t *nb = malloc(sizeof(block_t) + class_bytes(cls));
    if (nb == NULL) ACT_FATAL("out of memory for a %zu-byte message", class_bytes(cls));
    nb->cls = cls;
    nb->magic = MAGIC_FREE;
    nb->next = out.head;
    POISON(nb + 1, class_bytes(cls));
    out.head = nb;
    out.count++;
  }
  return out;
}

static void cache_flush(cache_t *c) {
  for (unsigned cls = 0; cls < CLASSES; cls++) {
    if (c->cur[cls].head != NULL) depot_put(cls, c->cur[cls]);
    if (c->spare[cls].head != NULL) depot_put(cls, c->spare[cls]);
    c->cur[cls] = (list_t){NULL, 0};
    c->spare[cls] = (list_t){NULL, 0};
  }
}

/* Thread exit: the cache's blocks go back to the depot instead of leaking. */
static void cache_destructor(void *arg) {
  cache_t *c = arg;
  cache_flush(c);
  c->registered = false;
}

static void make_key(void) {
  if (pthread_key_create(&cache_key, cache_destructor) != 0)
    ACT_FATAL("pthread_key_create failed for the message pool");
}

static void cache_register(cache_t *c) {
  pthread_once(&key_once, make_key);
  pthread_setspecific(cache_key, c);
  c->registered = true;
}

/* cur is empty: take the spare batch, else a chain from the depot. */
static void cache_refill(cache_t *c, unsigned cls) {
  if (ACT_UNLIKELY(!c->registered)) cache_register(c);
  if (c->spare[cls].head != NULL) {
    c->cur[cls] = c->spare[cls];
    c->spare[cls] = (list_t){NULL, 0};
    return;
  }
  c->cur[cls] = depot_take(cls);
}

void *act_msg_alloc(size_t size) {
  block_t *b;
  if (size < sizeof(act_msg_t)) size = sizeof(act_msg_t);
  if (ACT_LIKELY(size <= ACT_MSG_POOL_MAX)) {
    unsigned cls = class_of(size);
    cache_t *c = &tls_cache;
    if (ACT_UNLIKELY(c->cur[cls].head == NULL)) cache_refill(c, cls);
    b = c->cur[cls].head;
    c->cur[cls].head = b->next;
    c->cur[cls].count--;
    UNPOISON(b + 1, class_bytes(cls));
  } else {
    b = malloc(sizeof(block_t) + size);
    if (b == NULL) ACT_FATAL("out of memory for a %zu-byte message", size);
    b->cls = LARGE_CLASS;
  }
  b->magic = MAGIC_LIVE;
  act_msg_t *m = (act_msg_t *)(b + 1);
  atomic_init(&m->next, NULL);
  m->kind = 0;
  m->flags = 0;
  return m;
}

void act_msg_free(act_msg_t *msg) {
  block_t *b = (block_t *)msg - 1;
  if (ACT_UNLIKELY(b->magic != MAGIC_LIVE))
    ACT_FATAL("act_msg_free(%p): not a live pooled message (double free?)",
              (void *)msg);
  b->magic = MAGIC_FREE;
  unsigned cls = b->cls;
  if (cls == LARGE_CLASS) {
    free(b);
    return;
  }
  cache_t *c = &tls_cache;
  if (ACT_UNLIKELY(!c->registered)) cache_register(c);
  list_t *l = &c->cur[cls];
  if (ACT_UNLIKELY(l->count >= BATCH)) {
    /* cur is a full batch: it becomes the spare; an older spare goes to
     * the depot, which bounds the cache at two batches. */
    if (c->spare[cls].head != NULL) depot_put(cls, c->spare[cls]);
    c->spare[cls] = *l;
    *l = (list_t){NULL, 0};
  }
  POISON(msg, class_bytes(cls));
  b->next = l->head;
  l->head = b;
  l->count++;
}

void act_msg_cache_flush(void) { cache_flush(&tls_cache); }

void act_msg_pool_trim(void) {
  for (unsigned cls = 0; cls < CLASSES; cls++) {
    pthread_mutex_lock(&depot[cls].mu);
    block_t *chain = depot[cls].chains;
    depot[cls].chains = NULL;
    pthread_mutex_unlock(&depot[cls].mu);
    while (chain != NULL) {
      chain_hdr_t *h = chain_hdr(chain);
      UNPOISON(h, sizeof *h);
      block_t *next_chain = h->next_chain;
      for (block_t *b = chain; b != NULL;) {
        block_t *next = b->next;
        UNPOISON(b + 1, class_bytes(cls));
        free(b);
        b = next;
      }
      chain = next_chain;
    }
  }
}
