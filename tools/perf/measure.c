/* The measurement of one level (see measure.h). */
#include "tools/perf/measure.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What one window saw, client and server side. */
typedef struct {
  perf_window_t w;
  uint64_t elapsed_ns;
  bool server_ok;
  perf_server_stats_t server;
} window_rec_t;

static double window_rate(const window_rec_t *r) {
  return r->elapsed_ns ? (double)r->w.completed * 1e9 / (double)r->elapsed_ns : 0;
}

static double window_p50(const window_rec_t *r) {
  return (double)perf_hist_percentile(&r->w.latency, 50);
}

/* Each of the last windows within pct% of their mean, for both values. */
static bool stable(window_rec_t *const *last, double pct) {
  double rate = 0, p50 = 0;
  for (int k = 0; k < PERF_STABLE_WINDOWS; k++) {
    rate += window_rate(last[k]) / PERF_STABLE_WINDOWS;
    p50 += window_p50(last[k]) / PERF_STABLE_WINDOWS;
  }
  for (int k = 0; k < PERF_STABLE_WINDOWS; k++) {
    if (fabs(window_rate(last[k]) - rate) > rate * pct / 100) return false;
    if (fabs(window_p50(last[k]) - p50) > p50 * pct / 100) return false;
  }
  return true;
}

static void level_name(const perf_load_config_t *cfg, char *buf, size_t cap) {
  if (cfg->concurrency > 0)
    snprintf(buf, cap, "concurrency %u", cfg->concurrency);
  else
    snprintf(buf, cap, "request rate %g/s", cfg->rate);
}

static void progress(const perf_options_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void progress(const perf_options_t *o, const char *fmt, ...) {
  if (!o->progress) return;
  char line[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\r%-79.79s", line);
  fflush(stderr);
}

/* Sleeps until `until`, refreshing the progress line on the way. */
static void wait_window(const perf_options_t *o, const char *level, unsigned trial,
                        uint64_t start, uint64_t until) {
  for (;;) {
    uint64_t now = perf_now_ns();
    if (now >= until) return;
    progress(o, "nereid-perf: %s: window %u/%u, %.1f s", level, trial + 1, o->max_trials,
             (double)(now - start) / 1e9);
    uint64_t next = until - now > 500000000u ? now + 500000000u : until;
    struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
  }
}

static bool server_fetch(const perf_options_t *o, grpc_channel *control,
                         perf_server_stats_t *out, perf_result_t *res) {
  perf_err_t err;
  if (perf_server_stats_fetch(control, o->model, o->version, o->timeout_ms, out, &err))
    return true;
  snprintf(res->server_error, sizeof res->server_error, "%s", err.msg);
  return false;
}

static double per_request_us(const perf_duration_t *d) {
  return d->count ? (double)d->ns / (double)d->count / 1000.0 : 0;
}

/* The result from the last n windows (oldest first). */
static void summarize(window_rec_t *const *last, unsigned n, perf_result_t *res) {
  perf_window_t *all = perf_malloc(sizeof *all);
  perf_window_init(all);
  res->server_ok = n > 0;
  memset(&res->server, 0, sizeof res->server);
  uint64_t elapsed = 0;
  for (unsigned k = 0; k < n; k++) {
    perf_window_merge(all, &last[k]->w);
    elapsed += last[k]->elapsed_ns;
    res->server_ok = res->server_ok && last[k]->server_ok;
    if (last[k]->server_ok) perf_server_stats_add(&res->server, &last[k]->server);
  }
  const perf_hist_t *h = &all->latency;
  res->elapsed_s = (double)elapsed / 1e9;
  res->completed = all->completed;
  res->responses = all->responses;
  res->sequences = all->sequences;
  res->infer_per_s = elapsed ? (double)all->completed / res->elapsed_s : 0;
  res->responses_per_s = elapsed ? (double)all->responses / res->elapsed_s : 0;
  res->sequences_per_s = elapsed ? (double)all->sequences / res->elapsed_s : 0;
  res->avg_us = perf_hist_mean(h) / 1000.0;
  res->min_us = h->count ? (double)h->min_ns / 1000.0 : 0;
  res->max_us = (double)h->max_ns / 1000.0;
  res->p50_us = (double)perf_hist_percentile(h, 50) / 1000.0;
  res->p90_us = (double)perf_hist_percentile(h, 90) / 1000.0;
  res->p95_us = (double)perf_hist_percentile(h, 95) / 1000.0;
  res->p99_us = (double)perf_hist_percentile(h, 99) / 1000.0;
  res->send_late_avg_us =
      all->sends ? (double)all->send_late_sum_ns / (double)all->sends / 1000.0 : 0;
  res->send_late_max_us = (double)all->send_late_max_ns / 1000.0;
  res->queue_us = per_request_us(&res->server.queue);
  res->compute_input_us = per_request_us(&res->server.compute_input);
  res->compute_infer_us = per_request_us(&res->server.compute_infer);
  res->compute_output_us = per_request_us(&res->server.compute_output);
  res->overhead_us = res->avg_us - (res->queue_us + res->compute_input_us +
                                    res->compute_infer_us + res->compute_output_us);
  perf_window_reset(all);
  free(all);
}

/* Takes the workers' windows into rec (and the level's totals). */
static void window_close(perf_load_t *load, window_rec_t *rec, perf_window_t *level) {
  perf_load_collect(load, &rec->w);
  perf_window_merge(level, &rec->w);
}

/* A level in progress: the last windows (a ring) and the level's totals. */
typedef struct {
  const perf_options_t *o;
  grpc_channel *control;
  perf_load_t *load;
  char name[64];
  window_rec_t ring[PERF_STABLE_WINDOWS];
  perf_window_t level;
  perf_server_stats_t prev; /* at the start of the current window */
  bool prev_ok;
} level_run_t;

/* Windows until stable or --max-trials; returns how many. */
static unsigned run_windows(level_run_t *run, perf_result_t *res) {
  const perf_options_t *o = run->o;
  uint64_t start = perf_now_ns(), t_prev = start;
  unsigned trial = 0;
  for (; trial < o->max_trials && !res->stable; trial++) {
    wait_window(o, run->name, trial, start, t_prev + (uint64_t)o->interval_ms * 1000000u);
    window_rec_t *rec = &run->ring[trial % PERF_STABLE_WINDOWS];
    window_close(run->load, rec, &run->level);
    uint64_t now = perf_now_ns();
    rec->elapsed_ns = now - t_prev;
    t_prev = now;
    perf_server_stats_t cur;
    bool cur_ok = server_fetch(o, run->control, &cur, res);
    rec->server_ok = run->prev_ok && cur_ok;
    if (rec->server_ok) perf_server_stats_delta(&rec->server, &run->prev, &cur);
    run->prev = cur;
    run->prev_ok = cur_ok;
    progress(o, "nereid-perf: %s: window %u/%u: %.1f infer/s, p50 %.0f us, %llu errors",
             run->name, trial + 1, o->max_trials, window_rate(rec),
             window_p50(rec) / 1000, (unsigned long long)rec->w.failed);
    if (trial + 1 >= PERF_STABLE_WINDOWS) {
      window_rec_t *last[PERF_STABLE_WINDOWS];
      for (int k = 0; k < PERF_STABLE_WINDOWS; k++)
        last[k] = &run->ring[(trial + 1 + (unsigned)k) % PERF_STABLE_WINDOWS];
      res->stable = stable(last, o->stability_pct);
    }
  }
  return trial;
}

void perf_measure_level(const perf_options_t *o, const perf_load_config_t *cfg,
                        grpc_channel *control, perf_result_t *res) {
  memset(res, 0, sizeof *res);
  res->plan = *cfg;
  level_run_t *run = perf_calloc(1, sizeof *run); /* large: histograms */
  run->o = o;
  run->control = control;
  level_name(cfg, run->name, sizeof run->name);
  for (int k = 0; k < PERF_STABLE_WINDOWS; k++) perf_window_init(&run->ring[k].w);
  perf_window_init(&run->level);

  run->prev_ok = server_fetch(o, control, &run->prev, res);
  run->load = perf_load_start(cfg);
  unsigned trials = run_windows(run, res);
  progress(o, "nereid-perf: %s: stopping", run->name);
  perf_load_stop(run->load);
  window_rec_t *drain = perf_calloc(1, sizeof *drain);
  perf_window_init(&drain->w);
  window_close(run->load, drain, &run->level); /* what finished while draining */
  perf_load_free(run->load);
  if (o->progress) fprintf(stderr, "\r%79s\r", "");

  window_rec_t *last[PERF_STABLE_WINDOWS];
  unsigned n = trials < PERF_STABLE_WINDOWS ? trials : PERF_STABLE_WINDOWS;
  for (unsigned k = 0; k < n; k++)
    last[k] = &run->ring[(trials - n + k) % PERF_STABLE_WINDOWS];
  res->windows = trials;
  summarize(last, n, res);
  res->errors = run->level.failed;
  res->delayed = run->level.delayed;
  perf_errors_merge(&res->error_list, &run->level.errors);

  for (int k = 0; k < PERF_STABLE_WINDOWS; k++) perf_window_reset(&run->ring[k].w);
  perf_window_reset(&drain->w);
  perf_window_reset(&run->level);
  free(drain);
  free(run);
}

void perf_result_free(perf_result_t *res) { perf_errors_clear(&res->error_list); }
