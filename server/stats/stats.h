/* Statistics of one model version, Triton's statistics extension: counters
 * updated without locks (relaxed atomic adds) by instance threads and call
 * actors, read by ModelStatistics. Relaxed is enough: each counter is
 * independent and readers want a recent value, not a consistent snapshot. */
#ifndef NEREID_SERVER_STATS_STATS_H
#define NEREID_SERVER_STATS_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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

typedef struct {
  srv_duration_t success, fail, queue;
  srv_duration_t compute_input, compute_infer, compute_output;
  srv_duration_t cache_hit, cache_miss; /* no cache yet: stay zero */
  _Atomic uint64_t inference_count;     /* batch elements inferred */
  _Atomic uint64_t execution_count;     /* backend executions */
  _Atomic uint64_t last_inference_ms;   /* wall-clock ms of the last one */
  uint32_t batch_limit;                 /* batch sizes 1..batch_limit */
  struct srv_batch_table *batches;      /* per batch size (batch_stats.h) */
  struct srv_response_stats *responses; /* per response index (response_stats.h) */
  srv_sequence_stats_t *sequences;      /* sequence models only; else NULL */
  srv_step_stats_t *steps;              /* ensembles only, one per step; else NULL */
  uint32_t step_count;
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

/** Wall-clock milliseconds since the epoch (last_inference). */
uint64_t srv_stats_wall_ms(void);

#endif
