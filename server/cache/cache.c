/* The local response cache (cache.h, cache.md). The index is a fixed
 * array of chains sized from the budget at creation; the LRU list is
 * doubly linked, most recent at the head. c->lock guards the index, the
 * list, `bytes`, `entries` and `evictions`; an entry's outputs are
 * immutable after insertion and read without the lock under a reference. */
#include "server/cache/cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "server/cache/cache_calls.h"
#include "server/cache/cache_library.h"
#include "server/common/log.h"

struct srv_cache_entry {
  srv_cache_key_t key;
  struct srv_cache_entry *chain;       /* next in its index slot */
  struct srv_cache_entry *prev, *next; /* LRU list, most recent first */
  /* One for the index while the entry is in it, one per lookup holding it.
   * The last release frees it and gives its bytes back. */
  _Atomic uint32_t refs;
  uint32_t output_count;
  uint64_t bytes; /* what it is charged: the whole allocation */
  srv_cache_output_t outputs[];
};

struct srv_cache {
  pthread_mutex_t lock;
  uint64_t budget, bytes, entries, evictions;
  srv_cache_entry_t *head, *tail;
  uint64_t seed;
  uint64_t slot_mask;
  srv_cache_entry_t **slots;
  /* A cache library instead of the local store: lookups and insertions go
   * to it, entries are standalone copies charged nothing here. */
  srv_cache_library_t *lib;
  srv_cache_calls_t *calls; /* the library's call threads */
};

enum { ALIGN = 16, BYTES_PER_SLOT = 2048, MIN_SLOTS = 16, MAX_SLOTS = 1u << 22 };

static uint64_t up(uint64_t n) { return (n + ALIGN - 1) & ~(uint64_t)(ALIGN - 1); }

/* Adds b to *a unless that passes 64 bits. */
static bool add(uint64_t *a, uint64_t b) {
  if (*a > UINT64_MAX - b) return false;
  *a += b;
  return true;
}

uint64_t srv_cache_entry_bytes(const srv_cache_output_t *o, uint32_t n) {
  uint64_t total =
      up(sizeof(srv_cache_entry_t) + (uint64_t)n * sizeof(srv_cache_output_t));
  for (uint32_t i = 0; i < n; i++) {
    if (o[i].byte_size > UINT64_MAX - ALIGN) return UINT64_MAX;
    if (!add(&total, up(strlen(o[i].name) + 1)) ||
        !add(&total, up((uint64_t)o[i].dims_count * sizeof(int64_t))) ||
        !add(&total, up(o[i].byte_size)))
      return UINT64_MAX;
  }
  return total;
}

static uint64_t seed_draw(void) {
  uint64_t s;
  if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s) return s;
  /* No entropy yet (early boot): the clock still differs per process. */
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec;
}

srv_status_t *srv_cache_new(uint64_t budget, srv_cache_t **out) {
  uint64_t slots = MIN_SLOTS;
  while (slots < MAX_SLOTS && slots < budget / BYTES_PER_SLOT) slots *= 2;
  uint64_t index = sizeof(srv_cache_t) + slots * sizeof(srv_cache_entry_t *);
  if (budget <= index)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "local cache size %llu bytes leaves no room for entries: its "
                          "index takes %llu bytes; give at least 1024",
                          (unsigned long long)budget, (unsigned long long)index);
  srv_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL) SRV_FATAL("out of memory");
  c->slots = calloc(slots, sizeof *c->slots);
  if (c->slots == NULL) SRV_FATAL("out of memory");
  pthread_mutex_init(&c->lock, NULL);
  c->budget = budget;
  c->bytes = index;
  c->slot_mask = slots - 1;
  c->seed = seed_draw();
  *out = c;
  return NULL;
}

/* A library's call threads: enough that a few slow round trips overlap,
 * few enough to stay a side cost. The queue holds what a burst needs
 * (lookups wait there as requests would in the model's queue) and at most
 * 64 MiB of answers waiting to be inserted; beyond that lookups skip the
 * cache and insertions are dropped (cache.md). */
enum {
  CALL_THREADS = 4,
  CALL_QUEUE_JOBS = 64,
};
#define CALL_QUEUE_BYTES (64ull << 20)

srv_status_t *srv_cache_new_library(const char *dir, const char *name,
                                    const char *config_json, srv_cache_t **out) {
  srv_cache_library_t *lib;
  srv_status_t *st = srv_cache_library_open(dir, name, config_json, &lib);
  if (st != NULL) return st;
  srv_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL) SRV_FATAL("out of memory");
  pthread_mutex_init(&c->lock, NULL);
  c->lib = lib;
  c->calls = srv_cache_calls_new(CALL_THREADS, CALL_QUEUE_JOBS, CALL_QUEUE_BYTES);
  c->seed = seed_draw();
  *out = c;
  return NULL;
}

void srv_cache_free(srv_cache_t *c) {
  if (c == NULL) return;
  srv_cache_calls_free(c->calls); /* runs what is queued: the library is still open */
  srv_cache_library_close(c->lib);
  for (srv_cache_entry_t *e = c->head, *next; e != NULL; e = next) {
    next = e->next;
    free(e);
  }
  free(c->slots);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

uint64_t srv_cache_seed(const srv_cache_t *c) { return c->seed; }

/* ---- the list and the index (under c->lock) ---- */

static void lru_unlink(srv_cache_t *c, srv_cache_entry_t *e) {
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    c->head = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    c->tail = e->prev;
  e->prev = e->next = NULL;
}

static void lru_push(srv_cache_t *c, srv_cache_entry_t *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head != NULL)
    c->head->prev = e;
  else
    c->tail = e;
  c->head = e;
}

static srv_cache_entry_t **slot_of(srv_cache_t *c, const srv_cache_key_t *k) {
  return &c->slots[k->lo & c->slot_mask];
}

static srv_cache_entry_t *find(srv_cache_t *c, const srv_cache_key_t *k) {
  for (srv_cache_entry_t *e = *slot_of(c, k); e != NULL; e = e->chain)
    if (srv_cache_key_eq(&e->key, k)) return e;
  return NULL;
}

/* Drops a reference while holding the lock: the last one frees e. */
static void unref_locked(srv_cache_t *c, srv_cache_entry_t *e) {
  /* Acq_rel: the freeing side sees every holder's reads done. */
  if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1) return;
  c->bytes -= e->bytes;
  free(e);
}

/* Takes the least recently used entry out of the index; it stays charged
 * until its last holder lets go. */
static void evict_tail(srv_cache_t *c) {
  srv_cache_entry_t *e = c->tail;
  srv_cache_entry_t **link = slot_of(c, &e->key);
  while (*link != e) link = &(*link)->chain;
  *link = e->chain;
  lru_unlink(c, e);
  c->entries--;
  c->evictions++;
  unref_locked(c, e);
}

/* ---- the operations ---- */

static srv_cache_entry_t *entry_new(const srv_cache_key_t *key,
                                    const srv_cache_output_t *o, uint32_t n,
                                    uint64_t bytes);

/* A library's answer as a standalone entry: one reference, the caller's. */
static srv_cache_entry_t *library_lookup(srv_cache_t *c, const srv_cache_key_t *key) {
  void *blob;
  srv_cache_output_t *outs;
  int64_t n = srv_cache_library_lookup(c->lib, key, &blob, &outs);
  if (n < 0) return NULL;
  uint64_t bytes = srv_cache_entry_bytes(outs, (uint32_t)n);
  srv_cache_entry_t *e =
      bytes == UINT64_MAX ? NULL : entry_new(key, outs, (uint32_t)n, bytes);
  if (e != NULL) e->bytes = 0; /* charged to nobody: the library holds the answer */
  free(outs);
  free(blob);
  return e;
}

srv_cache_entry_t *srv_cache_lookup(srv_cache_t *c, const srv_cache_key_t *key) {
  if (c->lib != NULL) return library_lookup(c, key);
  pthread_mutex_lock(&c->lock);
  srv_cache_entry_t *e = find(c, key);
  if (e != NULL) {
    /* Relaxed: the lock orders it with the index's own reference. */
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    if (c->head != e) {
      lru_unlink(c, e);
      lru_push(c, e);
    }
  }
  pthread_mutex_unlock(&c->lock);
  return e;
}

uint32_t srv_cache_entry_outputs(const srv_cache_entry_t *e,
                                 const srv_cache_output_t **out) {
  *out = e->outputs;
  return e->output_count;
}

void srv_cache_entry_release(srv_cache_t *c, srv_cache_entry_t *e) {
  /* Most releases are not the last (the index holds one): no lock then.
   * The last one can only follow an eviction, which needs the lock to give
   * the bytes back. */
  uint32_t refs = atomic_load_explicit(&e->refs, memory_order_relaxed);
  while (refs > 1)
    if (atomic_compare_exchange_weak_explicit(&e->refs, &refs, refs - 1,
                                              memory_order_acq_rel, memory_order_relaxed))
      return;
  pthread_mutex_lock(&c->lock);
  unref_locked(c, e);
  pthread_mutex_unlock(&c->lock);
}

/* A new entry holding copies of the outputs, laid out in one block. */
static srv_cache_entry_t *entry_new(const srv_cache_key_t *key,
                                    const srv_cache_output_t *o, uint32_t n,
                                    uint64_t bytes) {
  srv_cache_entry_t *e = malloc(bytes);
  if (e == NULL) return NULL;
  e->key = *key;
  e->chain = e->prev = e->next = NULL;
  atomic_init(&e->refs, 1);
  e->output_count = n;
  e->bytes = bytes;
  char *p = (char *)e + up(sizeof *e + (uint64_t)n * sizeof *o);
  for (uint32_t i = 0; i < n; i++) {
    srv_cache_output_t *d = &e->outputs[i];
    size_t len = strlen(o[i].name) + 1;
    d->name = memcpy(p, o[i].name, len);
    p += up(len);
    d->shape =
        o[i].dims_count ? memcpy(p, o[i].shape, o[i].dims_count * sizeof(int64_t)) : NULL;
    p += up((uint64_t)o[i].dims_count * sizeof(int64_t));
    d->data = o[i].byte_size ? memcpy(p, o[i].data, o[i].byte_size) : NULL;
    p += up(o[i].byte_size);
    d->datatype = o[i].datatype;
    d->dims_count = o[i].dims_count;
    d->byte_size = o[i].byte_size;
  }
  return e;
}

srv_cache_insert_t srv_cache_insert(srv_cache_t *c, const srv_cache_key_t *key,
                                    const srv_cache_output_t *outputs, uint32_t count) {
  if (c->lib != NULL) {
    size_t size;
    void *blob = srv_cache_library_encode(outputs, count, &size);
    if (blob == NULL) return SRV_CACHE_TOO_BIG;
    bool ok = srv_cache_library_insert(c->lib, key, blob, size);
    free(blob);
    return ok ? SRV_CACHE_INSERTED : SRV_CACHE_PRESENT;
  }
  uint64_t bytes = srv_cache_entry_bytes(outputs, count);
  /* Read without the lock: budget never changes, and the index's size
   * (bytes at creation) is a floor nothing frees. */
  if (bytes == UINT64_MAX || bytes > c->budget) return SRV_CACHE_TOO_BIG;
  /* The copy happens before the lock, so lookups never wait for it. */
  srv_cache_entry_t *e = entry_new(key, outputs, count, bytes);
  if (e == NULL) return SRV_CACHE_NO_ROOM;
  pthread_mutex_lock(&c->lock);
  srv_cache_insert_t result = SRV_CACHE_INSERTED;
  if (find(c, key) != NULL) {
    result = SRV_CACHE_PRESENT;
  } else {
    while (c->tail != NULL && c->bytes + bytes > c->budget) evict_tail(c);
    if (c->bytes + bytes >
        c->budget) { /* what is left is held by lookups, or the index */
      result = SRV_CACHE_NO_ROOM;
    } else {
      srv_cache_entry_t **slot = slot_of(c, key);
      e->chain = *slot;
      *slot = e;
      lru_push(c, e);
      c->bytes += bytes;
      c->entries++;
    }
  }
  pthread_mutex_unlock(&c->lock);
  if (result != SRV_CACHE_INSERTED) free(e);
  return result;
}

/* ---- a library's calls ---- */

bool srv_cache_is_library(const srv_cache_t *c) { return c->lib != NULL; }

bool srv_cache_job_try_push(srv_cache_t *c, srv_cache_job_t *job) {
  return srv_cache_calls_try_push(c->calls, job);
}

void *srv_cache_encode(const srv_cache_output_t *outputs, uint32_t count, size_t *size) {
  return srv_cache_library_encode(outputs, count, size);
}

void srv_cache_insert_encoded(srv_cache_t *c, const srv_cache_key_t *key,
                              const void *blob, size_t size) {
  srv_cache_library_insert(c->lib, key, blob, size);
}

/* Once a second at most: the second of the last line, and the lines
 * skipped since (both relaxed: a log throttle, not a count anyone sums). */
static _Atomic uint64_t failed_logged_s;
static _Atomic uint64_t failed_skipped;

void srv_cache_insert_failed(const srv_cache_key_t *key, const char *why) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec;
  uint64_t last = atomic_load_explicit(&failed_logged_s, memory_order_relaxed);
  if (last == now || !atomic_compare_exchange_strong_explicit(
                         &failed_logged_s, &last, now, memory_order_relaxed,
                         memory_order_relaxed)) {
    atomic_fetch_add_explicit(&failed_skipped, 1, memory_order_relaxed);
    return;
  }
  uint64_t skipped = atomic_exchange_explicit(&failed_skipped, 0, memory_order_relaxed);
  char text[33];
  srv_cache_key_text(key, text);
  if (skipped == 0)
    SRV_ERROR("Failed to insert key [%s] into response cache: %s", text, why);
  else
    SRV_ERROR("Failed to insert key [%s] into response cache: %s (and %llu more "
              "failed insertions not logged)",
              text, why, (unsigned long long)skipped);
}

void srv_cache_usage(srv_cache_t *c, srv_cache_usage_t *out) {
  pthread_mutex_lock(&c->lock);
  *out = (srv_cache_usage_t){.budget = c->budget,
                             .bytes = c->bytes,
                             .entries = c->entries,
                             .evictions = c->evictions};
  pthread_mutex_unlock(&c->lock);
}
