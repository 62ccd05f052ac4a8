/* The statistics entry points that backends call on their instance
 * threads: per-request and per-batch timings into the model's counters. */
#include <stdlib.h>

#include "server/api/buffer_attributes.h"
#include "server/api/error.h"
#include "server/common/log.h"
#include "server/model/model.h"
#include "server/model/response.h"
#include "server/stats/batch_stats.h"
#include "server/stats/memory_usage.h"
#include "server/stats/response_stats.h"
#include "server/trace/trace_request.h"

static uint64_t span(uint64_t start, uint64_t end) {
  return end > start ? end - start : 0;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  srv_stats_t *s = &instance->model->stats;
  if (request->state->trace != NULL)
    srv_trace_compute(request->state->trace, exec_start_ns, compute_start_ns,
                      compute_end_ns, exec_end_ns);
  /* A sequence batcher's padding request is no client's: not counted. */
  if (request->seq_padding) return NULL;
  /* A request's life: from its arrival at the server to its execution's end. */
  uint64_t total = span(request->state->request_start_ns, exec_end_ns);
  if (!success) {
    /* Relaxed: a hint, as backends read it (request.h). */
    bool cancelled =
        atomic_load_explicit(&request->state->cancelled, memory_order_relaxed);
    srv_stats_fail(s, cancelled ? SRV_FAIL_CANCELED : SRV_FAIL_BACKEND, total);
    return NULL;
  }
  uint64_t queue = span(request->queue_start_ns, exec_start_ns);
  uint64_t input = span(exec_start_ns, compute_start_ns);
  uint64_t infer = span(compute_start_ns, compute_end_ns);
  uint64_t output = span(compute_end_ns, exec_end_ns);
  /* The instance thread's own slot: nothing here is written by another
   * thread (unless more threads than slots write this model). */
  srv_stats_slot_t *mine = srv_stats_mine(s);
  srv_duration_add(&mine->success, total);
  srv_duration_add(&mine->queue, queue);
  srv_duration_add(&mine->compute_input, input);
  srv_duration_add(&mine->compute_infer, infer);
  srv_duration_add(&mine->compute_output, output);
  /* Triton counts inferences here, per successful request (at least 1
   * each), not in the batch report: a batch report's size may be 0. */
  uint64_t n = request->batch_size > 0 ? request->batch_size : 1;
  atomic_fetch_add_explicit(&mine->inference_count, n, memory_order_relaxed);
  srv_latency_hist_t *h = srv_stats_slot_latency(mine)->kind;
  srv_hist_record(&h[SRV_LAT_REQUEST], total);
  srv_hist_record(&h[SRV_LAT_QUEUE], queue);
  srv_hist_record(&h[SRV_LAT_COMPUTE_INPUT], input);
  srv_hist_record(&h[SRV_LAT_COMPUTE_INFER], infer);
  srv_hist_record(&h[SRV_LAT_COMPUTE_OUTPUT], output);
  atomic_store_explicit(&mine->last_inference_ms, srv_stats_wall_ms(),
                        memory_order_relaxed);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance *instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  srv_stats_t *s = &instance->model->stats;
  /* Triton's: one execution, whatever its size (0 for a model that does
   * not batch, as Triton's identity backend reports). */
  atomic_fetch_add_explicit(&srv_stats_mine(s)->execution_count, 1, memory_order_relaxed);
  srv_batch_stats_t *b = srv_batch_table_entry(s->batches, batch_size);
  if (b == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "batch size %llu reported by model '%s' is outside [0, %u]",
                         (unsigned long long)batch_size, instance->model->name,
                         s->batch_limit);
  srv_duration_add(&b->compute_input, span(exec_start_ns, compute_start_ns));
  srv_duration_add(&b->compute_infer, span(compute_start_ns, compute_end_ns));
  srv_duration_add(&b->compute_output, span(compute_end_ns, exec_end_ns));
  return NULL;
}

/* Per-response statistics (decoupled models), Triton's response_stats:
 * each report counts toward the response's index within its request. The
 * object is the backend's; nothing here is shared until the report. */
struct TRITONBACKEND_ModelInstanceResponseStatistics {
  TRITONBACKEND_ModelInstance *instance;
  TRITONBACKEND_ResponseFactory *factory;
  uint64_t response_start, compute_output_start, response_end;
  bool failed;
  TRITONSERVER_Error_Code error_code;
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
  response_statistics->factory = response_factory;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t response_start) {
  response_statistics->response_start = response_start;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t compute_output_start) {
  response_statistics->compute_output_start = compute_output_start;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t response_end) {
  response_statistics->response_end = response_end;
  return NULL;
}

/* The error is only read (its code), as Triton: the backend keeps it. */
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONSERVER_Error *error) {
  response_statistics->failed = error != NULL;
  if (error != NULL) response_statistics->error_code = TRITONSERVER_ErrorCode(error);
  return NULL;
}

/* Success splits into infer (start to output start) and output (output
 * start to end); a response without output is empty; an error is a
 * failure, or a cancellation when its code says so. */
static void response_stat_add(srv_response_stat_t *e,
                              const TRITONBACKEND_ModelInstanceResponseStatistics *rs) {
  uint64_t total = span(rs->response_start, rs->response_end);
  if (rs->failed) {
    srv_duration_add(
        rs->error_code == TRITONSERVER_ERROR_CANCELLED ? &e->cancel : &e->fail, total);
  } else if (rs->compute_output_start == 0) {
    srv_duration_add(&e->empty_response, total);
  } else {
    srv_duration_add(&e->compute_infer,
                     span(rs->response_start, rs->compute_output_start));
    srv_duration_add(&e->compute_output,
                     span(rs->compute_output_start, rs->response_end));
    srv_duration_add(&e->success, total);
  }
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics) {
  const TRITONBACKEND_ModelInstanceResponseStatistics *rs = response_statistics;
  if (rs->instance == NULL || rs->factory == NULL)
    return api_error_new(
        TRITONSERVER_ERROR_INVALID_ARG,
        "response statistics need a model instance and a response factory");
  /* Relaxed: a ticket; the entry's counters are atomics of their own. */
  uint32_t index = atomic_fetch_add_explicit(&rs->factory->state->responses_reported, 1,
                                             memory_order_relaxed);
  srv_response_stat_t *e =
      srv_response_stats_entry(rs->instance->model->stats.responses, index);
  if (e == NULL)
    return api_error_new(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "model '%s': response index %u is past the %u that statistics keep",
        rs->instance->model->name, index, SRV_RESPONSE_STATS_MAX);
  response_stat_add(e, rs);
  return NULL;
}

/* ---- memory usage (memory_usage.h) ---- */

/* The attributes as uses, or an error naming the first one that is not
 * there (Triton dereferences each). */
static TRITONSERVER_Error *memory_report(srv_model_t *m, const void *reporter,
                                         TRITONSERVER_BufferAttributes **usage,
                                         uint32_t usage_size) {
  if (usage == NULL && usage_size > 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "memory usage of model '%s': %u entries but no array", m->name,
                         usage_size);
  if (usage_size > SRV_MEMORY_USES_MAX)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "memory usage of model '%s': %u entries, at most %u are taken",
                         m->name, usage_size, SRV_MEMORY_USES_MAX);
  for (uint32_t i = 0; i < usage_size; i++)
    if (usage[i] == NULL)
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                           "memory usage of model '%s': entry %u is NULL", m->name, i);
  srv_memory_use_t *uses = malloc((usage_size ? usage_size : 1) * sizeof *uses);
  if (uses == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < usage_size; i++)
    uses[i] = (srv_memory_use_t){usage[i]->memory_type, usage[i]->memory_type_id,
                                 usage[i]->byte_size};
  bool taken = srv_memory_usage_report(m->stats.memory, reporter, uses, usage_size);
  free(uses);
  if (!taken) SRV_FATAL("memory usage report over its checked bound");
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelReportMemoryUsage(
    TRITONBACKEND_Model *model, TRITONSERVER_BufferAttributes **usage,
    uint32_t usage_size) {
  if (model == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "model must not be NULL");
  return memory_report(model, model, usage, usage_size);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportMemoryUsage(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_BufferAttributes **usage,
    uint32_t usage_size) {
  if (instance == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "instance must not be NULL");
  return memory_report(instance->model, instance, usage, usage_size);
}
