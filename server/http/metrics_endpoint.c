/* GET /metrics (see metrics_endpoint.h). One loop thread serves it, so the
 * CPU and GPU samples and the page's buffer need no lock. Both are sampled
 * at a scrape when --metrics-interval-ms has passed since the last sample:
 * the CPU utilization over that interval, as Triton's is. */
#include "server/http/metrics_endpoint.h"

#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/http/exchange.h"
#include "server/http/http_server.h"
#include "server/metrics/cpu_stats.h"
#include "server/metrics/gpu_stats.h"
#include "server/metrics/metrics_config.h"
#include "server/metrics/metrics_text.h"

struct srv_metrics_endpoint {
  srv_server_t *srv;
  srv_http_t *http;
  srv_metrics_config_t config;
  srv_metrics_cpu_t cpu; /* the loop's */
  srv_metrics_gpu_t gpu; /* the loop's; empty when gpu_on is false */
  bool cpu_on, gpu_on;
  uint64_t sampled_ns;
};

static void page_free(void *arg) {
  srv_metrics_buf_t *b = arg;
  srv_metrics_buf_free(b);
  free(b);
}

static void serve(void *ctx, srv_http_exchange_t *x) {
  srv_metrics_endpoint_t *e = ctx;
  srv_http_bytes_t path = srv_http_path(x), method = srv_http_method(x);
  if (path.len != 8 || memcmp(path.base, "/metrics", 8) != 0) {
    srv_http_reply_error(x, 404, "Not Found");
    return;
  }
  if (method.len != 3 || memcmp(method.base, "GET", 3) != 0) {
    srv_http_reply_error(x, 405, "Method Not Allowed");
    return;
  }
  if (e->cpu_on || e->gpu_on) {
    uint64_t now = act_now_ns();
    uint64_t every = (uint64_t)e->srv->options->metrics_interval_ms * 1000000u;
    if (now - e->sampled_ns >= every) {
      if (e->cpu_on) srv_metrics_cpu_sample(&e->cpu);
      if (e->gpu_on) srv_metrics_gpu_sample(&e->gpu);
      e->sampled_ns = now;
    }
  }
  srv_metrics_buf_t *page = calloc(1, sizeof *page);
  if (page == NULL) SRV_FATAL("out of memory");
  srv_metrics_render(e->srv, &e->config, e->cpu_on ? &e->cpu : NULL, page);
  if (e->gpu_on) srv_metrics_gpu_render(&e->gpu, page);
  srv_http_bytes_t part = {page->data != NULL ? page->data : "", page->len};
  srv_http_body_t body = {&part, 1, page_free, page};
  srv_http_reply(x, 200, "text/plain; version=0.0.4; charset=utf-8", &body);
}

srv_status_t *srv_metrics_endpoint_start(srv_server_t *srv,
                                         srv_metrics_endpoint_t **out) {
  const srv_options_t *o = srv->options;
  srv_metrics_endpoint_t *e = calloc(1, sizeof *e);
  if (e == NULL) SRV_FATAL("out of memory");
  e->srv = srv;
  srv_metrics_config_init(&e->config);
  for (size_t i = 0; i < o->metrics_config_count; i++) {
    srv_status_t *st = srv_metrics_config_parse(&e->config, o->metrics_configs[i]);
    if (st != NULL) {
      free(e);
      return st;
    }
  }
  e->cpu_on = o->allow_cpu_metrics;
  /* The first sample; the utilization reads 0 until the next, one interval
   * later (a second sample now would publish the share of a few
   * microseconds, 0 or 1, for a whole interval). */
  if (e->cpu_on) srv_metrics_cpu_init(&e->cpu);
  /* No NVML or no GPU: no GPU families, as tritonserver without DCGM. */
  e->gpu_on = o->allow_gpu_metrics && srv_metrics_gpu_init(&e->gpu);
  e->sampled_ns = act_now_ns();
  srv_http_config_t cfg = {
      .name = "metrics",
      .address = o->metrics_address,
      .port = o->metrics_port,
      .threads = 1,
      .max_body = 4096,
      .handler = serve,
      .ctx = e,
  };
  srv_status_t *st = srv_http_start(&cfg, &e->http);
  if (st != NULL) {
    srv_metrics_gpu_free(&e->gpu);
    free(e);
    return st;
  }
  SRV_INFO("Started Metrics Service at %s:%d", o->metrics_address,
           srv_http_port(e->http));
  *out = e;
  return NULL;
}

void srv_metrics_endpoint_stop(srv_metrics_endpoint_t *e) {
  srv_http_close(e->http);
  if (srv_http_wait(e->http, srv_deadline_in_secs(5))) srv_http_free(e->http);
  srv_metrics_gpu_free(&e->gpu);
  free(e);
}
