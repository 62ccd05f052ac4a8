/* Prometheus text rendering of the metrics registry, and the TRITONSERVER_Metrics
 * snapshot (see metrics_render.h). Any thread; holds the registry mutex only
 * while walking it. */
#include "server/api/metrics_render.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/log.h"
#include "server/api/metrics.h"

struct TRITONSERVER_Metrics {
  char *text;
  size_t len;
};

/* A growing NUL-terminated text; out-of-memory is fatal. */
typedef struct {
  char *buf;
  size_t len, cap;
} text_t;

static void text_reserve(text_t *t, size_t more) {
  if (t->len + more + 1 <= t->cap) return;
  size_t cap = t->cap ? t->cap : 4096;
  while (cap < t->len + more + 1) cap *= 2;
  char *buf = realloc(t->buf, cap);
  if (buf == NULL) API_FATAL("out of memory rendering %zu bytes of metrics", cap);
  t->buf = buf;
  t->cap = cap;
}

static void text_putn(text_t *t, const char *s, size_t n) {
  text_reserve(t, n);
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

static void text_puts(text_t *t, const char *s) { text_putn(t, s, strlen(s)); }

/* Copies 's' escaping '\\' and newline (and '"' when 'quote'), the escapes
 * the exposition format defines for HELP text and label values. */
static void text_escaped(text_t *t, const char *s, bool quote) {
  for (; *s != '\0'; s++) {
    if (*s == '\\') {
      text_putn(t, "\\\\", 2);
    } else if (*s == '\n') {
      text_putn(t, "\\n", 2);
    } else if (quote && *s == '"') {
      text_putn(t, "\\\"", 2);
    } else {
      text_putn(t, s, 1);
    }
  }
}

/* Prometheus spells the specials "NaN", "+Inf", "-Inf". Others get the
 * shortest of %.15g / %.17g that reads back exactly, so 0.1 prints as 0.1. */
static void format_double(char buf[32], double v) {
  if (isnan(v)) {
    strcpy(buf, "NaN");
  } else if (isinf(v)) {
    strcpy(buf, v > 0 ? "+Inf" : "-Inf");
  } else {
    snprintf(buf, 32, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, 32, "%.17g", v);
  }
}

static void text_double(text_t *t, double v) {
  char buf[32];
  format_double(buf, v);
  text_puts(t, buf);
}

/* "name<suffix>{a="x",b="y"[,le="bound"]} " */
static void series_head(text_t *t, const api_metric_family_t *f, const char *suffix,
                        const api_metric_series_t *s, const char *le) {
  text_puts(t, f->name);
  text_puts(t, suffix);
  if (s->label_count == 0 && le == NULL) {
    text_putn(t, " ", 1);
    return;
  }
  text_putn(t, "{", 1);
  for (size_t i = 0; i < s->label_count; i++) {
    if (i > 0) text_putn(t, ",", 1);
    text_puts(t, s->labels[i].name);
    text_putn(t, "=\"", 2);
    text_escaped(t, s->labels[i].value, true);
    text_putn(t, "\"", 1);
  }
  if (le != NULL) {
    text_puts(t, s->label_count ? ",le=\"" : "le=\"");
    text_puts(t, le);
    text_putn(t, "\"", 1);
  }
  text_putn(t, "} ", 2);
}

static void render_histogram(text_t *t, const api_metric_family_t *f,
                             const api_metric_series_t *s) {
  /* Buckets are stored per bucket; the format wants running totals. */
  unsigned long long total = 0;
  char bound[32], count[24];
  for (size_t i = 0; i <= s->bound_count; i++) {
    total += atomic_load_explicit(&s->bucket_counts[i], memory_order_relaxed);
    if (i < s->bound_count) {
      format_double(bound, s->bounds[i]);
    } else {
      strcpy(bound, "+Inf");
    }
    series_head(t, f, "_bucket", s, bound);
    snprintf(count, sizeof count, "%llu\n", total);
    text_puts(t, count);
  }
  series_head(t, f, "_sum", s, NULL);
  text_double(t, api_metric_series_sum(s));
  text_putn(t, "\n", 1);
  series_head(t, f, "_count", s, NULL);
  snprintf(count, sizeof count, "%llu\n", total);
  text_puts(t, count);
}

static void render_family(text_t *t, const api_metric_family_t *f) {
  static const char *const types[] = {"counter", "gauge", "histogram"};
  text_puts(t, "# HELP ");
  text_puts(t, f->name);
  text_putn(t, " ", 1);
  text_escaped(t, f->help, false);
  text_puts(t, "\n# TYPE ");
  text_puts(t, f->name);
  text_putn(t, " ", 1);
  text_puts(t, types[f->kind]);
  text_putn(t, "\n", 1);
  for (const api_metric_series_t *s = f->series; s != NULL; s = s->next) {
    if (f->kind == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
      render_histogram(t, f, s);
    } else {
      series_head(t, f, "", s, NULL);
      text_double(t, api_metric_series_value(s));
      text_putn(t, "\n", 1);
    }
  }
}

TRITONSERVER_Error *api_metrics_render(char **out, size_t *len) {
  if (out == NULL || len == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "out and len must not be NULL");
  }
  text_t t = {0};
  text_reserve(&t, 0); /* an empty registry still renders "" */
  t.buf[0] = '\0';
  api_metrics_lock();
  /* A family with no series is left out, as Triton's output omits a family
   * until a metric is made in it. */
  for (const api_metric_family_t *f = api_metrics_first_family(); f != NULL;
       f = f->next) {
    if (f->series != NULL) render_family(&t, f);
  }
  api_metrics_unlock();
  *out = t.buf;
  *len = t.len;
  return NULL;
}

/* ---- TRITONSERVER_Metrics ----------------------------------------------------- */

TRITONSERVER_Metrics *api_metrics_snapshot_new(void) {
  TRITONSERVER_Metrics *m = malloc(sizeof *m);
  if (m == NULL) API_FATAL("out of memory making a metrics snapshot");
  TRITONSERVER_Error *err = api_metrics_render(&m->text, &m->len);
  if (err != NULL) API_FATAL("rendering metrics: %s", TRITONSERVER_ErrorMessage(err));
  return m;
}

TRITONSERVER_Metrics *api_metrics_new_take(char *text, size_t len) {
  TRITONSERVER_Metrics *m = malloc(sizeof *m);
  if (m == NULL) API_FATAL("out of memory making a metrics snapshot");
  m->text = text;
  m->len = len;
  return m;
}

TRITONSERVER_Error *TRITONSERVER_MetricsDelete(TRITONSERVER_Metrics *metrics) {
  if (metrics != NULL) free(metrics->text);
  free(metrics);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MetricsFormatted(TRITONSERVER_Metrics *metrics,
                                                  TRITONSERVER_MetricFormat format,
                                                  const char **base, size_t *byte_size) {
  if (metrics == NULL || base == NULL || byte_size == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "metrics, base and byte_size must not be NULL");
  }
  if (format != TRITONSERVER_METRIC_PROMETHEUS) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "unknown metrics format '%d'",
                         (int)format);
  }
  /* Rendered when the snapshot was taken, so the text stays valid for the
   * snapshot's life (Triton re-renders here and replaces the buffer). */
  *base = metrics->text;
  *byte_size = metrics->len;
  return NULL;
}
