/* A model's references while the registry publishes it and after
 * (model.c, "References"): threads look the model up and drop it, some
 * holding references across its unpublication, while the test thread
 * publishes it, unpublishes it and reclaims the old view. The drained
 * callback must come exactly once, and only when no thread holds a
 * reference any more. A model that is never published counts in one
 * atomic, as before. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "server/model/model.h"
#include "server/repository/registry.h"
#include "test/unit/unit.h"

enum { THREADS = SRV_THREAD_SLOTS + 2, HELD = 4 };

static _Atomic int held;        /* references the threads hold now */
static _Atomic int drains;      /* drained calls */
static _Atomic int held_at_drain = -1;
static _Atomic bool unpublished;
static _Atomic uint64_t lookups_all; /* progress, for the test thread */

static void drained(srv_model_t *m) {
  (void)m;
  atomic_store(&held_at_drain, atomic_load(&held));
  atomic_fetch_add(&drains, 1);
}

typedef struct {
  srv_registry_t *r;
  uint64_t lookups;
} worker_t;

/* Looks "m" up and drops it, as requests do, and keeps HELD references
 * across the unpublication, dropped after it (in the atomic count). */
static void *worker(void *arg) {
  worker_t *w = arg;
  srv_model_t *kept[HELD];
  int n = 0;
  for (;;) {
    srv_model_t *m = NULL;
    srv_status_t *st = srv_registry_acquire(w->r, "m", 1, -1, &m);
    if (st != NULL) { /* unpublished: no new reference */
      srv_status_free(st);
      break;
    }
    atomic_fetch_add(&held, 1);
    w->lookups++;
    atomic_fetch_add_explicit(&lookups_all, 1, memory_order_relaxed);
    if (n < HELD && w->lookups % 64 == 0) {
      kept[n++] = m;
      continue;
    }
    /* Sometimes a second reference from the first, as a response factory
     * takes one from its request. */
    if (w->lookups % 3 == 0) {
      srv_model_ref(m);
      srv_model_unref(m);
    }
    atomic_fetch_sub(&held, 1);
    srv_model_unref(m);
  }
  while (!atomic_load(&unpublished)) sched_yield();
  for (int i = 0; i < n; i++) {
    atomic_fetch_sub(&held, 1);
    srv_model_unref(kept[i]);
  }
  return NULL;
}

static void publish(srv_registry_t *r, srv_model_t *m) {
  srv_model_t *versions[1] = {m};
  srv_registry_entry_t e = {.name = "m",
                            .state = m != NULL ? SRV_MODEL_STATE_READY
                                               : SRV_MODEL_STATE_UNAVAILABLE,
                            .versions = m != NULL ? versions : NULL,
                            .version_count = m != NULL ? 1 : 0};
  srv_registry_publish(r, &e, 1);
}

static void one_round(void) {
  atomic_store(&held, 0);
  atomic_store(&drains, 0);
  atomic_store(&held_at_drain, -1);
  atomic_store(&unpublished, false);
  atomic_store(&lookups_all, 0);
  srv_model_t *m = aligned_alloc(_Alignof(srv_model_t), sizeof *m);
  REQUIRE(m != NULL);
  memset(m, 0, sizeof *m);
  m->name = "m";
  m->version = 1;
  m->drained = drained;
  atomic_init(&m->refs, 1); /* the loader's, as srv_model_load leaves it */
  srv_registry_t *r = srv_registry_new();
  publish(r, m);
  srv_model_unref(m); /* the loader's: only the registry's is left */
  CHECK(atomic_load(&m->sliced));
  worker_t w[THREADS];
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker_t){.r = r};
    REQUIRE(pthread_create(&th[i], NULL, worker, &w[i]) == 0);
  }
  /* Let them run, then unpublish while they look up and drop. */
  while (atomic_load_explicit(&lookups_all, memory_order_relaxed) < 20000) sched_yield();
  publish(r, NULL);
  CHECK(!atomic_load(&m->sliced));
  /* Reclaim while they may still be in sections: the fold waits. */
  while (!srv_registry_reclaim(r)) sched_yield();
  CHECK_EQ_U64(atomic_load(&drains), 0); /* the kept ones are still held */
  atomic_store(&unpublished, true);
  uint64_t lookups = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    lookups += w[i].lookups;
  }
  CHECK(lookups > 0);
  CHECK_EQ_U64(atomic_load(&drains), 1);
  CHECK_EQ_U64(atomic_load(&held_at_drain), 0);
  CHECK_EQ_U64(atomic_load(&m->refs), 0);
  srv_registry_free(r);
  free(m);
}

static void test_refs_across_unpublication(void) {
  /* Fewer rounds under a sanitizer (NEREID_TEST_SLOWDOWN, .bazelrc). */
  int rounds = 20 / unit_slowdown();
  for (int i = 0; i < rounds; i++) one_round();
}

/* Never published: references in the one atomic, the last drains. */
static void test_unpublished_model_counts_atomically(void) {
  srv_model_t *m = aligned_alloc(_Alignof(srv_model_t), sizeof *m);
  REQUIRE(m != NULL);
  memset(m, 0, sizeof *m);
  m->name = "plain";
  atomic_store(&drains, 0);
  m->drained = drained;
  atomic_init(&m->refs, 1);
  srv_model_ref(m);
  CHECK_EQ_U64(atomic_load(&m->refs), 2);
  srv_model_unref(m);
  srv_model_unref(m);
  CHECK_EQ_U64(atomic_load(&drains), 1);
  srv_model_ref_fold(m); /* never sliced: nothing to fold */
  CHECK_EQ_U64(atomic_load(&m->refs), 0);
  free(m);
}

UNIT_MAIN("model_ref", UNIT_CASE(test_refs_across_unpublication),
          UNIT_CASE(test_unpublished_model_counts_atomically))
