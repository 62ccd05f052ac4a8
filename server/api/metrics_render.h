/* Prometheus text exposition (format 0.0.4) of every live metric family, and
 * TRITONSERVER_Metrics, the snapshot object TRITONSERVER_ServerMetrics hands
 * out. Any thread: rendering holds the metrics registry mutex while it walks
 * the families, and reads the values with relaxed atomics. */
#ifndef NEREID_SERVER_API_METRICS_RENDER_H
#define NEREID_SERVER_API_METRICS_RENDER_H

#include <stddef.h>

#include "triton/core/tritonserver.h"

/** Renders every family that has at least one series ("# HELP", "# TYPE",
 *  then one line per series; histograms as _bucket/_sum/_count), in creation
 *  order. '*out' gets a malloc'd, NUL-terminated text the caller frees with
 *  free(); '*len' its length. Fails only on NULL out-parameters. For the
 *  /metrics endpoint and TRITONSERVER_ServerMetrics. */
TRITONSERVER_Error *api_metrics_render(char **out, size_t *len);

/** A snapshot of all metrics, rendered now, for TRITONSERVER_ServerMetrics.
 *  The caller owns it (TRITONSERVER_MetricsDelete); TRITONSERVER_MetricsFormatted
 *  returns its text, which lives as long as the snapshot. Never NULL. */
TRITONSERVER_Metrics *api_metrics_snapshot_new(void);

/** A TRITONSERVER_Metrics holding `text` (`len` bytes, malloc'ed and
 *  NUL-terminated), which it takes: for TRITONSERVER_ServerMetrics, whose
 *  page has the server's statistics before the custom metrics. Never
 *  NULL. */
TRITONSERVER_Metrics *api_metrics_new_take(char *text, size_t len);

#endif
