/* Tests of the custom-metrics API and its Prometheus rendering, with a
 * many-thread torture of the lock-free updates (exact totals) racing metric
 * creation, deletion and rendering. Main thread, plus torture threads. */
#include "server/api/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/metrics_render.h"
#include "test/unit/unit.h"

/* Checks that 'err' is an error of 'code', and frees it. */
#define CHECK_ERR(err, code)                                         \
  do {                                                               \
    TRITONSERVER_Error *e_ = (err);                                  \
    CHECK(e_ != NULL && TRITONSERVER_ErrorCode(e_) == (code));       \
    if (e_ != NULL && TRITONSERVER_ErrorCode(e_) != (code)) {        \
      fprintf(stderr, "  got: %s\n", TRITONSERVER_ErrorMessage(e_)); \
    }                                                                \
    TRITONSERVER_ErrorDelete(e_);                                    \
  } while (0)

#define CHECK_OK(err)                                                                \
  do {                                                                               \
    TRITONSERVER_Error *e_ = (err);                                                  \
    if (e_ != NULL) fprintf(stderr, "  error: %s\n", TRITONSERVER_ErrorMessage(e_)); \
    CHECK(e_ == NULL);                                                               \
    TRITONSERVER_ErrorDelete(e_);                                                    \
  } while (0)

/* The whole registry rendered; the caller frees it. */
static char *render(void) {
  char *text = NULL;
  size_t len = 0;
  TRITONSERVER_Error *err = api_metrics_render(&text, &len);
  if (err != NULL || text == NULL || strlen(text) != len) abort();
  return text;
}

static TRITONSERVER_Parameter *label(const char *name, const char *value) {
  return TRITONSERVER_ParameterNew(name, TRITONSERVER_PARAMETER_STRING, value);
}

static void counter_end_to_end(void) {
  TRITONSERVER_MetricFamily *family = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&family, TRITONSERVER_METRIC_KIND_COUNTER,
                                        "api_counter_example", "an example counter"));
  REQUIRE(family != NULL);
  const TRITONSERVER_Parameter *labels[] = {label("example2", "b"),
                                            label("example1", "a")};
  TRITONSERVER_Metric *metric = NULL;
  CHECK_OK(TRITONSERVER_MetricNew(&metric, family, labels, 2));
  /* Labels are copied: the caller may delete them at once. */
  for (int i = 0; i < 2; i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)labels[i]);
  REQUIRE(metric != NULL);
  double v = -1;
  CHECK_OK(TRITONSERVER_MetricValue(metric, &v));
  CHECK(v == 0.0);
  CHECK_OK(TRITONSERVER_MetricIncrement(metric, 10));
  CHECK_OK(TRITONSERVER_MetricIncrement(metric, 0.5));
  CHECK_OK(TRITONSERVER_MetricValue(metric, &v));
  CHECK(v == 10.5);
  CHECK_ERR(TRITONSERVER_MetricIncrement(metric, -1), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricIncrement(metric, NAN), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricSet(metric, 3), TRITONSERVER_ERROR_UNSUPPORTED);
  CHECK_ERR(TRITONSERVER_MetricObserve(metric, 3), TRITONSERVER_ERROR_UNSUPPORTED);
  TRITONSERVER_MetricKind kind = TRITONSERVER_METRIC_KIND_GAUGE;
  CHECK_OK(TRITONSERVER_GetMetricKind(metric, &kind));
  CHECK_EQ_U64(kind, TRITONSERVER_METRIC_KIND_COUNTER);
  kind = TRITONSERVER_METRIC_KIND_GAUGE;
  CHECK_OK(TRITONSERVER_GetMetricFamilyKind(family, &kind));
  CHECK_EQ_U64(kind, TRITONSERVER_METRIC_KIND_COUNTER);
  char *text = render();
  CHECK_STREQ(text,
              "# HELP api_counter_example an example counter\n"
              "# TYPE api_counter_example counter\n"
              "api_counter_example{example1=\"a\",example2=\"b\"} 10.5\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(metric));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(family));
  text = render();
  CHECK_STREQ(text, "");
  free(text);
}

static void gauge_end_to_end(void) {
  TRITONSERVER_MetricFamily *family = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&family, TRITONSERVER_METRIC_KIND_GAUGE,
                                        "queue_depth", "requests waiting"));
  TRITONSERVER_Metric *metric = NULL;
  CHECK_OK(TRITONSERVER_MetricNew(&metric, family, NULL, 0));
  REQUIRE(metric != NULL);
  double v = -1;
  CHECK_OK(TRITONSERVER_MetricIncrement(metric, 10));
  CHECK_OK(TRITONSERVER_MetricIncrement(metric, -12.5));
  CHECK_OK(TRITONSERVER_MetricValue(metric, &v));
  CHECK(v == -2.5);
  CHECK_OK(TRITONSERVER_MetricSet(metric, 42));
  CHECK_OK(TRITONSERVER_MetricValue(metric, &v));
  CHECK(v == 42);
  CHECK_ERR(TRITONSERVER_MetricObserve(metric, 1), TRITONSERVER_ERROR_UNSUPPORTED);
  char *text = render();
  CHECK_STREQ(text,
              "# HELP queue_depth requests waiting\n"
              "# TYPE queue_depth gauge\n"
              "queue_depth 42\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricSet(metric, 0.1));
  text = render();
  CHECK(strstr(text, "\nqueue_depth 0.1\n") != NULL);
  free(text);
  CHECK_OK(TRITONSERVER_MetricSet(metric, INFINITY));
  text = render();
  CHECK(strstr(text, "\nqueue_depth +Inf\n") != NULL);
  free(text);
  CHECK_OK(TRITONSERVER_MetricSet(metric, NAN));
  text = render();
  CHECK(strstr(text, "\nqueue_depth NaN\n") != NULL);
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(metric));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(family));
}

static TRITONSERVER_MetricArgs *histogram_args(const double *buckets, size_t count) {
  TRITONSERVER_MetricArgs *args = NULL;
  if (TRITONSERVER_MetricArgsNew(&args) != NULL) abort();
  if (TRITONSERVER_MetricArgsSetHistogram(args, buckets, count) != NULL) abort();
  return args;
}

static void histogram_end_to_end(void) {
  TRITONSERVER_MetricFamily *family = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&family, TRITONSERVER_METRIC_KIND_HISTOGRAM,
                                        "latency_us", "request latency"));
  const double buckets[] = {10, 100, 1000};
  TRITONSERVER_MetricArgs *args = histogram_args(buckets, 3);
  const TRITONSERVER_Parameter *labels[] = {label("model", "simple")};
  TRITONSERVER_Metric *metric = NULL;
  CHECK_OK(TRITONSERVER_MetricNewWithArgs(&metric, family, labels, 1, args));
  TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)labels[0]);
  TRITONSERVER_MetricArgsDelete(args); /* read only during the call */
  REQUIRE(metric != NULL);
  const double observed[] = {5, 10, 11, 100, 999.5, 1000.5, 1e9};
  for (size_t i = 0; i < sizeof observed / sizeof observed[0]; i++) {
    CHECK_OK(TRITONSERVER_MetricObserve(metric, observed[i]));
  }
  double v;
  CHECK_ERR(TRITONSERVER_MetricValue(metric, &v), TRITONSERVER_ERROR_UNSUPPORTED);
  CHECK_ERR(TRITONSERVER_MetricIncrement(metric, 1), TRITONSERVER_ERROR_UNSUPPORTED);
  CHECK_ERR(TRITONSERVER_MetricSet(metric, 1), TRITONSERVER_ERROR_UNSUPPORTED);
  char *text = render();
  CHECK_STREQ(text,
              "# HELP latency_us request latency\n"
              "# TYPE latency_us histogram\n"
              "latency_us_bucket{model=\"simple\",le=\"10\"} 2\n"
              "latency_us_bucket{model=\"simple\",le=\"100\"} 4\n"
              "latency_us_bucket{model=\"simple\",le=\"1000\"} 5\n"
              "latency_us_bucket{model=\"simple\",le=\"+Inf\"} 7\n"
              "latency_us_sum{model=\"simple\"} 1000002126\n"
              "latency_us_count{model=\"simple\"} 7\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(metric));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(family));
}

static void histogram_arguments(void) {
  TRITONSERVER_MetricFamily *hist = NULL, *counter = NULL;
  CHECK_OK(
      TRITONSERVER_MetricFamilyNew(&hist, TRITONSERVER_METRIC_KIND_HISTOGRAM, "h", ""));
  CHECK_OK(
      TRITONSERVER_MetricFamilyNew(&counter, TRITONSERVER_METRIC_KIND_COUNTER, "c", ""));
  TRITONSERVER_Metric *m = NULL;
  CHECK_ERR(TRITONSERVER_MetricNew(&m, hist, NULL, 0), TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_MetricArgs *unset = NULL;
  CHECK_OK(TRITONSERVER_MetricArgsNew(&unset));
  CHECK_ERR(TRITONSERVER_MetricNewWithArgs(&m, hist, NULL, 0, unset),
            TRITONSERVER_ERROR_INVALID_ARG);
  const double unsorted[] = {1, 3, 2}, repeated[] = {1, 1}, nan_bound[] = {1, NAN};
  TRITONSERVER_MetricArgs *bad[] = {histogram_args(unsorted, 3),
                                    histogram_args(repeated, 2),
                                    histogram_args(nan_bound, 2)};
  for (int i = 0; i < 3; i++) {
    CHECK_ERR(TRITONSERVER_MetricNewWithArgs(&m, hist, NULL, 0, bad[i]),
              TRITONSERVER_ERROR_INVALID_ARG);
    TRITONSERVER_MetricArgsDelete(bad[i]);
  }
  CHECK(m == NULL);
  /* Counters and gauges take no arguments, as in Triton. */
  const double ok_bounds[] = {0.5, INFINITY};
  TRITONSERVER_MetricArgs *ok = histogram_args(ok_bounds, 2);
  CHECK_ERR(TRITONSERVER_MetricNewWithArgs(&m, counter, NULL, 0, ok),
            TRITONSERVER_ERROR_INVALID_ARG);
  /* A trailing +Inf is the implicit last bucket, not a second one. */
  CHECK_OK(TRITONSERVER_MetricNewWithArgs(&m, hist, NULL, 0, ok));
  CHECK_OK(TRITONSERVER_MetricObserve(m, 0.25));
  char *text = render();
  CHECK_STREQ(text,
              "# HELP h \n# TYPE h histogram\n"
              "h_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
              "h_sum 0.25\nh_count 1\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(m));
  TRITONSERVER_MetricArgsDelete(ok);
  TRITONSERVER_MetricArgsDelete(unset);
  CHECK_ERR(TRITONSERVER_MetricArgsSetHistogram(NULL, ok_bounds, 1),
            TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(hist));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(counter));
}

static void family_names_are_checked(void) {
  const char *bad[] = {"", "1abc", "a-b", "__reserved", "sp ace", "é"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    TRITONSERVER_MetricFamily *f = (TRITONSERVER_MetricFamily *)1;
    CHECK_ERR(
        TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_GAUGE, bad[i], "d"),
        TRITONSERVER_ERROR_INVALID_ARG);
    CHECK(f == NULL);
  }
  TRITONSERVER_MetricFamily *f = NULL;
  CHECK_ERR(TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_GAUGE, NULL, "d"),
            TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricFamilyNew(&f, (TRITONSERVER_MetricKind)3, "ok_name", "d"),
            TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_GAUGE, ":ok:_name9",
                                        NULL));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f));
}

/* Triton's TestDupeMetricFamily*: same name and kind is the same family,
 * the first description wins; another kind is refused. */
static void duplicate_families(void) {
  TRITONSERVER_MetricFamily *f1 = NULL, *f2 = NULL, *f3 = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&f1, TRITONSERVER_METRIC_KIND_COUNTER, "dupe",
                                        "first"));
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&f2, TRITONSERVER_METRIC_KIND_COUNTER, "dupe",
                                        "second"));
  CHECK(f1 != NULL && f2 != NULL && f1 != f2);
  CHECK_ERR(
      TRITONSERVER_MetricFamilyNew(&f3, TRITONSERVER_METRIC_KIND_GAUGE, "dupe", "x"),
      TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(f3 == NULL);
  char *text = render();
  CHECK_STREQ(text, ""); /* no family is shown before it has a metric */
  free(text);
  TRITONSERVER_Metric *m1 = NULL, *m2 = NULL;
  CHECK_OK(TRITONSERVER_MetricNew(&m1, f1, NULL, 0));
  CHECK_OK(TRITONSERVER_MetricNew(&m2, f2, NULL, 0));
  CHECK_OK(TRITONSERVER_MetricIncrement(m1, 2));
  double v = 0;
  CHECK_OK(TRITONSERVER_MetricValue(m2, &v));
  CHECK(v == 2); /* same family, no labels: one series */
  text = render();
  CHECK_STREQ(text, "# HELP dupe first\n# TYPE dupe counter\ndupe 2\n");
  free(text);
  /* A family handle cannot go while its own metrics live. */
  CHECK_ERR(TRITONSERVER_MetricFamilyDelete(f1), TRITONSERVER_ERROR_INTERNAL);
  CHECK_OK(TRITONSERVER_MetricDelete(m1));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f1));
  text = render();
  CHECK_STREQ(text, "# HELP dupe first\n# TYPE dupe counter\ndupe 2\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(m2));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f2));
  /* With every handle gone the name is free again, for any kind. */
  CHECK_OK(
      TRITONSERVER_MetricFamilyNew(&f3, TRITONSERVER_METRIC_KIND_GAUGE, "dupe", "again"));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f3));
}

/* Triton's TestDupeMetricLabels: equal label sets share one value; the
 * series leaves the output with its last metric. */
static void duplicate_labels_share_a_series(void) {
  TRITONSERVER_MetricFamily *f = NULL;
  CHECK_OK(
      TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_COUNTER, "shared", "d"));
  const TRITONSERVER_Parameter *ab[] = {label("a", "1"), label("b", "2")};
  const TRITONSERVER_Parameter *ba[] = {label("b", "2"), label("a", "1")};
  const TRITONSERVER_Parameter *other[] = {label("a", "1"), label("b", "3")};
  TRITONSERVER_Metric *m1 = NULL, *m2 = NULL, *m3 = NULL;
  CHECK_OK(TRITONSERVER_MetricNew(&m1, f, ab, 2));
  CHECK_OK(TRITONSERVER_MetricNew(&m2, f, ba, 2));
  CHECK_OK(TRITONSERVER_MetricNew(&m3, f, other, 2));
  CHECK_OK(TRITONSERVER_MetricIncrement(m1, 7.5));
  double v2 = 0, v3 = -1;
  CHECK_OK(TRITONSERVER_MetricValue(m2, &v2));
  CHECK_OK(TRITONSERVER_MetricValue(m3, &v3));
  CHECK(v2 == 7.5 && v3 == 0);
  CHECK_OK(TRITONSERVER_MetricDelete(m1));
  char *text = render();
  CHECK_STREQ(text,
              "# HELP shared d\n# TYPE shared counter\n"
              "shared{a=\"1\",b=\"2\"} 7.5\nshared{a=\"1\",b=\"3\"} 0\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(m2));
  CHECK_OK(TRITONSERVER_MetricDelete(m3));
  text = render();
  CHECK_STREQ(text, "");
  free(text);
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f));
  for (int i = 0; i < 2; i++) {
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)ab[i]);
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)ba[i]);
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)other[i]);
  }
}

static void labels_are_checked(void) {
  TRITONSERVER_MetricFamily *f = NULL, *h = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_GAUGE, "lbl", "d"));
  CHECK_OK(
      TRITONSERVER_MetricFamilyNew(&h, TRITONSERVER_METRIC_KIND_HISTOGRAM, "lblh", "d"));
  int64_t seven = 7;
  TRITONSERVER_Parameter *not_string =
      TRITONSERVER_ParameterNew("n", TRITONSERVER_PARAMETER_INT, &seven);
  TRITONSERVER_Parameter *bad_name = label("bad-name", "v");
  TRITONSERVER_Parameter *reserved = label("__name__", "v");
  TRITONSERVER_Parameter *le = label("le", "1");
  TRITONSERVER_Metric *m = NULL;
  const TRITONSERVER_Parameter *one[1];
  TRITONSERVER_Parameter *bads[] = {not_string, bad_name, reserved, NULL};
  for (int i = 0; i < 4; i++) {
    one[0] = bads[i];
    CHECK_ERR(TRITONSERVER_MetricNew(&m, f, one, 1), TRITONSERVER_ERROR_INVALID_ARG);
  }
  CHECK_ERR(TRITONSERVER_MetricNew(&m, f, NULL, 1), TRITONSERVER_ERROR_INVALID_ARG);
  /* "le" is fine on a gauge, not on a histogram, whose buckets use it. */
  const double b[] = {1};
  TRITONSERVER_MetricArgs *args = histogram_args(b, 1);
  one[0] = le;
  CHECK_ERR(TRITONSERVER_MetricNewWithArgs(&m, h, one, 1, args),
            TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_OK(TRITONSERVER_MetricNew(&m, f, one, 1));
  CHECK_OK(TRITONSERVER_MetricDelete(m));
  /* A repeated name keeps its last value, as Triton's label map. */
  const TRITONSERVER_Parameter *twice[] = {label("k", "first"), label("k", "last")};
  CHECK_OK(TRITONSERVER_MetricNew(&m, f, twice, 2));
  char *text = render();
  CHECK(strstr(text, "lbl{k=\"last\"} 0\n") != NULL && strstr(text, "first") == NULL);
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(m));
  for (int i = 0; i < 2; i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)twice[i]);
  TRITONSERVER_MetricArgsDelete(args);
  TRITONSERVER_ParameterDelete(not_string);
  TRITONSERVER_ParameterDelete(bad_name);
  TRITONSERVER_ParameterDelete(reserved);
  TRITONSERVER_ParameterDelete(le);
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(h));
}

static void text_is_escaped(void) {
  TRITONSERVER_MetricFamily *f = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_GAUGE, "esc",
                                        "line1\nback\\slash \"quoted\""));
  const TRITONSERVER_Parameter *labels[] = {label("path", "C:\\dir\n\"x\"")};
  TRITONSERVER_Metric *m = NULL;
  CHECK_OK(TRITONSERVER_MetricNew(&m, f, labels, 1));
  char *text = render();
  CHECK_STREQ(text,
              "# HELP esc line1\\nback\\\\slash \"quoted\"\n# TYPE esc gauge\n"
              "esc{path=\"C:\\\\dir\\n\\\"x\\\"\"} 0\n");
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(m));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f));
  TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)labels[0]);
}

static void snapshot_object(void) {
  TRITONSERVER_MetricFamily *f = NULL;
  TRITONSERVER_Metric *m = NULL;
  CHECK_OK(
      TRITONSERVER_MetricFamilyNew(&f, TRITONSERVER_METRIC_KIND_COUNTER, "snap", "s"));
  CHECK_OK(TRITONSERVER_MetricNew(&m, f, NULL, 0));
  TRITONSERVER_Metrics *snapshot = api_metrics_snapshot_new();
  CHECK_OK(TRITONSERVER_MetricIncrement(m, 1)); /* after the snapshot */
  const char *base = NULL;
  size_t size = 0;
  CHECK_OK(TRITONSERVER_MetricsFormatted(snapshot, TRITONSERVER_METRIC_PROMETHEUS, &base,
                                         &size));
  CHECK_STREQ(base, "# HELP snap s\n# TYPE snap counter\nsnap 0\n");
  CHECK_EQ_U64(size, strlen(base));
  CHECK_ERR(
      TRITONSERVER_MetricsFormatted(snapshot, (TRITONSERVER_MetricFormat)1, &base, &size),
      TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_OK(TRITONSERVER_MetricsDelete(snapshot));
  CHECK_OK(TRITONSERVER_MetricDelete(m));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(f));
}

static void null_arguments(void) {
  CHECK_ERR(TRITONSERVER_MetricFamilyNew(NULL, TRITONSERVER_METRIC_KIND_GAUGE, "x", ""),
            TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricFamilyDelete(NULL), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricNew(NULL, NULL, NULL, 0), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricDelete(NULL), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricIncrement(NULL, 1), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricSet(NULL, 1), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricObserve(NULL, 1), TRITONSERVER_ERROR_INVALID_ARG);
  double v;
  CHECK_ERR(TRITONSERVER_MetricValue(NULL, &v), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_ERR(TRITONSERVER_MetricArgsNew(NULL), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(TRITONSERVER_MetricArgsDelete(NULL) == NULL);
  CHECK_ERR(api_metrics_render(NULL, NULL), TRITONSERVER_ERROR_INVALID_ARG);
}

/* ---- Torture: lock-free updates from many threads, exact totals ------------
 * Every thread hammers one shared counter, gauge and histogram through its
 * own metric handles (equal labels, so the same series), while also making
 * and dropping private metrics in the same families and rendering: the
 * registry's mutex and the update atomics are exercised together. */

enum { THREADS = 8 };

typedef struct {
  TRITONSERVER_MetricFamily *counters, *gauges, *histograms;
  long iterations;
} torture_t;

static void *torture_thread(void *arg) {
  const torture_t *t = arg;
  const TRITONSERVER_Parameter *shared[] = {label("series", "shared")};
  const double bounds[] = {0.5, 1.5, 2.5};
  TRITONSERVER_MetricArgs *args = histogram_args(bounds, 3);
  TRITONSERVER_Metric *c = NULL, *g = NULL, *h = NULL;
  if (TRITONSERVER_MetricNew(&c, t->counters, shared, 1) ||
      TRITONSERVER_MetricNew(&g, t->gauges, shared, 1) ||
      TRITONSERVER_MetricNewWithArgs(&h, t->histograms, shared, 1, args)) {
    abort();
  }
  const TRITONSERVER_Parameter *own[] = {label("series", "churn")};
  for (long i = 0; i < t->iterations; i++) {
    if (TRITONSERVER_MetricIncrement(c, 1.0) || TRITONSERVER_MetricIncrement(g, 2.0) ||
        TRITONSERVER_MetricIncrement(g, -1.0) ||
        TRITONSERVER_MetricObserve(h, (double)(i % 3))) {
      abort();
    }
    if (i % 1024 == 0) {
      /* Registry churn: a private metric, and a handle on a family that
       * other threads make and drop under the same name at the same time. */
      TRITONSERVER_Metric *tmp = NULL, *gone = NULL;
      TRITONSERVER_MetricFamily *churn = NULL;
      if (TRITONSERVER_MetricNew(&tmp, t->counters, own, 1) ||
          TRITONSERVER_MetricFamilyNew(&churn, TRITONSERVER_METRIC_KIND_GAUGE,
                                       "churn_family", "") ||
          TRITONSERVER_MetricNew(&gone, churn, NULL, 0)) {
        abort();
      }
      TRITONSERVER_MetricIncrement(tmp, 1.0);
      free(render());
      if (TRITONSERVER_MetricDelete(gone) || TRITONSERVER_MetricFamilyDelete(churn) ||
          TRITONSERVER_MetricDelete(tmp)) {
        abort();
      }
    }
  }
  TRITONSERVER_MetricDelete(c);
  TRITONSERVER_MetricDelete(g);
  TRITONSERVER_MetricDelete(h);
  TRITONSERVER_MetricArgsDelete(args);
  TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)shared[0]);
  TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)own[0]);
  return NULL;
}

static void torture_exact_totals(void) {
  torture_t t = {.iterations = 200000 / unit_slowdown()};
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&t.counters, TRITONSERVER_METRIC_KIND_COUNTER,
                                        "torture_total", "c"));
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&t.gauges, TRITONSERVER_METRIC_KIND_GAUGE,
                                        "torture_level", "g"));
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&t.histograms, TRITONSERVER_METRIC_KIND_HISTOGRAM,
                                        "torture_hist", "h"));
  /* The main thread keeps one reference so the series outlive the threads. */
  const TRITONSERVER_Parameter *shared[] = {label("series", "shared")};
  const double bounds[] = {0.5, 1.5, 2.5};
  TRITONSERVER_MetricArgs *args = histogram_args(bounds, 3);
  TRITONSERVER_Metric *c = NULL, *g = NULL, *h = NULL;
  CHECK_OK(TRITONSERVER_MetricNew(&c, t.counters, shared, 1));
  CHECK_OK(TRITONSERVER_MetricNew(&g, t.gauges, shared, 1));
  CHECK_OK(TRITONSERVER_MetricNewWithArgs(&h, t.histograms, shared, 1, args));
  REQUIRE(c && g && h);
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, torture_thread, &t);
  for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  long n = t.iterations * THREADS;
  double cv = -1, gv = -1;
  CHECK_OK(TRITONSERVER_MetricValue(c, &cv));
  CHECK_OK(TRITONSERVER_MetricValue(g, &gv));
  CHECK_EQ_U64((unsigned long long)cv, n);
  CHECK(cv == (double)n && gv == (double)n);
  /* i % 3 over 0..iterations-1 per thread: exact bucket counts and sum. */
  long per[3] = {0, 0, 0};
  for (long i = 0; i < t.iterations; i++) per[i % 3]++;
  char expect[1024];
  snprintf(expect, sizeof expect,
           "torture_hist_bucket{series=\"shared\",le=\"0.5\"} %ld\n"
           "torture_hist_bucket{series=\"shared\",le=\"1.5\"} %ld\n"
           "torture_hist_bucket{series=\"shared\",le=\"2.5\"} %ld\n"
           "torture_hist_bucket{series=\"shared\",le=\"+Inf\"} %ld\n"
           "torture_hist_sum{series=\"shared\"} %ld\n"
           "torture_hist_count{series=\"shared\"} %ld\n",
           per[0] * THREADS, (per[0] + per[1]) * THREADS, n, n,
           (per[1] + 2 * per[2]) * THREADS, n);
  char *text = render();
  CHECK(strstr(text, expect) != NULL);
  CHECK(strstr(text, "churn") == NULL); /* every private metric was deleted */
  /* ... and every churn family handle: the name is free for another kind. */
  TRITONSERVER_MetricFamily *reuse = NULL;
  CHECK_OK(TRITONSERVER_MetricFamilyNew(&reuse, TRITONSERVER_METRIC_KIND_COUNTER,
                                        "churn_family", ""));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(reuse));
  free(text);
  CHECK_OK(TRITONSERVER_MetricDelete(c));
  CHECK_OK(TRITONSERVER_MetricDelete(g));
  CHECK_OK(TRITONSERVER_MetricDelete(h));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(t.counters));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(t.gauges));
  CHECK_OK(TRITONSERVER_MetricFamilyDelete(t.histograms));
  TRITONSERVER_MetricArgsDelete(args);
  TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)shared[0]);
}

UNIT_MAIN("api_metrics", UNIT_CASE(counter_end_to_end), UNIT_CASE(gauge_end_to_end),
          UNIT_CASE(histogram_end_to_end), UNIT_CASE(histogram_arguments),
          UNIT_CASE(family_names_are_checked), UNIT_CASE(duplicate_families),
          UNIT_CASE(duplicate_labels_share_a_series), UNIT_CASE(labels_are_checked),
          UNIT_CASE(text_is_escaped), UNIT_CASE(snapshot_object),
          UNIT_CASE(null_arguments), UNIT_CASE(torture_exact_totals))
