/* The --metrics-config settings: tritonserver's `<key>=<value>` syntax,
 * one setting per flag, with its keys and Nereid's own. Parsed by the main
 * thread before the metrics server starts; read-only afterwards. */
#ifndef NEREID_SERVER_METRICS_METRICS_CONFIG_H
#define NEREID_SERVER_METRICS_METRICS_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "server/common/status.h"

#define SRV_METRICS_QUANTILES_MAX 16
#define SRV_METRICS_BUCKETS_MAX 64

typedef struct {
  double quantile; /* in [0, 1] */
  double error;    /* in [0, 1]: Triton's allowed error, printed as given */
} srv_metrics_quantile_t;

typedef struct {
  bool counter_latencies; /* nv_inference_*_duration_us (default true) */
  bool summary_latencies; /* nv_inference_*_summary_us (default false) */
  srv_metrics_quantile_t quantiles[SRV_METRICS_QUANTILES_MAX];
  uint32_t quantile_count;
  bool histogram_latencies; /* nereid_inference_*_histogram_us (default false) */
  double buckets[SRV_METRICS_BUCKETS_MAX]; /* ascending upper bounds, us */
  uint32_t bucket_count;
} srv_metrics_config_t;

/** Triton's defaults: counters on, summaries off with quantiles
 *  0.5:0.05,0.9:0.01,0.95:0.001,0.99:0.001; Nereid's histograms off with
 *  buckets 100,250,500,1000,2500,5000,10000,25000,50000,100000,250000,
 *  500000,1000000 us. */
void srv_metrics_config_init(srv_metrics_config_t *c);

/** Applies one `--metrics-config` value, `key=value`:
 *    counter_latencies=true|false, summary_latencies=true|false,
 *    summary_quantiles=<q>:<error>[,<q>:<error>...] (each in [0, 1]),
 *    histogram_latencies=true|false,
 *    histogram_buckets=<us>[,<us>...] (finite, > 0, strictly ascending).
 *  A later value of a key replaces the earlier one. On error (INVALID_ARGUMENT,
 *  naming the setting and what is wrong) *c is unchanged. */
srv_status_t *srv_metrics_config_parse(srv_metrics_config_t *c, const char *setting);

#endif
