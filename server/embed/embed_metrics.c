/* TRITONSERVER_ServerMetrics: the page the /metrics endpoint serves
 * (metrics/metrics_text.h), as a TRITONSERVER_Metrics. The CPU and GPU
 * figures come from one sampler for the process (the host's CPU and GPUs
 * are the same for every server), sampled at a call when the metrics
 * interval has passed, as the endpoint samples at a scrape. Any thread:
 * the samplers have their own lock; models' metrics render lock-free. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/api/metrics_render.h"
#include "server/api/error_status.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/embed/embed.h"
#include "server/metrics/cpu_stats.h"
#include "server/metrics/gpu_stats.h"
#include "server/metrics/metrics_config.h"
#include "server/metrics/metrics_text.h"

static pthread_mutex_t cpu_lock = PTHREAD_MUTEX_INITIALIZER;
static srv_metrics_cpu_t cpu; /* cpu_lock's while sampling; published values any */
static bool cpu_started;
static uint64_t cpu_sampled_ns;
/* NVML, opened at the first call that wants GPU metrics and kept for the
 * process's life (as the CUDA runtime is); cpu_lock's. */
static srv_metrics_gpu_t gpu;
static bool gpu_tried, gpu_on;
static uint64_t gpu_sampled_ns;

/* Appends the GPU families (none without NVML or a GPU). */
static void gpu_render(const srv_options_t *o, srv_metrics_buf_t *page) {
  pthread_mutex_lock(&cpu_lock);
  uint64_t now = act_now_ns();
  if (!gpu_tried) {
    gpu_tried = true;
    gpu_on = srv_metrics_gpu_init(&gpu);
    gpu_sampled_ns = now;
  } else if (gpu_on && now - gpu_sampled_ns >= (uint64_t)o->metrics_interval_ms * 1000000u) {
    srv_metrics_gpu_sample(&gpu);
    gpu_sampled_ns = now;
  }
  if (gpu_on) srv_metrics_gpu_render(&gpu, page);
  pthread_mutex_unlock(&cpu_lock);
}

static const srv_metrics_cpu_t *cpu_sample(const srv_options_t *o) {
  pthread_mutex_lock(&cpu_lock);
  uint64_t now = act_now_ns();
  if (!cpu_started) {
    srv_metrics_cpu_init(&cpu);
    cpu_started = true;
    cpu_sampled_ns = now;
  } else if (now - cpu_sampled_ns >= (uint64_t)o->metrics_interval_ms * 1000000u) {
    srv_metrics_cpu_sample(&cpu);
    cpu_sampled_ns = now;
  }
  pthread_mutex_unlock(&cpu_lock);
  return &cpu;
}

/* The --metrics-config settings; checked when they were set (flags at
 * start-up, TRITONSERVER_ServerOptionsSetMetricsConfig). */
static srv_status_t *config_read(const srv_options_t *o, srv_metrics_config_t *cfg) {
  srv_metrics_config_init(cfg);
  for (size_t i = 0; i < o->metrics_config_count; i++) {
    srv_status_t *st = srv_metrics_config_parse(cfg, o->metrics_configs[i]);
    if (st != NULL) return st;
  }
  return NULL;
}

/* With metrics off (TRITONSERVER_ServerOptionsSetMetrics(false),
 * --allow-metrics=false) the page is empty. */
TRITONSERVER_Error *TRITONSERVER_ServerMetrics(TRITONSERVER_Server *server,
                                               TRITONSERVER_Metrics **metrics) {
  const char *fn = "TRITONSERVER_ServerMetrics";
  if (metrics == NULL) return SRV_EMBED_NULL(fn, "metrics");
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  const srv_options_t *o = srv->options;
  srv_metrics_buf_t page = {0};
  if (o->allow_metrics) {
    srv_metrics_config_t cfg;
    srv_status_t *st = config_read(o, &cfg);
    if (st != NULL) {
      srv_embed_leave(e);
      return api_error_from_status(st);
    }
    srv_metrics_render(srv, &cfg, o->allow_cpu_metrics ? cpu_sample(o) : NULL, &page);
    if (o->allow_gpu_metrics) gpu_render(o, &page);
  }
  srv_embed_leave(e);
  if (page.data == NULL) page.data = srv_strdup(""); /* nothing rendered */
  *metrics = api_metrics_new_take(page.data, page.len);
  return NULL;
}
