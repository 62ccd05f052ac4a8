/* The /metrics page (see metrics_text.h and metrics.md). Any thread. */
#include "server/metrics/metrics_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/metrics_render.h"
#include "server/common/log.h"
#include "server/common/memory.h"

/* ---- the buffer ---- */

static void reserve(srv_metrics_buf_t *b, size_t more) {
  if (b->len + more + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more + 1) cap *= 2;
  char *p = realloc(b->data, cap);
  if (p == NULL) SRV_FATAL("out of memory rendering metrics");
  b->data = p;
  b->cap = cap;
}

void srv_metrics_buf_append(srv_metrics_buf_t *b, const char *s, size_t n) {
  reserve(b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void puts_(srv_metrics_buf_t *b, const char *s) {
  srv_metrics_buf_append(b, s, strlen(s));
}

void srv_metrics_buf_printf(srv_metrics_buf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) SRV_FATAL("bad metrics format '%s'", fmt);
  if ((size_t)n < sizeof small) {
    srv_metrics_buf_append(b, small, (size_t)n);
    return;
  }
  reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void srv_metrics_buf_free(srv_metrics_buf_t *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

/* ---- series lines ---- */

/* A label value, escaped as the text format wants (\\, \", \n). */
static void escaped(srv_metrics_buf_t *b, const char *s) {
  for (const char *p = s; *p != '\0'; p++) {
    if (*p == '\\')
      puts_(b, "\\\\");
    else if (*p == '"')
      puts_(b, "\\\"");
    else if (*p == '\n')
      puts_(b, "\\n");
    else
      srv_metrics_buf_append(b, p, 1);
  }
}

static void head(srv_metrics_buf_t *b, const char *name, const char *type,
                 const char *help) {
  srv_metrics_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A model version held for the page. */
typedef struct {
  srv_model_t *m;
  srv_model_desc_t d;
  srv_stats_t *s;
  srv_stats_totals_t t; /* the writer slots summed once, at collect */
  uint64_t *depth;      /* queue depth per level, read at collect before t */
  char *ns;             /* its namespace (--model-namespacing), a copy; else NULL */
} item_t;

/* `name``suffix`{model="...",<mid,>version="..."<,tail>} and a space: labels
 * in tritonserver's order (its metric labels sorted, then a summary's
 * quantile or a histogram's le). mid and tail are whole, escaped labels. */
static void series(srv_metrics_buf_t *b, const char *name, const char *suffix,
                   const item_t *it, const char *mid, const char *tail) {
  puts_(b, name);
  puts_(b, suffix);
  puts_(b, "{model=\"");
  escaped(b, it->d.name);
  puts_(b, "\",");
  if (it->ns != NULL) { /* tritonserver's label, with namespaces only */
    puts_(b, "namespace=\"");
    escaped(b, it->ns);
    puts_(b, "\",");
  }
  if (mid != NULL) {
    puts_(b, mid);
    puts_(b, ",");
  }
  puts_(b, "version=\"");
  escaped(b, it->d.version_string);
  puts_(b, "\"");
  if (tail != NULL) {
    puts_(b, ",");
    puts_(b, tail);
  }
  puts_(b, "} ");
}

static void value_u64(srv_metrics_buf_t *b, uint64_t v) {
  srv_metrics_buf_printf(b, "%llu\n", (unsigned long long)v);
}

/* A double as Prometheus reads it (NaN and infinities by name). */
static void value_f64(srv_metrics_buf_t *b, double v) {
  if (v != v)
    puts_(b, "NaN\n");
  else
    srv_metrics_buf_printf(b, "%.15g\n", v);
}

/* key="<v>" into label: v as the shorter of %.15g and %.17g that reads
 * back as v, so the label names the configured quantile or bucket exactly
 * (%g keeps 6 digits: a bucket of 1048575 would read 1.04858e+06). */
static void number_label(char *label, size_t size, const char *key, double v) {
  char num[32];
  snprintf(num, sizeof num, "%.15g", v);
  if (strtod(num, NULL) != v) snprintf(num, sizeof num, "%.17g", v);
  snprintf(label, size, "%s=\"%s\"", key, num);
}

/* ---- the model families ---- */

typedef struct {
  item_t *items;
  size_t count;
  const srv_metrics_config_t *cfg;
} page_t;

typedef uint64_t (*reader_t)(const srv_stats_totals_t *t);

static uint64_t rd_success(const srv_stats_totals_t *t) { return t->success.count; }
static uint64_t rd_infer(const srv_stats_totals_t *t) { return t->inference_count; }
static uint64_t rd_exec(const srv_stats_totals_t *t) { return t->execution_count; }
static uint64_t rd_request_us(const srv_stats_totals_t *t) {
  return t->success.ns / 1000;
}
static uint64_t rd_queue_us(const srv_stats_totals_t *t) { return t->queue.ns / 1000; }
static uint64_t rd_input_us(const srv_stats_totals_t *t) {
  return t->compute_input.ns / 1000;
}
static uint64_t rd_infer_us(const srv_stats_totals_t *t) {
  return t->compute_infer.ns / 1000;
}
static uint64_t rd_output_us(const srv_stats_totals_t *t) {
  return t->compute_output.ns / 1000;
}
/* Clamped at 0 by srv_stats_totals. */
static uint64_t rd_pending(const srv_stats_totals_t *t) { return t->pending; }

/* tritonserver's per-model families with one series each, in its order. */
typedef struct {
  const char *name, *type, *help;
  reader_t read;
} simple_t;

static void simple_family(srv_metrics_buf_t *b, const page_t *p, const simple_t *f) {
  head(b, f->name, f->type, f->help);
  for (size_t i = 0; i < p->count; i++) {
    series(b, f->name, "", &p->items[i], NULL, NULL);
    value_u64(b, f->read(&p->items[i].t));
  }
}

/* Triton's reasons. OTHER is what fail holds beyond the counted ones, so
 * the reasons always add up to the failures ModelStatistics reports. */
static void failure_family(srv_metrics_buf_t *b, const page_t *p) {
  static const char *const labels[SRV_FAIL_COUNTED] = {
      [SRV_FAIL_REJECTED] = "reason=\"REJECTED\"",
      [SRV_FAIL_CANCELED] = "reason=\"CANCELED\"",
      [SRV_FAIL_BACKEND] = "reason=\"BACKEND\""};
  const char *name = "nv_inference_request_failure";
  head(b, name, "counter", "Number of failed inference requests, all batch sizes");
  for (size_t i = 0; i < p->count; i++) {
    const srv_stats_totals_t *t = &p->items[i].t;
    uint64_t fail = t->fail.count, counted = 0;
    for (int r = 0; r < SRV_FAIL_COUNTED; r++) {
      uint64_t n = t->fail_reason[r];
      counted += n;
      series(b, name, "", &p->items[i], labels[r], NULL);
      value_u64(b, n);
    }
    series(b, name, "", &p->items[i], "reason=\"OTHER\"", NULL);
    value_u64(b, fail > counted ? fail - counted : 0);
  }
}

static const simple_t kDurations[] = {
    {"nv_inference_request_duration_us", "counter",
     "Cumulative inference request duration in microseconds (includes cached requests)",
     rd_request_us},
    {"nv_inference_queue_duration_us", "counter",
     "Cumulative inference queuing duration in microseconds (includes cached requests)",
     rd_queue_us},
    {"nv_inference_compute_input_duration_us", "counter",
     "Cumulative compute input duration in microseconds (does not include cached "
     "requests)",
     rd_input_us},
    {"nv_inference_compute_infer_duration_us", "counter",
     "Cumulative compute inference duration in microseconds (does not include cached "
     "requests)",
     rd_infer_us},
    {"nv_inference_compute_output_duration_us", "counter",
     "Cumulative inference compute output duration in microseconds (does not include "
     "cached requests)",
     rd_output_us},
};

static const simple_t kCounts[] = {
    {"nv_inference_count", "counter",
     "Number of inferences performed (does not include cached requests)", rd_infer},
    {"nv_inference_exec_count", "counter",
     "Number of model executions performed (does not include cached requests)", rd_exec},
};

static const simple_t kSuccess = {"nv_inference_request_success", "counter",
                                  "Number of successful inference requests, all batch "
                                  "sizes",
                                  rd_success};
static const simple_t kPending = {
    "nv_inference_pending_request_count", "gauge",
    "Instantaneous number of pending requests awaiting execution per-model.", rd_pending};

/* ---- the response cache ---- */

static uint64_t rd_cache_hits(const srv_stats_totals_t *t) { return t->cache_hit.count; }
static uint64_t rd_cache_misses(const srv_stats_totals_t *t) {
  return t->cache_miss.count;
}
static uint64_t rd_cache_hit_us(const srv_stats_totals_t *t) {
  return t->cache_hit.ns / 1000;
}
static uint64_t rd_cache_miss_us(const srv_stats_totals_t *t) {
  return t->cache_miss.ns / 1000;
}

/* tritonserver's names and texts; as there, only models that use the
 * cache have these series, and a page without such a model has none. */
static const simple_t kCache[] = {
    {"nv_cache_num_hits_per_model", "counter", "Number of cache hits per model",
     rd_cache_hits},
    {"nv_cache_num_misses_per_model", "counter", "Number of cache misses per model",
     rd_cache_misses},
    {"nv_cache_hit_duration_per_model", "counter",
     "Total cache hit duration per model, in microseconds", rd_cache_hit_us},
    {"nv_cache_miss_duration_per_model", "counter",
     "Total cache miss (insert+lookup) duration per model, in microseconds",
     rd_cache_miss_us},
};

static void cache_families(srv_metrics_buf_t *b, const page_t *p) {
  size_t users = 0;
  for (size_t i = 0; i < p->count; i++) users += p->items[i].s->cache_enabled;
  if (users == 0) return;
  for (size_t f = 0; f < sizeof kCache / sizeof kCache[0]; f++) {
    head(b, kCache[f].name, kCache[f].type, kCache[f].help);
    for (size_t i = 0; i < p->count; i++) {
      if (!p->items[i].s->cache_enabled) continue;
      series(b, kCache[f].name, "", &p->items[i], NULL, NULL);
      value_u64(b, kCache[f].read(&p->items[i].t));
    }
  }
}

static void counter_families(srv_metrics_buf_t *b, const page_t *p) {
  simple_family(b, p, &kSuccess);
  failure_family(b, p);
  for (size_t i = 0; i < sizeof kCounts / sizeof kCounts[0]; i++)
    simple_family(b, p, &kCounts[i]);
  if (p->cfg->counter_latencies)
    for (size_t i = 0; i < sizeof kDurations / sizeof kDurations[0]; i++)
      simple_family(b, p, &kDurations[i]);
  simple_family(b, p, &kPending);
}

/* ---- latency summaries and histograms ---- */

static const struct {
  const char *summary, *histogram, *what;
  reader_t sum_us;
} kLatency[SRV_LAT_KINDS] = {
    [SRV_LAT_REQUEST] = {"nv_inference_request_summary_us",
                         "nereid_inference_request_histogram_us",
                         "inference request duration in microseconds (includes cached "
                         "requests)",
                         rd_request_us},
    [SRV_LAT_QUEUE] = {"nv_inference_queue_summary_us",
                       "nereid_inference_queue_histogram_us",
                       "inference queuing duration in microseconds (includes cached "
                       "requests)",
                       rd_queue_us},
    [SRV_LAT_COMPUTE_INPUT] = {"nv_inference_compute_input_summary_us",
                               "nereid_inference_compute_input_histogram_us",
                               "compute input duration in microseconds (does not include "
                               "cached requests)",
                               rd_input_us},
    [SRV_LAT_COMPUTE_INFER] = {"nv_inference_compute_infer_summary_us",
                               "nereid_inference_compute_infer_histogram_us",
                               "compute inference duration in microseconds (does not "
                               "include cached requests)",
                               rd_infer_us},
    [SRV_LAT_COMPUTE_OUTPUT] = {"nv_inference_compute_output_summary_us",
                                "nereid_inference_compute_output_histogram_us",
                                "compute output duration in microseconds (does not "
                                "include cached requests)",
                                rd_output_us},
};

/* One snapshot per series, so its count, quantiles and buckets agree. */
static uint64_t snapshot(srv_stats_t *s, srv_latency_kind_t k, uint64_t *counts) {
  return srv_stats_latency_snapshot(s, k, counts);
}

/* HELP and TYPE of a latency family ("Summary of ...", "Histogram of ..."). */
static void latency_head(srv_metrics_buf_t *b, const char *name, const char *type,
                         const char *kind, srv_latency_kind_t k) {
  char help[160];
  snprintf(help, sizeof help, "%s of %s", kind, kLatency[k].what);
  head(b, name, type, help);
}

/* A series' _count (of its snapshot) and _sum (the duration counter). */
static void count_and_sum(srv_metrics_buf_t *b, const char *name, const item_t *it,
                          srv_latency_kind_t k, uint64_t total) {
  series(b, name, "_count", it, NULL, NULL);
  value_u64(b, total);
  series(b, name, "_sum", it, NULL, NULL);
  value_u64(b, kLatency[k].sum_us(&it->t));
}

static void summary_family(srv_metrics_buf_t *b, const page_t *p, srv_latency_kind_t k,
                           uint64_t *counts) {
  const char *name = kLatency[k].summary;
  latency_head(b, name, "summary", "Summary", k);
  for (size_t i = 0; i < p->count; i++) {
    const item_t *it = &p->items[i];
    uint64_t total = snapshot(it->s, k, counts);
    count_and_sum(b, name, it, k, total);
    for (uint32_t q = 0; q < p->cfg->quantile_count; q++) {
      char label[48];
      number_label(label, sizeof label, "quantile", p->cfg->quantiles[q].quantile);
      series(b, name, "", it, NULL, label);
      /* prometheus-cpp's summaries say NaN with no observation. */
      value_f64(b, total == 0
                       ? 0.0 / 0.0
                       : srv_hist_quantile(counts, total, p->cfg->quantiles[q].quantile));
    }
  }
}

static void histogram_family(srv_metrics_buf_t *b, const page_t *p, srv_latency_kind_t k,
                             uint64_t *counts) {
  const char *name = kLatency[k].histogram;
  latency_head(b, name, "histogram", "Histogram", k);
  for (size_t i = 0; i < p->count; i++) {
    const item_t *it = &p->items[i];
    uint64_t total = snapshot(it->s, k, counts);
    count_and_sum(b, name, it, k, total);
    for (uint32_t j = 0; j < p->cfg->bucket_count; j++) {
      char label[48];
      number_label(label, sizeof label, "le", p->cfg->buckets[j]);
      series(b, name, "_bucket", it, NULL, label);
      value_u64(b, srv_hist_count_le(counts, p->cfg->buckets[j]));
    }
    series(b, name, "_bucket", it, NULL, "le=\"+Inf\"");
    value_u64(b, total);
  }
}

static void latency_families(srv_metrics_buf_t *b, const page_t *p) {
  if (!p->cfg->summary_latencies && !p->cfg->histogram_latencies) return;
  uint64_t *counts = malloc(SRV_HIST_BUCKETS * sizeof *counts);
  if (counts == NULL) SRV_FATAL("out of memory rendering metrics");
  for (int k = 0; k < SRV_LAT_KINDS; k++) {
    if (p->cfg->summary_latencies) summary_family(b, p, (srv_latency_kind_t)k, counts);
    if (p->cfg->histogram_latencies)
      histogram_family(b, p, (srv_latency_kind_t)k, counts);
  }
  free(counts);
}

/* ---- Nereid's own: queue depth, ensemble steps ---- */

static void queue_family(srv_metrics_buf_t *b, const page_t *p) {
  const char *name = "nereid_queue_depth";
  bool any = false;
  for (size_t i = 0; i < p->count && !any; i++) any = p->items[i].s->queue_levels > 0;
  if (!any) return;
  head(b, name, "gauge",
       "Requests waiting in the model's scheduler queue, per priority level");
  for (size_t i = 0; i < p->count; i++) {
    srv_stats_t *s = p->items[i].s;
    for (uint32_t l = 0; l < s->queue_levels; l++) {
      char label[40];
      snprintf(label, sizeof label, "priority=\"%u\"", l + 1);
      series(b, name, "", &p->items[i], label, NULL);
      value_u64(b, p->items[i].depth[l]);
    }
  }
}

/* The sequence batcher's gauges (ModelStatistics' sequence_stats). */
static void sequence_family(srv_metrics_buf_t *b, const page_t *p, bool backlog) {
  const char *name = backlog ? "nereid_sequence_backlog" : "nereid_sequence_active";
  head(b, name, "gauge",
       backlog ? "Sequences waiting for a free sequence slot"
               : "Sequences holding a sequence slot");
  for (size_t i = 0; i < p->count; i++) {
    srv_sequence_stats_t *q = p->items[i].s->sequences;
    if (q == NULL) continue;
    series(b, name, "", &p->items[i], NULL, NULL);
    value_u64(b, srv_stat_load(backlog ? &q->backlog : &q->active));
  }
}

static void sequence_families(srv_metrics_buf_t *b, const page_t *p) {
  bool any = false;
  for (size_t i = 0; i < p->count && !any; i++) any = p->items[i].s->sequences != NULL;
  if (!any) return;
  sequence_family(b, p, false);
  sequence_family(b, p, true);
}

/* step="<i>",step_model="...",step_version="..." (escaped) into *lb. */
static void step_labels(srv_metrics_buf_t *lb, uint32_t i, const srv_step_stats_t *st) {
  lb->len = 0;
  srv_metrics_buf_printf(lb, "step=\"%u\",step_model=\"", i);
  escaped(lb, st->model_name);
  puts_(lb, "\",step_version=\"");
  escaped(lb, st->model_version);
  puts_(lb, "\"");
}

static void step_family(srv_metrics_buf_t *b, const page_t *p, bool time) {
  const char *name =
      time ? "nereid_ensemble_step_duration_us" : "nereid_ensemble_step_count";
  head(b, name, "counter",
       time ? "Cumulative time of an ensemble's step, from sending each step request to "
              "its last response, in microseconds"
            : "Number of step requests an ensemble's step has completed");
  srv_metrics_buf_t lb = {0};
  for (size_t i = 0; i < p->count; i++) {
    srv_stats_t *s = p->items[i].s;
    for (uint32_t k = 0; k < s->step_count; k++) {
      step_labels(&lb, k, &s->steps[k]);
      series(b, name, "", &p->items[i], lb.data, NULL);
      srv_duration_t *d = &s->steps[k].time;
      value_u64(b, time ? srv_stat_load(&d->ns) / 1000 : srv_stat_load(&d->count));
    }
  }
  srv_metrics_buf_free(&lb);
}

static void step_families(srv_metrics_buf_t *b, const page_t *p) {
  bool any = false;
  for (size_t i = 0; i < p->count && !any; i++) any = p->items[i].s->step_count > 0;
  if (!any) return;
  step_family(b, p, false);
  step_family(b, p, true);
}

/* ---- the host, the custom metrics ---- */

static void cpu_families(srv_metrics_buf_t *b, const srv_metrics_cpu_t *cpu) {
  head(b, "nv_cpu_utilization", "gauge", "CPU utilization rate [0.0 - 1.0]");
  puts_(b, "nv_cpu_utilization ");
  value_f64(b, srv_metrics_cpu_utilization(cpu));
  head(b, "nv_cpu_memory_total_bytes", "gauge", "CPU total memory (RAM), in bytes");
  puts_(b, "nv_cpu_memory_total_bytes ");
  value_u64(b, srv_metrics_cpu_mem_total(cpu));
  head(b, "nv_cpu_memory_used_bytes", "gauge", "CPU used memory (RAM), in bytes");
  puts_(b, "nv_cpu_memory_used_bytes ");
  value_u64(b, srv_metrics_cpu_mem_used(cpu));
}

static void custom_families(srv_metrics_buf_t *b) {
  char *text = NULL;
  size_t len = 0;
  TRITONSERVER_Error *err = api_metrics_render(&text, &len);
  if (err != NULL)
    SRV_FATAL("rendering custom metrics: %s", TRITONSERVER_ErrorMessage(err));
  srv_metrics_buf_append(b, text, len);
  free(text);
}

/* ---- the page ---- */

/* The queue depths, read before the pending gauge's slots: acquire pairs
 * with the queue's release store, so each request counted in a depth has
 * its +1 in the sum read next (scheduler.c adds it before the send), and
 * one page never shows requests queued but not pending. */
static uint64_t *depth_snapshot(const srv_stats_t *s) {
  if (s->queue_levels == 0) return NULL;
  uint64_t *d = malloc(s->queue_levels * sizeof *d);
  if (d == NULL) SRV_FATAL("out of memory rendering metrics");
  for (uint32_t l = 0; l < s->queue_levels; l++)
    d[l] = atomic_load_explicit(&s->queue_depth[l], memory_order_acquire);
  return d;
}

/* Every ready version, referenced, in the view's order (names sorted,
 * versions ascending). The read section ends before any rendering. */
static size_t collect(srv_server_t *srv, item_t **out) {
  const srv_registry_view_t *v = srv_registry_view_begin(srv->registry);
  size_t n = 0, cap = 0;
  item_t *items = NULL;
  for (size_t i = 0; i < srv_registry_view_count(v); i++) {
    const srv_registry_entry_t *e = srv_registry_view_at(v, i);
    for (size_t j = 0; j < e->version_count; j++) {
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        items = realloc(items, cap * sizeof *items);
        if (items == NULL) SRV_FATAL("out of memory rendering metrics");
      }
      srv_model_t *m = e->versions[j];
      srv_model_ref(m);
      items[n].m = m;
      srv_model_describe(m, &items[n].d);
      items[n].s = srv_model_stats(m);
      items[n].depth = depth_snapshot(items[n].s);
      srv_stats_totals(items[n].s, &items[n].t);
      items[n].ns = e->ns != NULL ? srv_strdup(e->ns) : NULL;
      n++;
    }
  }
  srv_registry_view_end(srv->registry);
  *out = items;
  return n;
}

void srv_metrics_render(srv_server_t *srv, const srv_metrics_config_t *cfg,
                        const srv_metrics_cpu_t *cpu, srv_metrics_buf_t *out) {
  page_t p = {.cfg = cfg};
  p.count = collect(srv, &p.items);
  reserve(out, 0);
  out->data[out->len] = '\0';
  if (p.count > 0) {
    counter_families(out, &p);
    cache_families(out, &p);
    latency_families(out, &p);
    queue_family(out, &p);
    sequence_families(out, &p);
    step_families(out, &p);
  }
  if (cpu != NULL) cpu_families(out, cpu);
  custom_families(out);
  for (size_t i = 0; i < p.count; i++) {
    srv_model_unref(p.items[i].m);
    free(p.items[i].ns);
    free(p.items[i].depth);
  }
  free(p.items);
}
