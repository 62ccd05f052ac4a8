/* Statistics of one model version, Triton's statistics extension: counters
 * updated without locks by instance threads, owner actors and frontends,
 * read by ModelStatistics and the metrics page. The counters that requests
 * write are kept per writer thread (srv_stats_slot_t, see README.md,
 * "Writer slots"): a request's writes stay in its threads' own cache lines
 * and readers, which are rare, sum the slots. Relaxed everywhere: each
 * counter is independent and readers want a recent value, not a
 * consistent snapshot. */
#ifndef NEREID_SERVER_STATS_STATS_H
#define NEREID_SERVER_STATS_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/stats/latency_hist.h"
#include "server/stats/thread_slot.h"

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

/* One slot per writer slot index (thread_slot.h): up to this many writing
 * threads never share a line; more share a slot, still correctly (the
 * adds are atomic). */
#define SRV_STATS_SLOTS SRV_THREAD_SLOTS
#define SRV_STATS_LINE SRV_SLOT_LINE

/** The counters every request writes, as one writer thread's share. Its
 *  own cache lines (aligned, padded), so that two threads never write the
 *  same line; readers sum the slots (srv_stats_totals). */
typedef struct {
  _Alignas(SRV_STATS_LINE) srv_duration_t success, fail, queue;
  srv_duration_t compute_input, compute_infer, compute_output;
  srv_duration_t cache_hit, cache_miss; /* the response cache (../cache/cache_hook.c) */
  _Atomic uint64_t inference_count;     /* batch elements of successful requests */
  _Atomic uint64_t execution_count;     /* backend executions */
  _Atomic uint64_t last_inference_ms;   /* wall-clock ms of this slot's last one */
  _Atomic uint64_t fail_reason[SRV_FAIL_COUNTED]; /* part of fail.count */
  /* This slot's share of the pending gauge: +1 by the thread that enqueues
   * a request, -1 by the one that starts executing or releases it (often
   * another slot's); only the sum means anything. */
  _Atomic int64_t pending;
  void *_Atomic latency; /* srv_latency_hists_t, made on this slot's first record */
} srv_stats_slot_t;

typedef struct srv_stats {
  srv_stats_slot_t *slots;              /* SRV_STATS_SLOTS, aligned */
  uint32_t batch_limit;                 /* batch sizes 0..batch_limit */
  struct srv_batch_table *batches;      /* per batch size (batch_stats.h) */
  struct srv_response_stats *responses; /* per response index (response_stats.h) */
  struct srv_memory_usage *memory;      /* reported by the backend (memory_usage.h) */
  srv_sequence_stats_t *sequences;      /* sequence models only; else NULL */
  srv_step_stats_t *steps;              /* ensembles only, one per step; else NULL */
  uint32_t step_count;
  bool cache_enabled; /* the model uses the response cache: set at load */
  /* The model actor's queue depth per priority level (level i is
   * priority i + 1), stored by sched/queue.c; the queue owns the array.
   * NULL for ensembles. */
  const _Atomic uint64_t *queue_depth;
  uint32_t queue_levels;
} srv_stats_t;

/** The slots summed, for readers. */
typedef struct {
  uint64_t count, ns;
} srv_duration_total_t;

typedef struct {
  srv_duration_total_t success, fail, queue;
  srv_duration_total_t compute_input, compute_infer, compute_output;
  srv_duration_total_t cache_hit, cache_miss;
  uint64_t inference_count, execution_count;
  uint64_t last_inference_ms; /* the latest of the slots' */
  uint64_t fail_reason[SRV_FAIL_COUNTED];
  /* Requests enqueued and neither executing nor released yet (the slots'
   * shares summed; a decrement read before its increment is clamped, so
   * never below 0). */
  uint64_t pending;
} srv_stats_totals_t;

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

/** The calling thread's slot of s: where it writes. Any thread; wait-free
 *  (a thread-local read). */
static inline srv_stats_slot_t *srv_stats_mine(srv_stats_t *s) {
  return &s->slots[srv_thread_slot()];
}

/** Counts a failure with its reason (success and fail stay Triton's
 *  statistics; the reason only splits nv_inference_request_failure). */
static inline void srv_stats_fail(srv_stats_t *s, srv_fail_reason_t why, uint64_t ns) {
  srv_stats_slot_t *mine = srv_stats_mine(s);
  srv_duration_add(&mine->fail, ns);
  if (why < SRV_FAIL_COUNTED)
    atomic_fetch_add_explicit(&mine->fail_reason[why], 1, memory_order_relaxed);
}

/** A request enters (+1) or leaves (-1) the pending gauge, in the calling
 *  thread's slot. Any thread. */
static inline void srv_stats_pending_add(srv_stats_t *s, int64_t delta) {
  /* Relaxed: a gauge; the -1 comes after its +1 through the request's own
   * messages, and readers clamp what a sum read out of order shows. */
  atomic_fetch_add_explicit(&srv_stats_mine(s)->pending, delta, memory_order_relaxed);
}

/** A slot's latency histograms, made on first use. Any thread, lock-free. */
static inline srv_latency_hists_t *srv_stats_slot_latency(srv_stats_slot_t *slot) {
  /* Acquire: as srv_stats_block's own load; the call only for the first
   * record of the slot. */
  void *found = atomic_load_explicit(&slot->latency, memory_order_acquire);
  if (found != NULL) return found;
  return (srv_latency_hists_t *)srv_stats_block(&slot->latency,
                                                sizeof(srv_latency_hists_t));
}

/** Records a latency of `ns` in the calling thread's slot (relaxed adds, no
 *  lock). Any thread. */
static inline void srv_stats_latency_add(srv_stats_t *s, srv_latency_kind_t k,
                                         uint64_t ns) {
  srv_hist_record(&srv_stats_slot_latency(srv_stats_mine(s))->kind[k], ns);
}

/** Sums the slots into *out. Any thread; reads every slot (16 x 3 lines):
 *  for readers (ModelStatistics, metrics), not for requests. */
void srv_stats_totals(const srv_stats_t *s, srv_stats_totals_t *out);

/** The histogram of kind k summed over the slots into out (zeros when none
 *  was recorded); returns its total. Each count is read relaxed once, so
 *  the result agrees with itself. Any thread. */
uint64_t srv_stats_latency_snapshot(const srv_stats_t *s, srv_latency_kind_t k,
                                    uint64_t out[SRV_HIST_BUCKETS]);

/** Wall-clock milliseconds since the epoch (last_inference). */
uint64_t srv_stats_wall_ms(void);

#endif
