/* The statistics entry points that backends call on their instance
 * threads: per-request and per-batch timings into the model's counters. */
#include <stdlib.h>

#include "server/api/error.h"
#include "server/core/model.h"
#include "server/log.h"

static uint64_t span(uint64_t start, uint64_t end) {
  return end > start ? end - start : 0;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  srv_stats_t *s = &instance->model->stats;
  /* A request's life: from its arrival at the server to its execution's end. */
  uint64_t total = span(request->state->request_start_ns, exec_end_ns);
  if (!success) {
    srv_duration_add(&s->fail, total);
    return NULL;
  }
  srv_duration_add(&s->success, total);
  srv_duration_add(&s->queue, span(request->queue_start_ns, exec_start_ns));
  srv_duration_add(&s->compute_input, span(exec_start_ns, compute_start_ns));
  srv_duration_add(&s->compute_infer, span(compute_start_ns, compute_end_ns));
  srv_duration_add(&s->compute_output, span(compute_end_ns, exec_end_ns));
  atomic_store_explicit(&s->last_inference_ms, srv_stats_wall_ms(), memory_order_relaxed);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance *instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  srv_stats_t *s = &instance->model->stats;
  atomic_fetch_add_explicit(&s->inference_count, batch_size, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->execution_count, 1, memory_order_relaxed);
  if (batch_size == 0 || batch_size > s->batch_limit)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "batch size %llu reported by model '%s' is outside [1, %u]",
                         (unsigned long long)batch_size, instance->model->name,
                         s->batch_limit);
  srv_batch_stats_t *b = &s->batch_stats[batch_size];
  srv_duration_add(&b->compute_input, span(exec_start_ns, compute_start_ns));
  srv_duration_add(&b->compute_infer, span(compute_start_ns, compute_end_ns));
  srv_duration_add(&b->compute_output, span(compute_end_ns, exec_end_ns));
  return NULL;
}

/* Per-response statistics (decoupled models): accepted and checked; Nereid
 * does not yet report them in ModelStatistics' response_stats. */
struct TRITONBACKEND_ModelInstanceResponseStatistics {
  TRITONBACKEND_ModelInstance *instance;
};

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics **response_statistics) {
  *response_statistics = calloc(1, sizeof **response_statistics);
  if (*response_statistics == NULL) SRV_FATAL("out of memory");
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics) {
  free(response_statistics);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONBACKEND_ModelInstance *model_instance) {
  response_statistics->instance = model_instance;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONBACKEND_ResponseFactory *response_factory) {
  (void)response_statistics;
  (void)response_factory;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t response_start) {
  (void)response_statistics;
  (void)response_start;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t compute_output_start) {
  (void)response_statistics;
  (void)compute_output_start;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t response_end) {
  (void)response_statistics;
  (void)response_end;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONSERVER_Error *error) {
  (void)response_statistics;
  (void)error;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics) {
  if (response_statistics->instance == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "response statistics have no model instance set");
  return NULL;
}
