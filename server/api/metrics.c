/* Custom metrics: TRITONSERVER_MetricFamily, TRITONSERVER_Metric and
 * TRITONSERVER_MetricArgs over the registry described in metrics.h. Any
 * thread: lifecycle calls take the registry mutex; updates are lock-free. */
#include "server/api/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/log.h"
#include "server/api/parameter.h"

/* A handle on a family. Deleting it fails while metrics made through it
 * live, as in Triton; other handles on the same family are independent. */
struct TRITONSERVER_MetricFamily {
  api_metric_family_t *family;
  size_t live_metrics; /* under registry_mu */
};

struct TRITONSERVER_Metric {
  TRITONSERVER_MetricFamily *handle;
  api_metric_series_t *series;
  TRITONSERVER_MetricKind kind; /* copied: the update path reads no family */
};

struct TRITONSERVER_MetricArgs {
  bool is_histogram;
  size_t bucket_count;
  double *buckets;
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static api_metric_family_t *families; /* under registry_mu, creation order */
static api_metric_family_t **families_tail = &families;

void api_metrics_lock(void) { pthread_mutex_lock(&registry_mu); }
void api_metrics_unlock(void) { pthread_mutex_unlock(&registry_mu); }
api_metric_family_t *api_metrics_first_family(void) { return families; }

/* ---- Doubles in atomics ----------------------------------------------------
 * All relaxed: a series value publishes no other memory, and readers (Value,
 * the renderer) want a recent value, not an ordering. */

static double bits_to_double(uint64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static uint64_t double_to_bits(double d) {
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}

/* Lock-free (not wait-free): retries only when another thread changed the
 * value between our load and our CAS, so some thread always progresses. */
static void atomic_add_double(_Atomic uint64_t *target, double delta) {
  uint64_t seen = atomic_load_explicit(target, memory_order_relaxed);
  for (;;) {
    uint64_t next = double_to_bits(bits_to_double(seen) + delta);
    if (atomic_compare_exchange_weak_explicit(target, &seen, next, memory_order_relaxed,
                                              memory_order_relaxed)) {
      return;
    }
  }
}

double api_metric_series_value(const api_metric_series_t *series) {
  return bits_to_double(atomic_load_explicit((_Atomic uint64_t *)&series->value_bits,
                                             memory_order_relaxed));
}

double api_metric_series_sum(const api_metric_series_t *series) {
  return bits_to_double(
      atomic_load_explicit((_Atomic uint64_t *)&series->sum_bits, memory_order_relaxed));
}

/* ---- Validation -------------------------------------------------------------
 * Prometheus names: metrics [a-zA-Z_:][a-zA-Z0-9_:]*, labels the same without
 * ':'; a leading "__" is reserved for Prometheus itself. Triton's Prometheus
 * library rejects the rest, which reaches the caller as INVALID_ARG. */

static bool valid_name(const char *s, bool colon_ok) {
  if (s[0] == '\0' || (s[0] == '_' && s[1] == '_')) return false;
  for (size_t i = 0; s[i] != '\0'; i++) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (colon_ok && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

static const char *kind_name(TRITONSERVER_MetricKind kind) {
  switch (kind) {
    case TRITONSERVER_METRIC_KIND_COUNTER:
      return "counter";
    case TRITONSERVER_METRIC_KIND_GAUGE:
      return "gauge";
    case TRITONSERVER_METRIC_KIND_HISTOGRAM:
      return "histogram";
  }
  return NULL;
}

/* Checks 'args' against the family's kind; for a histogram, sets the bounds
 * to use (a trailing +Inf is dropped: that bucket is always there). */
static TRITONSERVER_Error *check_args(TRITONSERVER_MetricKind kind,
                                      const TRITONSERVER_MetricArgs *args,
                                      const double **bounds, size_t *bound_count) {
  *bounds = NULL;
  *bound_count = 0;
  if (kind != TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    if (args == NULL) return NULL;
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "Unexpected args found in %s Metric constructor.",
                         kind_name(kind));
  }
  if (args == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "Bucket boundaries not found in Metric args.");
  }
  if (!args->is_histogram) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "Metric args not set to histogram kind.");
  }
  size_t n = args->bucket_count;
  if (n > 0 && isinf(args->buckets[n - 1]) && args->buckets[n - 1] > 0) n--;
  for (size_t i = 0; i < n; i++) {
    if (isnan(args->buckets[i]) ||
        (i > 0 && !(args->buckets[i - 1] < args->buckets[i]))) {
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                           "Histogram bucket boundaries must be strictly increasing "
                           "numbers (bucket %zu)",
                           i);
    }
  }
  *bounds = args->buckets;
  *bound_count = n;
  return NULL;
}

/* Fills 'out' (room for 'count') with the labels sorted by name; a repeated
 * name keeps its last value, as Triton's label map does. The strings still
 * belong to the parameters. */
static TRITONSERVER_Error *collect_labels(const TRITONSERVER_Parameter **labels,
                                          uint64_t count, TRITONSERVER_MetricKind kind,
                                          api_metric_label_t *out, size_t *out_count) {
  size_t n = 0;
  for (uint64_t i = 0; i < count; i++) {
    const TRITONSERVER_Parameter *p = labels[i];
    if (p == NULL) {
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "label %llu is NULL",
                           (unsigned long long)i);
    }
    const char *name = api_parameter_name(p);
    if (api_parameter_type(p) != TRITONSERVER_PARAMETER_STRING) {
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                           "Parameter [%s] must have a type of "
                           "TRITONSERVER_PARAMETER_STRING to be added as a label.",
                           name);
    }
    /* "le" names a histogram's bucket bound in the output. */
    if (!valid_name(name, false) ||
        (kind == TRITONSERVER_METRIC_KIND_HISTOGRAM && strcmp(name, "le") == 0)) {
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "Invalid label name '%s'",
                           name);
    }
    size_t at = 0;
    while (at < n && strcmp(out[at].name, name) < 0) at++;
    if (at < n && strcmp(out[at].name, name) == 0) {
      out[at].value = api_parameter_value(p);
      continue;
    }
    memmove(&out[at + 1], &out[at], (n - at) * sizeof out[0]);
    out[at] = (api_metric_label_t){name, api_parameter_value(p)};
    n++;
  }
  *out_count = n;
  return NULL;
}

/* ---- Registry (callers hold registry_mu) ---------------------------------- */

static api_metric_family_t *family_find(const char *name) {
  for (api_metric_family_t *f = families; f != NULL; f = f->next) {
    if (strcmp(f->name, name) == 0) return f;
  }
  return NULL;
}

static api_metric_family_t *family_create(TRITONSERVER_MetricKind kind, const char *name,
                                          const char *help) {
  size_t name_len = strlen(name), help_len = strlen(help);
  api_metric_family_t *f = malloc(sizeof *f + name_len + help_len + 2);
  if (f == NULL) API_FATAL("out of memory making metric family '%s'", name);
  char *text = (char *)(f + 1);
  memcpy(text, name, name_len + 1);
  memcpy(text + name_len + 1, help, help_len + 1);
  *f = (api_metric_family_t){.kind = kind, .name = text, .help = text + name_len + 1};
  f->series_tail = &f->series;
  *families_tail = f;
  families_tail = &f->next;
  return f;
}

static void family_unlink(api_metric_family_t *f) {
  api_metric_family_t **link = &families;
  while (*link != f) link = &(*link)->next;
  *link = f->next;
  if (families_tail == &f->next) families_tail = link;
}

static bool labels_equal(const api_metric_series_t *s, const api_metric_label_t *labels,
                         size_t count) {
  if (s->label_count != count) return false;
  for (size_t i = 0; i < count; i++) {
    if (strcmp(s->labels[i].name, labels[i].name) != 0 ||
        strcmp(s->labels[i].value, labels[i].value) != 0) {
      return false;
    }
  }
  return true;
}

/* Lays out, in one block: the label array, the bounds, the bucket counters,
 * then the label strings (largest alignment first). */
static api_metric_series_t *series_create(TRITONSERVER_MetricKind kind,
                                          const api_metric_label_t *labels, size_t count,
                                          const double *bounds, size_t bound_count) {
  bool histogram = kind == TRITONSERVER_METRIC_KIND_HISTOGRAM;
  size_t labels_bytes = count * sizeof(api_metric_label_t);
  size_t bounds_bytes = bound_count * sizeof(double);
  size_t counts_bytes = histogram ? (bound_count + 1) * sizeof(_Atomic uint64_t) : 0;
  size_t text_bytes = 0;
  for (size_t i = 0; i < count; i++) {
    text_bytes += strlen(labels[i].name) + strlen(labels[i].value) + 2;
  }
  char *block = malloc(labels_bytes + bounds_bytes + counts_bytes + text_bytes + 1);
  api_metric_series_t *s = aligned_alloc(_Alignof(api_metric_series_t), sizeof *s);
  if (block == NULL || s == NULL) API_FATAL("out of memory making a metric series");
  memset(s, 0, sizeof *s);
  api_metric_label_t *copy = (api_metric_label_t *)block;
  double *bounds_copy = (double *)(block + labels_bytes);
  _Atomic uint64_t *counts = (_Atomic uint64_t *)(block + labels_bytes + bounds_bytes);
  char *text = block + labels_bytes + bounds_bytes + counts_bytes;
  for (size_t i = 0; i < count; i++) {
    size_t nl = strlen(labels[i].name) + 1, vl = strlen(labels[i].value) + 1;
    copy[i].name = memcpy(text, labels[i].name, nl);
    copy[i].value = memcpy(text + nl, labels[i].value, vl);
    text += nl + vl;
  }
  if (bound_count > 0) memcpy(bounds_copy, bounds, bounds_bytes);
  for (size_t i = 0; histogram && i <= bound_count; i++) atomic_init(&counts[i], 0);
  atomic_init(&s->value_bits, double_to_bits(0.0));
  atomic_init(&s->sum_bits, double_to_bits(0.0));
  s->bucket_counts = histogram ? counts : NULL;
  s->labels = copy;
  s->label_count = count;
  s->bounds = bounds_copy;
  s->bound_count = bound_count;
  return s;
}

static void series_free(api_metric_series_t *s) {
  free((void *)s->labels); /* the whole block */
  free(s);
}

static void series_unlink(api_metric_family_t *f, api_metric_series_t *s) {
  api_metric_series_t **link = &f->series;
  while (*link != s) link = &(*link)->next;
  *link = s->next;
  if (f->series_tail == &s->next) f->series_tail = link;
}

/* The series of 'f' with these labels, made if missing; one more reference. */
static api_metric_series_t *series_acquire(api_metric_family_t *f,
                                           const api_metric_label_t *labels, size_t count,
                                           const double *bounds, size_t bound_count) {
  for (api_metric_series_t *s = f->series; s != NULL; s = s->next) {
    /* An existing histogram keeps its own buckets, as Triton's does. */
    if (labels_equal(s, labels, count)) {
      s->refs++;
      return s;
    }
  }
  api_metric_series_t *s = series_create(f->kind, labels, count, bounds, bound_count);
  s->refs = 1;
  *f->series_tail = s;
  f->series_tail = &s->next;
  return s;
}

/* ---- Exported API: families ----------------------------------------------- */

TRITONSERVER_Error *TRITONSERVER_MetricFamilyNew(TRITONSERVER_MetricFamily **family,
                                                 const TRITONSERVER_MetricKind kind,
                                                 const char *name,
                                                 const char *description) {
  if (family == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "family out-parameter is NULL");
  }
  *family = NULL;
  if (kind_name(kind) == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "Unsupported kind passed to MetricFamily constructor.");
  }
  if (name == NULL || !valid_name(name, true)) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "Invalid metric name '%s'",
                         name ? name : "(null)");
  }
  TRITONSERVER_MetricFamily *handle = malloc(sizeof *handle);
  if (handle == NULL) API_FATAL("out of memory making metric family '%s'", name);
  api_metrics_lock();
  api_metric_family_t *f = family_find(name);
  if (f != NULL && f->kind != kind) {
    api_metrics_unlock();
    free(handle);
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "Family name already exists with different type: '%s' is a %s",
                         name, kind_name(f->kind));
  }
  if (f == NULL) f = family_create(kind, name, description ? description : "");
  f->handles++;
  *handle = (TRITONSERVER_MetricFamily){.family = f, .live_metrics = 0};
  api_metrics_unlock();
  *family = handle;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricFamilyDelete(TRITONSERVER_MetricFamily *family) {
  if (family == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "metric family is NULL");
  }
  api_metrics_lock();
  if (family->live_metrics > 0) {
    api_metrics_unlock();
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "Must call MetricDelete on all dependent metrics before calling "
                         "MetricFamilyDelete.");
  }
  api_metric_family_t *f = family->family;
  /* With no handle left, no metric is left either, so no series: the name
   * is free again (Triton keeps dead families registered; nothing is lost by
   * not doing so). */
  bool last = --f->handles == 0;
  if (last) {
    if (f->series != NULL)
      API_FATAL("metric family '%s' has series but no handle", f->name);
    family_unlink(f);
  }
  api_metrics_unlock();
  if (last) free(f);
  free(family);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_GetMetricFamilyKind(TRITONSERVER_MetricFamily *family,
                                                     TRITONSERVER_MetricKind *kind) {
  if (family == NULL || kind == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "family and kind must not be NULL");
  }
  *kind = family->family->kind;
  return NULL;
}

/* ---- Exported API: metric arguments ----------------------------------------- */

TRITONSERVER_Error *TRITONSERVER_MetricArgsNew(TRITONSERVER_MetricArgs **args) {
  if (args == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "args out-parameter is NULL");
  }
  *args = calloc(1, sizeof **args);
  if (*args == NULL) API_FATAL("out of memory making metric args");
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricArgsSetHistogram(TRITONSERVER_MetricArgs *args,
                                                        const double *buckets,
                                                        const uint64_t buckets_count) {
  if (args == NULL || (buckets == NULL && buckets_count > 0)) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "args and buckets must not be NULL");
  }
  /* Copied now; checked when a metric is made from them, as in Triton. */
  double *copy = NULL;
  if (buckets_count > 0) {
    copy = malloc(buckets_count * sizeof *copy);
    if (copy == NULL)
      API_FATAL("out of memory copying %llu buckets", (unsigned long long)buckets_count);
    memcpy(copy, buckets, buckets_count * sizeof *copy);
  }
  free(args->buckets);
  *args = (TRITONSERVER_MetricArgs){true, buckets_count, copy};
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricArgsDelete(TRITONSERVER_MetricArgs *args) {
  if (args != NULL) free(args->buckets);
  free(args);
  return NULL;
}

/* ---- Exported API: metrics ------------------------------------------------ */

TRITONSERVER_Error *TRITONSERVER_MetricNewWithArgs(TRITONSERVER_Metric **metric,
                                                   TRITONSERVER_MetricFamily *family,
                                                   const TRITONSERVER_Parameter **labels,
                                                   const uint64_t label_count,
                                                   const TRITONSERVER_MetricArgs *args) {
  if (metric == NULL || family == NULL || (labels == NULL && label_count > 0)) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "metric, family and labels must not be NULL");
  }
  *metric = NULL;
  TRITONSERVER_MetricKind kind = family->family->kind;
  const double *bounds;
  size_t bound_count, count = 0;
  TRITONSERVER_Error *err = check_args(kind, args, &bounds, &bound_count);
  if (err != NULL) return err;
  api_metric_label_t *key = label_count ? malloc(label_count * sizeof *key) : NULL;
  if (label_count > 0 && key == NULL) API_FATAL("out of memory collecting labels");
  err = collect_labels(labels, label_count, kind, key, &count);
  if (err != NULL) {
    free(key);
    return err;
  }
  TRITONSERVER_Metric *m = malloc(sizeof *m);
  if (m == NULL) API_FATAL("out of memory making a metric");
  api_metrics_lock();
  api_metric_series_t *s =
      series_acquire(family->family, key, count, bounds, bound_count);
  family->live_metrics++;
  api_metrics_unlock();
  free(key);
  *m = (TRITONSERVER_Metric){.handle = family, .series = s, .kind = kind};
  *metric = m;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricNew(TRITONSERVER_Metric **metric,
                                           TRITONSERVER_MetricFamily *family,
                                           const TRITONSERVER_Parameter **labels,
                                           const uint64_t label_count) {
  return TRITONSERVER_MetricNewWithArgs(metric, family, labels, label_count, NULL);
}

TRITONSERVER_Error *TRITONSERVER_MetricDelete(TRITONSERVER_Metric *metric) {
  if (metric == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "metric is NULL");
  api_metric_series_t *s = metric->series;
  api_metrics_lock();
  /* The last metric on a series takes it out of the output, as Triton's
   * reference-counted Prometheus children do. */
  bool last = --s->refs == 0;
  if (last) series_unlink(metric->handle->family, s);
  metric->handle->live_metrics--;
  api_metrics_unlock();
  if (last) series_free(s); /* unlinked: no renderer can reach it */
  free(metric);
  return NULL;
}

static TRITONSERVER_Error *unsupported(TRITONSERVER_MetricKind kind, const char *what) {
  return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                       "TRITONSERVER_METRIC_KIND_%s does not support %s",
                       kind == TRITONSERVER_METRIC_KIND_COUNTER ? "COUNTER"
                       : kind == TRITONSERVER_METRIC_KIND_GAUGE ? "GAUGE"
                                                                : "HISTOGRAM",
                       what);
}

TRITONSERVER_Error *TRITONSERVER_MetricValue(TRITONSERVER_Metric *metric, double *value) {
  if (metric == NULL || value == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "metric and value must not be NULL");
  }
  if (metric->kind == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return unsupported(metric->kind, "Value");
  }
  *value = api_metric_series_value(metric->series);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricIncrement(TRITONSERVER_Metric *metric,
                                                 double value) {
  if (metric == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "metric is NULL");
  switch (metric->kind) {
    case TRITONSERVER_METRIC_KIND_COUNTER:
      /* Written so that NaN is refused too: it is not non-negative. */
      if (!(value >= 0.0)) {
        return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                             "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented "
                             "monotonically by non-negative values.");
      }
      atomic_add_double(&metric->series->value_bits, value);
      return NULL;
    case TRITONSERVER_METRIC_KIND_GAUGE:
      atomic_add_double(&metric->series->value_bits, value);
      return NULL;
    case TRITONSERVER_METRIC_KIND_HISTOGRAM:
      break;
  }
  return unsupported(metric->kind, "Increment");
}

TRITONSERVER_Error *TRITONSERVER_MetricSet(TRITONSERVER_Metric *metric, double value) {
  if (metric == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "metric is NULL");
  if (metric->kind != TRITONSERVER_METRIC_KIND_GAUGE)
    return unsupported(metric->kind, "Set");
  atomic_store_explicit(&metric->series->value_bits, double_to_bits(value),
                        memory_order_relaxed);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricObserve(TRITONSERVER_Metric *metric,
                                               double value) {
  if (metric == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "metric is NULL");
  if (metric->kind != TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return unsupported(metric->kind, "Observe");
  }
  api_metric_series_t *s = metric->series;
  /* First bucket whose bound is >= value (Prometheus' "le"); binary search,
   * NaN falls through to +Inf. */
  size_t lo = 0, hi = s->bound_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (value <= s->bounds[mid]) {
      hi = mid;
    } else if (value > s->bounds[mid]) {
      lo = mid + 1;
    } else {
      lo = hi = s->bound_count; /* NaN */
    }
  }
  /* The count is the sum of the buckets, so _count always equals the +Inf
   * bucket in the output even while observations race a render. */
  atomic_fetch_add_explicit(&s->bucket_counts[lo], 1, memory_order_relaxed);
  atomic_add_double(&s->sum_bits, value);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_GetMetricKind(TRITONSERVER_Metric *metric,
                                               TRITONSERVER_MetricKind *kind) {
  if (metric == NULL || kind == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "metric and kind must not be NULL");
  }
  *kind = metric->kind;
  return NULL;
}
