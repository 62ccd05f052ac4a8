/* Statistics of one model version, Triton's statistics extension: counters
 * updated without locks (relaxed atomic adds) by instance threads and call
 * actors, read by ModelStatistics. Relaxed is enough: each counter is
 * independent and readers want a recent value, not a consistent snapshot. */
#ifndef NEREID_SERVER_STATS_STATS_H
#define NEREID_SERVER_STATS_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/stats/latency_hist.h"

typedef struct {
  _Atomic uint64_t count;
  _Atomic uint64_t ns;
} srv_duration_t;

typedef struct {
  srv_duration_t compute_input, compute_infer, compute_output;
} srv_batch_stats_t;

/* The sequence batcher's counters (sched/sequence.c writes, on the model
 * actor; gauges are stored, not added). */
typedef struct {
  _Atomic uint64_t active, backlog; /* now */
  _Atomic uint64_t started, ended, idle_ended, cancel_ended, stream_ended;
} srv_sequence_stats_t;

/* One step of an ensemble: its composing model (names the model's own,
 * held by the ensemble) and the time from sending each step request to
 * its last answer (sched/ensemble.c writes, on the ensemble's actor). */
typedef struct {
  const char *model_name, *model_version;
  srv_duration_t time;
} srv_step_stats_t;

/* Why a request failed, Triton's `reason` label of
 * nv_inference_request_failure. OTHER is not counted on its own: it is
 * what `fail` holds beyond the three others. */
typedef enum {
  SRV_FAIL_REJECTED = 0,             /* the scheduler refused it (queue full, timeout) */
  SRV_FAIL_CANCELED,                 /* cancelled by its client or the server */
  SRV_FAIL_BACKEND,                  /* the backend reported it failed */
  SRV_FAIL_OTHER,                    /* anything else (refused inputs, a failed step) */
  SRV_FAIL_COUNTED = SRV_FAIL_OTHER, /* the reasons with a counter of their own */
} srv_fail_reason_t;

typedef struct {
  srv_duration_t success, fail, queue;
  srv_duration_t compute_input, compute_infer, compute_output;
  srv_duration_t cache_hit, cache_miss; /* the response cache (../cache/cache_hook.c) */
  _Atomic uint64_t inference_count;     /* batch elements of successful requests */
  _Atomic uint64_t execution_count;     /* backend executions */
  _Atomic uint64_t last_inference_ms;   /* wall-clock ms of the last one */
  uint32_t batch_limit;                 /* batch sizes 0..batch_limit */
  struct srv_batch_table *batches;      /* per batch size (batch_stats.h) */
  struct srv_response_stats *responses; /* per response index (response_stats.h) */
  struct srv_memory_usage *memory;      /* reported by the backend (memory_usage.h) */
  srv_sequence_stats_t *sequences;      /* sequence models only; else NULL */
  srv_step_stats_t *steps;              /* ensembles only, one per step; else NULL */
  uint32_t step_count;
  bool cache_enabled; /* the model uses the response cache: set at load */
  /* For the metrics endpoint (server/metrics/metrics.md). */
  _Atomic uint64_t fail_reason[SRV_FAIL_COUNTED]; /* part of fail.count */
  /* Requests enqueued and neither executing nor released yet: +1 in
   * srv_model_enqueue, -1 when an instance starts executing the request or
   * when it is released unexecuted (TRITONBACKEND_Request.pending). */
  _Atomic int64_t pending;
  /* The model actor's queue depth per priority level (level i is
   * priority i + 1), stored by sched/queue.c; the queue owns the array.
   * NULL for ensembles. */
  const _Atomic uint64_t *queue_depth;
  uint32_t queue_levels;
  void *_Atomic latency; /* srv_latency_hists_t, made on first record */
} srv_stats_t;

/** Sets up statistics for batch sizes 1..max_batch (at least 1); per-size
 *  memory is taken only for sizes that are reported. */
void srv_stats_init(srv_stats_t *s, uint32_t max_batch);
void srv_stats_free(srv_stats_t *s);

/** The zeroed block of `bytes` in *slot, made and installed with a CAS
 *  when the slot is empty (the loser of a race frees its own). For tables
 *  that grow on first use. Any thread, lock-free. */
void *srv_stats_block(void *_Atomic *slot, size_t bytes);

static inline void srv_duration_add(srv_duration_t *d, uint64_t ns) {
  atomic_fetch_add_explicit(&d->count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&d->ns, ns, memory_order_relaxed);
}

static inline uint64_t srv_stat_load(_Atomic uint64_t *v) {
  return atomic_load_explicit(v, memory_order_relaxed);
}

/** Counts a failure with its reason (success and fail stay Triton's
 *  statistics; the reason only splits nv_inference_request_failure). */
static inline void srv_stats_fail(srv_stats_t *s, srv_fail_reason_t why, uint64_t ns) {
  srv_duration_add(&s->fail, ns);
  if (why < SRV_FAIL_COUNTED)
    atomic_fetch_add_explicit(&s->fail_reason[why], 1, memory_order_relaxed);
}

/** The latency histograms, made on first use. Any thread, lock-free. */
static inline srv_latency_hists_t *srv_stats_latency(srv_stats_t *s) {
  return (srv_latency_hists_t *)srv_stats_block(&s->latency, sizeof(srv_latency_hists_t));
}

/** Records a latency of `ns` (relaxed adds, no lock). Any thread. */
static inline void srv_stats_latency_add(srv_stats_t *s, srv_latency_kind_t k,
                                         uint64_t ns) {
  srv_hist_record(&srv_stats_latency(s)->kind[k], ns);
}

/** The latency histograms if any was recorded, else NULL. Any thread. */
static inline const srv_latency_hists_t *srv_stats_latency_peek(srv_stats_t *s) {
  /* Acquire: pairs with the installing CAS (srv_stats_block). */
  return (const srv_latency_hists_t *)atomic_load_explicit(&s->latency,
                                                           memory_order_acquire);
}

/** Wall-clock milliseconds since the epoch (last_inference). */
uint64_t srv_stats_wall_ms(void);

#endif
