/* Statistics storage (see stats.h). */
#include "server/stats/stats.h"

#include "server/stats/batch_stats.h"
#include "server/stats/memory_usage.h"
#include "server/stats/response_stats.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/common/log.h"

void srv_stats_init(srv_stats_t *s, uint32_t max_batch) {
  memset(s, 0, sizeof *s);
  s->batch_limit = max_batch ? max_batch : 1;
  s->batches = srv_batch_table_new(s->batch_limit);
  s->responses = calloc(1, sizeof *s->responses);
  if (s->responses == NULL) SRV_FATAL("out of memory");
  s->memory = srv_memory_usage_new();
}

void srv_stats_free(srv_stats_t *s) {
  srv_batch_table_free(s->batches);
  s->batches = NULL;
  srv_response_stats_free(s->responses);
  s->responses = NULL;
  srv_memory_usage_free(s->memory);
  s->memory = NULL;
  free(s->steps);
  s->steps = NULL;
  s->step_count = 0;
  free(atomic_load_explicit(&s->latency, memory_order_relaxed)); /* no reader left */
  atomic_store_explicit(&s->latency, NULL, memory_order_relaxed);
}

uint64_t srv_stats_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void *srv_stats_block(void *_Atomic *slot, size_t bytes) {
  /* Acquire: pairs with the installing CAS, so the zeroed block is seen. */
  void *found = atomic_load_explicit(slot, memory_order_acquire);
  if (found != NULL) return found;
  void *fresh = calloc(1, bytes);
  if (fresh == NULL) SRV_FATAL("out of memory");
  void *expected = NULL;
  /* Release on success publishes the zeroed block; acquire on failure reads
   * the block another thread installed first (ours is dropped). */
  if (atomic_compare_exchange_strong_explicit(slot, &expected, fresh,
                                              memory_order_acq_rel, memory_order_acquire))
    return fresh;
  free(fresh);
  return expected;
}
