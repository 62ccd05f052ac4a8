/* The recorder's custom metrics (see metrics.h). */
#include "test/backends/recorder/metrics.h"

#include <string.h>

#include "backends/common/error.h"

static const struct {
  const char *name, *help;
  TRITONSERVER_MetricKind kind;
} kFamilies[3] = {
    {REC_METRIC_REQUESTS, REC_METRIC_REQUESTS_HELP, TRITONSERVER_METRIC_KIND_COUNTER},
    {REC_METRIC_REQUESTS_GAUGE, "Requests a recorder model received, as a gauge",
     TRITONSERVER_METRIC_KIND_GAUGE},
    {REC_METRIC_LAST_BATCH, "Requests in the recorder model's last batch",
     TRITONSERVER_METRIC_KIND_GAUGE},
};

TRITONSERVER_Error *rec_metrics_init(rec_metrics_t *mx, const char *model,
                                     const char *tag) {
  memset(mx, 0, sizeof *mx);
  if (tag == NULL) return NULL;
  const TRITONSERVER_Parameter *labels[2] = {
      TRITONSERVER_ParameterNew("model", TRITONSERVER_PARAMETER_STRING, model),
      TRITONSERVER_ParameterNew("tag", TRITONSERVER_PARAMETER_STRING, tag)};
  TRITONSERVER_Metric **metrics[3] = {&mx->requests, &mx->requests_gauge,
                                      &mx->last_batch};
  TRITONSERVER_Error *err = NULL;
  for (int i = 0; i < 3 && err == NULL; i++) {
    err = TRITONSERVER_MetricFamilyNew(&mx->families[i], kFamilies[i].kind,
                                       kFamilies[i].name, kFamilies[i].help);
    if (err == NULL) err = TRITONSERVER_MetricNew(metrics[i], mx->families[i], labels, 2);
  }
  for (int i = 0; i < 2; i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter *)labels[i]);
  if (err != NULL) rec_metrics_free(mx);
  return err;
}

void rec_metrics_request(rec_metrics_t *mx) {
  if (mx->requests == NULL) return;
  BK_LOG_IF_ERROR(TRITONSERVER_MetricIncrement(mx->requests, 1), "recorder: counter");
  BK_LOG_IF_ERROR(TRITONSERVER_MetricIncrement(mx->requests_gauge, 1), "recorder: gauge");
}

void rec_metrics_batch(rec_metrics_t *mx, uint32_t count) {
  if (mx->last_batch == NULL) return;
  BK_LOG_IF_ERROR(TRITONSERVER_MetricSet(mx->last_batch, count), "recorder: gauge");
}

void rec_metrics_free(rec_metrics_t *mx) {
  TRITONSERVER_Metric *metrics[3] = {mx->requests, mx->requests_gauge, mx->last_batch};
  for (int i = 0; i < 3; i++) {
    if (metrics[i] != NULL)
      BK_LOG_IF_ERROR(TRITONSERVER_MetricDelete(metrics[i]), "recorder: metric");
    if (mx->families[i] != NULL)
      BK_LOG_IF_ERROR(TRITONSERVER_MetricFamilyDelete(mx->families[i]),
                      "recorder: metric family");
  }
  memset(mx, 0, sizeof *mx);
}
