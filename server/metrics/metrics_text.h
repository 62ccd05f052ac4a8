/* The /metrics page: Prometheus text exposition format 0.0.4 of every
 * loaded model version's statistics under tritonserver's nv_* names, with
 * Nereid's own families (queue depth, ensemble steps, latency histograms),
 * the host's CPU and memory, and the custom metrics that backends create.
 * Pure rendering: the HTTP server calls it on its loop thread; any thread
 * may, since everything it reads is lock-free (registry views, relaxed
 * counters) except the custom metrics' own mutex. See metrics.md. */
#ifndef NEREID_SERVER_METRICS_METRICS_TEXT_H
#define NEREID_SERVER_METRICS_METRICS_TEXT_H

#include <stddef.h>

#include "server/core/core.h"
#include "server/metrics/cpu_stats.h"
#include "server/metrics/metrics_config.h"

/** A growable text buffer. Zero-initialize it; `data` is NUL-terminated
 *  once anything was appended (NULL before); free with srv_metrics_buf_free.
 *  The caller may reset `len` to 0 to reuse the memory for the next page. */
typedef struct {
  char *data;
  size_t len, cap;
} srv_metrics_buf_t;

void srv_metrics_buf_append(srv_metrics_buf_t *b, const char *s, size_t n);
void srv_metrics_buf_printf(srv_metrics_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void srv_metrics_buf_free(srv_metrics_buf_t *b);

/** Appends the whole page to *out: per loaded model version (labels
 *  `model`, `version`) the nv_inference_* families that `cfg` turns on,
 *  nv_inference_pending_request_count, nereid_queue_depth and
 *  nereid_ensemble_step_*; then nv_cpu_* from `cpu` (NULL: CPU metrics off);
 *  then the custom metrics (api_metrics_render). Models are referenced for
 *  the time of the rendering, outside any registry read section, so a long
 *  page never delays the registry's reclamation; dropping the last
 *  reference of an unloaded model only sends the repository a message. Any
 *  thread, while the core runs (from srv_core_start until the frontends
 *  are shut down, before srv_core_stop_until): the caller's server must
 *  stop calling before the core stops. Never fails (out of memory is
 *  fatal). */
void srv_metrics_render(srv_server_t *srv, const srv_metrics_config_t *cfg,
                        const srv_metrics_cpu_t *cpu, srv_metrics_buf_t *out);

#endif
