/* Statistics storage (see stats.h). */
#include "server/stats/stats.h"

#include "server/stats/batch_stats.h"
#include "server/stats/memory_usage.h"
#include "server/stats/response_stats.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/common/log.h"

void srv_stats_init(srv_stats_t *s, uint32_t max_batch) {
  memset(s, 0, sizeof *s);
  /* Aligned to the line, so that each slot has its lines to itself. */
  s->slots = aligned_alloc(SRV_STATS_LINE, SRV_STATS_SLOTS * sizeof *s->slots);
  if (s->slots == NULL) SRV_FATAL("out of memory");
  memset(s->slots, 0, SRV_STATS_SLOTS * sizeof *s->slots);
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
  for (uint32_t i = 0; s->slots != NULL && i < SRV_STATS_SLOTS; i++)
    free(atomic_load_explicit(&s->slots[i].latency, memory_order_relaxed)); /* no reader */
  free(s->slots);
  s->slots = NULL;
}

static void duration_sum(srv_duration_total_t *to, const srv_duration_t *d) {
  to->count += atomic_load_explicit(&d->count, memory_order_relaxed);
  to->ns += atomic_load_explicit(&d->ns, memory_order_relaxed);
}

static uint64_t load(const _Atomic uint64_t *v) {
  return atomic_load_explicit(v, memory_order_relaxed);
}

void srv_stats_totals(const srv_stats_t *s, srv_stats_totals_t *out) {
  *out = (srv_stats_totals_t){0};
  int64_t pending = 0;
  /* Relaxed loads, one slot after another: each counter only grows, so a
   * sum is never below an earlier sum read by the same thread. */
  for (uint32_t i = 0; i < SRV_STATS_SLOTS; i++) {
    const srv_stats_slot_t *x = &s->slots[i];
    duration_sum(&out->success, &x->success);
    duration_sum(&out->fail, &x->fail);
    duration_sum(&out->queue, &x->queue);
    duration_sum(&out->compute_input, &x->compute_input);
    duration_sum(&out->compute_infer, &x->compute_infer);
    duration_sum(&out->compute_output, &x->compute_output);
    duration_sum(&out->cache_hit, &x->cache_hit);
    duration_sum(&out->cache_miss, &x->cache_miss);
    out->inference_count += load(&x->inference_count);
    out->execution_count += load(&x->execution_count);
    uint64_t last = load(&x->last_inference_ms);
    if (last > out->last_inference_ms) out->last_inference_ms = last;
    for (int r = 0; r < SRV_FAIL_COUNTED; r++) out->fail_reason[r] += load(&x->fail_reason[r]);
    pending += atomic_load_explicit(&x->pending, memory_order_relaxed);
  }
  /* A -1 read in one slot before its +1 in another: a moment below the
   * truth, never below 0. */
  out->pending = pending > 0 ? (uint64_t)pending : 0;
}

uint64_t srv_stats_latency_snapshot(const srv_stats_t *s, srv_latency_kind_t k,
                                    uint64_t out[SRV_HIST_BUCKETS]) {
  memset(out, 0, SRV_HIST_BUCKETS * sizeof *out);
  uint64_t total = 0;
  for (uint32_t i = 0; i < SRV_STATS_SLOTS; i++) {
    /* Acquire: pairs with the installing CAS (srv_stats_block): the block
     * is seen zeroed, not as it was before calloc. */
    const srv_latency_hists_t *h =
        atomic_load_explicit(&s->slots[i].latency, memory_order_acquire);
    if (h == NULL) continue;
    for (uint32_t b = 0; b < SRV_HIST_BUCKETS; b++) {
      uint64_t n = atomic_load_explicit(&h->kind[k].counts[b], memory_order_relaxed);
      out[b] += n;
      total += n;
    }
  }
  return total;
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
