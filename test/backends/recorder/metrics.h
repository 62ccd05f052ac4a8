/* The recorder's custom metrics (model parameter metric_tag): a counter and
 * a gauge incremented per request and a gauge set per batch, made through
 * TRITONSERVER_MetricFamilyNew / MetricNew, so server tests can read a
 * backend's own metrics on /metrics. Made and freed on the loading threads
 * (ModelInitialize, ModelFinalize); updated from any execute thread (the
 * metric calls are lock-free). */
#ifndef NEREID_TEST_BACKENDS_RECORDER_METRICS_H
#define NEREID_TEST_BACKENDS_RECORDER_METRICS_H

#include <stdint.h>

#include "triton/core/tritonserver.h"

/* Family names and the counter's HELP text, which holds a backslash and a
 * newline so a test can see them escaped. */
#define REC_METRIC_REQUESTS "recorder_requests"
#define REC_METRIC_REQUESTS_GAUGE "recorder_requests_gauge"
#define REC_METRIC_LAST_BATCH "recorder_last_batch_requests"
#define REC_METRIC_REQUESTS_HELP "Requests a recorder model received\nper model (test\\recorder)"

typedef struct {
  TRITONSERVER_MetricFamily *families[3]; /* NULL when the model has no metrics */
  TRITONSERVER_Metric *requests, *requests_gauge, *last_batch;
} rec_metrics_t;

/** Makes the metrics of one model version, labels model=<model> and
 *  tag=<tag>; with tag NULL, makes none (every call below does nothing).
 *  On error nothing is left made. */
TRITONSERVER_Error *rec_metrics_init(rec_metrics_t *mx, const char *model,
                                     const char *tag);

/** One request received: the counter and the first gauge + 1. */
void rec_metrics_request(rec_metrics_t *mx);

/** A batch of `count` requests: the last-batch gauge set to count. */
void rec_metrics_batch(rec_metrics_t *mx, uint32_t count);

/** Deletes the metrics, then the family handles. */
void rec_metrics_free(rec_metrics_t *mx);

#endif
