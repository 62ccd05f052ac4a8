/* Epoch-based reclamation (see epoch.h and README.md "Epoch reclamation"):
 * per-thread reader records, a global epoch, a FIFO of retired entries.
 * Readers: any thread. Writers: any thread, serialised by the domain mutex. */
#include "actors/epoch.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "actors/base.h"

/* A record's state: (epoch << 1) | ACTIVE while its thread is in a
 * section, 0 otherwise. */
#define ACTIVE ((uint64_t)1)

/* One per thread per domain, on its own cache line: readers write only
 * their own record. Never freed before the domain; reused after its thread
 * exits. */
typedef struct record {
  /* Written by the owner at its outermost enter/exit; read by writers. */
  _Alignas(ACT_CACHE_LINE) _Atomic uint64_t state;
  uint32_t depth;      /* owner only: nesting depth */
  _Atomic bool in_use; /* a live thread owns the record */
  struct record *next; /* every record of the domain; fixed once pushed */
} record_t;

_Static_assert(sizeof(record_t) == ACT_CACHE_LINE, "a record is one line");

struct act_epoch {
  /* Read on every enter; written only by an advance. */
  _Alignas(ACT_CACHE_LINE) _Atomic uint64_t epoch;
  uint64_t id;                 /* process-unique, never reused; fixed */
  _Atomic(record_t *) records; /* lock-free stack; pushed at registration */
  /* Writers only, under mu (pending is also read by act_epoch_pending). */
  _Alignas(ACT_CACHE_LINE) pthread_mutex_t mu;
  act_epoch_entry_t *head; /* retired, oldest first (so by epoch) */
  act_epoch_entry_t *tail;
  _Atomic size_t pending;      /* retired, callback not returned yet */
  struct act_epoch *next_live; /* under g_lock */
};

/* A thread's link to its record in one domain. The list is the thread's
 * own; the exit hook gets it as the pthread key's value. */
typedef struct link {
  struct link *next;
  uint64_t domain_id;
  record_t *rec;
} link_t;

/* Process-wide, cold: live domains (so that a thread's exit hook and its
 * pruning skip freed ones), id allocation, the exit hook's key. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static act_epoch_t *g_live;
static uint64_t g_next_id = 1; /* 0 means "no domain" in tls_last.id */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t links_key;

static _Thread_local link_t *tls_links ACT_TLS_INITIAL_EXEC;
/* A one-entry cache of tls_links: one struct, so that enter and exit
 * find both fields from one thread-pointer offset. */
static _Thread_local struct {
  uint64_t id;
  record_t *rec;
} tls_last ACT_TLS_INITIAL_EXEC;

static bool domain_live(uint64_t id) { /* under g_lock */
  for (act_epoch_t *d = g_live; d != NULL; d = d->next_live)
    if (d->id == id) return true;
  return false;
}

/* Thread exit: give the records back for reuse. Under g_lock, so that a
 * domain cannot be freed while we touch its record; freed domains are
 * skipped (their records are gone). */
static void links_destructor(void *arg) {
  pthread_mutex_lock(&g_lock);
  for (link_t *l = arg, *next; l != NULL; l = next) {
    next = l->next;
    if (domain_live(l->domain_id)) {
      if (l->rec->depth != 0) ACT_FATAL("a thread exited inside an epoch read section");
      /* release: the next owner (acquiring CAS in claim) sees depth == 0
       * and the inactive state we stored at our last exit. */
      atomic_store_explicit(&l->rec->in_use, false, memory_order_release);
    }
    free(l);
  }
  pthread_mutex_unlock(&g_lock);
  tls_links = NULL;
  tls_last.id = 0;
  tls_last.rec = NULL;
}

static void make_key(void) {
  if (pthread_key_create(&links_key, links_destructor) != 0)
    ACT_FATAL("pthread_key_create failed for epoch records");
}

/* A record released by an exited thread, or a new one pushed. Lock-free. */
static record_t *record_claim(act_epoch_t *d) {
  /* acquire: the records' fields and next links, published by the push. */
  for (record_t *r = atomic_load_explicit(&d->records, memory_order_acquire); r != NULL;
       r = r->next) {
    bool expected = false;
    /* relaxed pre-check: only avoids a CAS on lines in use. acquire CAS:
     * pairs with the release in links_destructor (depth, state). */
    if (!atomic_load_explicit(&r->in_use, memory_order_relaxed) &&
        atomic_compare_exchange_strong_explicit(
            &r->in_use, &expected, true, memory_order_acquire, memory_order_relaxed))
      return r;
  }
  record_t *r = aligned_alloc(ACT_CACHE_LINE, sizeof *r);
  if (r == NULL) ACT_FATAL("out of memory for an epoch record");
  atomic_init(&r->state, 0);
  r->depth = 0;
  atomic_init(&r->in_use, true);
  r->next = atomic_load_explicit(&d->records, memory_order_relaxed);
  /* seq_cst: a writer whose scan (a seq_cst load of `records`) misses this
   * push is ordered before it in S, so before our announcement and our
   * reader's seq_cst load of the shared pointer; that load then sees the
   * writer's unlink. Failure relaxed: we retry with the fresh head. */
  while (!atomic_compare_exchange_weak_explicit(
      &d->records, &r->next, r, memory_order_seq_cst, memory_order_relaxed)) {
  }
  return r;
}

/* The thread's first call on d: a record, a link, the exit hook. */
static record_t *thread_register(act_epoch_t *d) {
  record_t *r = record_claim(d);
  link_t *l = malloc(sizeof *l);
  if (l == NULL) ACT_FATAL("out of memory for an epoch link");
  l->domain_id = d->id;
  l->rec = r;
  pthread_once(&key_once, make_key);
  /* Drop links to freed domains, so a long-lived thread that sees many
   * domains come and go keeps a short list. */
  pthread_mutex_lock(&g_lock);
  link_t **pp = &tls_links;
  while (*pp != NULL) {
    link_t *old = *pp;
    if (domain_live(old->domain_id)) {
      pp = &old->next;
    } else {
      *pp = old->next;
      free(old);
    }
  }
  pthread_mutex_unlock(&g_lock);
  l->next = tls_links;
  tls_links = l;
  if (pthread_setspecific(links_key, tls_links) != 0)
    ACT_FATAL("pthread_setspecific failed for epoch records");
  return r;
}

/* The thread's record for d, or NULL when it has none. Wait-free: the
 * cache, else the thread's own list (one link per live domain it used). */
static record_t *record_find(const act_epoch_t *d) {
  if (ACT_LIKELY(tls_last.id == d->id)) return tls_last.rec;
  for (link_t *l = tls_links; l != NULL; l = l->next) {
    if (l->domain_id == d->id) {
      tls_last.id = d->id;
      tls_last.rec = l->rec;
      return l->rec;
    }
  }
  return NULL;
}

/* The record on a cache miss: the list, else a registration. */
static record_t *record_get_slow(act_epoch_t *d) {
  record_t *r = record_find(d);
  if (r == NULL) {
    r = thread_register(d);
    tls_last.id = d->id;
    tls_last.rec = r;
  }
  return r;
}

act_epoch_t *act_epoch_new(void) {
  act_epoch_t *d = aligned_alloc(ACT_CACHE_LINE, sizeof *d);
  if (d == NULL) ACT_FATAL("out of memory for an epoch domain");
  atomic_init(&d->epoch, 0);
  atomic_init(&d->records, NULL);
  if (pthread_mutex_init(&d->mu, NULL) != 0) ACT_FATAL("pthread_mutex_init failed");
  d->head = NULL;
  d->tail = NULL;
  atomic_init(&d->pending, 0);
  pthread_mutex_lock(&g_lock);
  d->id = g_next_id++;
  d->next_live = g_live;
  g_live = d;
  pthread_mutex_unlock(&g_lock);
  return d;
}

static inline void enter_record(act_epoch_t *d, record_t *r) {
  if (r->depth++ != 0) return; /* nested: already announced */
  /* relaxed: safety does not depend on how fresh this is (README); a stale
   * epoch only delays the writer's next advance until we exit. */
  uint64_t e = atomic_load_explicit(&d->epoch, memory_order_relaxed);
  /* seq_cst RMW: the announcement. It precedes our seq_cst load of the
   * shared pointer in S, so a writer's scan either sees us active or comes
   * before us in S, and then we load the pointer after its unlink. The
   * RMW (not a store + fence) is what TSan can model. Its release half
   * also extends the release sequence of our last exit. */
  atomic_exchange_explicit(&r->state, (e << 1) | ACTIVE, memory_order_seq_cst);
}

/* Cold and out of line: printing the message inline made exit save registers. */
__attribute__((noinline, cold, noreturn)) static void exit_unpaired(void) {
  ACT_FATAL("act_epoch_exit without act_epoch_enter");
}

static inline void exit_record(record_t *r) {
  if (ACT_UNLIKELY(r->depth == 0)) exit_unpaired();
  if (--r->depth != 0) return;
  /* release: every read of this section happens-before the writer's
   * seq_cst scan that sees us inactive (or sees a later announcement, by
   * the release sequence), and so before the callback that frees. */
  atomic_store_explicit(&r->state, 0, memory_order_release);
}

/* The cache misses (a thread's first section on d, or a switch between
 * domains) go out of line whole, so that the hit path of enter and exit
 * calls nothing and saves no register. */
__attribute__((noinline)) static void enter_slow(act_epoch_t *d) {
  enter_record(d, record_get_slow(d));
}

__attribute__((noinline)) static void exit_slow(act_epoch_t *d) {
  exit_record(record_get_slow(d));
}

void act_epoch_enter(act_epoch_t *d) {
  if (ACT_UNLIKELY(tls_last.id != d->id)) {
    enter_slow(d);
    return;
  }
  enter_record(d, tls_last.rec);
}

void act_epoch_exit(act_epoch_t *d) {
  if (ACT_UNLIKELY(tls_last.id != d->id)) {
    exit_slow(d);
    return;
  }
  exit_record(tls_last.rec);
}

void act_epoch_retire(act_epoch_t *d, act_epoch_entry_t *entry,
                      void (*fn)(act_epoch_entry_t *)) {
  entry->fn = fn;
  entry->next = NULL;
  pthread_mutex_lock(&d->mu);
  /* relaxed: only advances write epoch, all under mu, which we hold. */
  entry->epoch = atomic_load_explicit(&d->epoch, memory_order_relaxed);
  if (d->tail != NULL) {
    d->tail->next = entry;
  } else {
    d->head = entry;
  }
  d->tail = entry;
  /* relaxed: a count; the entry itself travels under mu. */
  atomic_fetch_add_explicit(&d->pending, 1, memory_order_relaxed);
  pthread_mutex_unlock(&d->mu);
}

/* Under mu. Moves the global epoch from g to g + 1 when every active
 * record has announced g. */
static bool try_advance(act_epoch_t *d, uint64_t g) {
  /* seq_cst loads of the list head and of every state: in S after our
   * caller's seq_cst unlink, so each reader is either seen active or loads
   * the shared pointer after the unlink (README "Why it is safe"). The
   * state loads also acquire readers' exits. */
  for (record_t *r = atomic_load_explicit(&d->records, memory_order_seq_cst); r != NULL;
       r = r->next) {
    uint64_t s = atomic_load_explicit(&r->state, memory_order_seq_cst);
    if ((s & ACTIVE) != 0 && (s >> 1) != g) return false;
  }
  /* relaxed: readers need no ordering from this value; the records carry
   * every happens-before edge (README). */
  atomic_store_explicit(&d->epoch, g + 1, memory_order_relaxed);
  return true;
}

/* Calls each callback of a detached chain; returns how many. */
static size_t run_callbacks(act_epoch_entry_t *e) {
  size_t n = 0;
  while (e != NULL) {
    act_epoch_entry_t *next = e->next; /* fn may free e */
    e->fn(e);
    e = next;
    n++;
  }
  return n;
}

bool act_epoch_poll(act_epoch_t *d) {
  pthread_mutex_lock(&d->mu);
  /* relaxed: written only under mu, which we hold. */
  uint64_t g = atomic_load_explicit(&d->epoch, memory_order_relaxed);
  /* Pending entries were retired at g or g - 1: two advances at most make
   * all of them (up to the newest, the tail) reclaimable. No advance when
   * nothing waits. */
  while (d->tail != NULL && d->tail->epoch + 2 > g && try_advance(d, g)) g++;
  act_epoch_entry_t *done = d->head, *last = NULL;
  for (act_epoch_entry_t *e = d->head; e != NULL && e->epoch + 2 <= g; e = e->next)
    last = e;
  if (last != NULL) {
    d->head = last->next;
    if (d->head == NULL) d->tail = NULL;
    last->next = NULL;
  } else {
    done = NULL;
  }
  pthread_mutex_unlock(&d->mu);
  size_t n = run_callbacks(done);
  if (n == 0) return act_epoch_pending(d) == 0;
  /* acq_rel: release publishes our callbacks' effects to whoever reads the
   * count (pending, synchronize); acquire gives us other pollers'. */
  return atomic_fetch_sub_explicit(&d->pending, n, memory_order_acq_rel) == n;
}

size_t act_epoch_pending(const act_epoch_t *d) {
  /* acquire: a caller that reads 0 sees every callback's effects. */
  return atomic_load_explicit(&d->pending, memory_order_acquire);
}

void act_epoch_synchronize(act_epoch_t *d) {
  record_t *r = record_find(d);
  if (r != NULL && r->depth != 0)
    ACT_FATAL("act_epoch_synchronize inside a read section would wait for itself");
  for (unsigned i = 0; !act_epoch_poll(d); i++) {
    if (i < 64) {
      sched_yield();
    } else { /* a reader stays long: stop burning a core */
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
}

size_t act_epoch_records(const act_epoch_t *d) {
  size_t n = 0;
  /* acquire: the next links, published by the pushes. */
  for (record_t *r = atomic_load_explicit(&d->records, memory_order_acquire); r != NULL;
       r = r->next)
    n++;
  return n;
}

void act_epoch_free(act_epoch_t *d) {
  /* acquire: a contract check; a reader still inside is a caller's bug. */
  for (record_t *r = atomic_load_explicit(&d->records, memory_order_acquire); r != NULL;
       r = r->next)
    if ((atomic_load_explicit(&r->state, memory_order_acquire) & ACTIVE) != 0)
      ACT_FATAL("act_epoch_free with a reader inside a read section");
  /* No reader: everything is reclaimable. Callbacks may retire more. */
  for (;;) {
    pthread_mutex_lock(&d->mu);
    act_epoch_entry_t *all = d->head;
    d->head = d->tail = NULL;
    pthread_mutex_unlock(&d->mu);
    if (all == NULL) break;
    /* relaxed: no other call on d may run now. */
    atomic_fetch_sub_explicit(&d->pending, run_callbacks(all), memory_order_relaxed);
  }
  /* Unlinked first: from then on exiting threads skip d's records. */
  pthread_mutex_lock(&g_lock);
  act_epoch_t **pp = &g_live;
  while (*pp != d) pp = &(*pp)->next_live;
  *pp = d->next_live;
  pthread_mutex_unlock(&g_lock);
  record_t *r = atomic_load_explicit(&d->records, memory_order_relaxed); /* ours alone */
  while (r != NULL) {
    record_t *next = r->next;
    free(r);
    r = next;
  }
  pthread_mutex_destroy(&d->mu);
  free(d);
}
