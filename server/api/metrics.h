/* The registry behind the custom-metrics API (TRITONSERVER_MetricFamily,
 * TRITONSERVER_Metric, TRITONSERVER_MetricArgs): families by name, each with
 * its labelled series. The structs are here for metrics_render.c; the rest
 * of the server makes and updates metrics through the TRITONSERVER_* calls.
 *
 * Threads: any thread may create and delete its own families and metrics.
 * One process-wide mutex guards the registry's shape (lists, reference
 * counts); it is never taken on the update path. Increment, Set, Observe and
 * Value touch only a series' atomics, so updates from any number of threads
 * are lock-free. Rendering takes the mutex and reads the atomics. */
#ifndef NEREID_SERVER_API_METRICS_H
#define NEREID_SERVER_API_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

typedef struct {
  const char *name;
  const char *value;
} api_metric_label_t;

/* One labelled time series. Metrics made with equal label sets in the same
 * family share one series (and so one value), as in Triton, where the
 * Prometheus family hands back the existing child. */
typedef struct api_metric_series {
  /* Written by update threads, read by renderers: its own cache line. The
   * doubles are stored as their bit patterns so they can be atomics. */
  _Alignas(64) _Atomic uint64_t value_bits; /* counter, gauge */
  _Atomic uint64_t sum_bits;                /* histogram */
  _Atomic uint64_t *bucket_counts;          /* histogram: bound_count + 1, the
                                               last for +Inf; not cumulative */
  /* Immutable after creation. 'labels' starts the one block that also holds
   * the bounds, the bucket counters and the label strings. */
  _Alignas(64) const api_metric_label_t *labels; /* sorted by name */
  size_t label_count;
  const double *bounds; /* histogram upper bounds, ascending, without +Inf */
  size_t bound_count;
  /* Under the registry mutex. */
  struct api_metric_series *next;
  size_t refs; /* TRITONSERVER_Metric handles using this series */
} api_metric_series_t;

/* One family per name. TRITONSERVER_MetricFamilyNew with a name already in
 * use and the same kind returns another handle on the same family (the first
 * description stays), as Triton's Prometheus registry does. */
typedef struct api_metric_family {
  /* Immutable after creation. */
  TRITONSERVER_MetricKind kind;
  const char *name;
  const char *help;
  /* Under the registry mutex. */
  struct api_metric_family *next;
  api_metric_series_t *series; /* creation order */
  api_metric_series_t **series_tail;
  size_t handles; /* TRITONSERVER_MetricFamily handles on this family */
} api_metric_family_t;

/** Takes / releases the registry mutex. Blocking; never hold it across a
 *  call out of this module. */
void api_metrics_lock(void);
void api_metrics_unlock(void);

/** The first family in creation order (follow ->next); under the mutex. */
api_metric_family_t *api_metrics_first_family(void);

/** Current value of a counter or gauge series (relaxed read). */
double api_metric_series_value(const api_metric_series_t *series);

/** Current sum of a histogram series (relaxed read). */
double api_metric_series_sum(const api_metric_series_t *series);

#endif
