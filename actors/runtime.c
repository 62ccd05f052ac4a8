/* Runtime lifecycle (see runtime.h and README.md "Stop and shutdown"):
 * creation, the count of live actors that quiesce waits on, and teardown.
 * new/quiesce/free: an outside thread; born/died: any thread. */
#include "actors/runtime.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actors/runtime_internal.h"

enum { DEFAULT_BATCH = 64 };

static unsigned online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1u;
}

act_runtime_t *act_runtime_new(const act_config_t *cfg) {
  act_config_t c = cfg != NULL ? *cfg : (act_config_t){0, 0};
  unsigned workers = c.workers != 0 ? c.workers : online_cores();
  act_runtime_t *rt = aligned_alloc(ACT_CACHE_LINE, sizeof *rt);
  if (rt == NULL) return NULL;
  memset(rt, 0, sizeof *rt);
  rt->batch = c.batch != 0 ? c.batch : DEFAULT_BATCH;
  atomic_init(&rt->alive, 0);
  pthread_mutex_init(&rt->quiesce_mu, NULL);
  pthread_cond_init(&rt->quiesce_cv, NULL);
  act_pinset_init(&rt->pinned);
  rt->timers = act_timers_start(rt);
  if (rt->timers == NULL) goto err;
  if (act_sched_start(&rt->sched, rt, workers, rt->batch) != 0) goto err_timers;
  return rt;
err_timers:
  act_timers_stop(rt->timers);
err:
  act_pinset_free(&rt->pinned);
  pthread_cond_destroy(&rt->quiesce_cv);
  pthread_mutex_destroy(&rt->quiesce_mu);
  free(rt);
  return NULL;
}

unsigned act_runtime_workers(const act_runtime_t *rt) {
  return rt->sched.nworkers;
}

void act_runtime_actor_born(act_runtime_t *rt) {
  /* relaxed: only compared with zero; a child is born inside a live
   * parent's behaviour, so the count cannot touch zero in between
   * (coherence of this one counter orders it before the parent's death). */
  atomic_fetch_add_explicit(&rt->alive, 1, memory_order_relaxed);
}

void act_runtime_actor_died(act_runtime_t *rt) {
  /* release: the whole life of the actor happens-before quiesce's return
   * (acquire load); acquire: earlier deaths' writes too, for the last one. */
  if (atomic_fetch_sub_explicit(&rt->alive, 1, memory_order_acq_rel) != 1)
    return;
  /* Taking the mutex orders this broadcast after quiesce's check-then-wait,
   * so the last death cannot slip between them (no lost wake-up). */
  pthread_mutex_lock(&rt->quiesce_mu);
  pthread_cond_broadcast(&rt->quiesce_cv);
  pthread_mutex_unlock(&rt->quiesce_mu);
}

void act_runtime_quiesce(act_runtime_t *rt) {
  pthread_mutex_lock(&rt->quiesce_mu);
  /* acquire: pairs with the release of the last act_runtime_actor_died. */
  while (atomic_load_explicit(&rt->alive, memory_order_acquire) != 0)
    pthread_cond_wait(&rt->quiesce_cv, &rt->quiesce_mu);
  pthread_mutex_unlock(&rt->quiesce_mu);
}

void act_runtime_reap(act_runtime_t *rt) { act_pinset_reap(&rt->pinned); }

void act_runtime_free(act_runtime_t *rt) {
  assert(atomic_load_explicit(&rt->alive, memory_order_acquire) == 0 &&
         "act_runtime_free before quiesce");
  /* The timer thread first (it drops what is armed): a delivery it made
   * just before quiesce returned may still be inside act_send, waking a
   * worker, so the workers must outlive it. Then the workers (nothing runs
   * any more), then pinned threads, all of which have left their
   * behaviours. */
  act_timers_stop(rt->timers);
  act_sched_stop(&rt->sched);
  act_pinset_free(&rt->pinned);
  pthread_cond_destroy(&rt->quiesce_cv);
  pthread_mutex_destroy(&rt->quiesce_mu);
  free(rt);
  /* Joined threads gave their caches to the pool on exit; give ours too,
   * then the pool itself back to the allocator. */
  act_msg_cache_flush();
  act_msg_pool_trim();
}
