/* One-response-per-request execute loop with statistics. The instance's
 * execute thread. */
#include "backends/common/execute.h"

#include <stdbool.h>

#include "backends/common/clock.h"
#include "backends/common/error.h"

/* What one request spent making its response (input) and sending it
 * (output), as its statistics say. */
typedef struct {
  uint64_t input, output;
} span_t;

/* Answers one request that starts at `start`; returns whether it
 * succeeded, and sets *end to when its response was sent (its statistics'
 * last timestamp). Per-request statistics use this request's own
 * timestamps, so a request is not charged for the compute of the requests
 * before it in the batch. */
static bool answer(TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
                   bk_respond_fn *fn, void *ctx, uint64_t start, uint64_t *batch_size,
                   span_t *span, uint64_t *end_ns) {
  TRITONBACKEND_Response *response = NULL;
  TRITONSERVER_Error *err = TRITONBACKEND_ResponseNew(&response, request);
  uint64_t compute_start = bk_now_ns();
  if (err == NULL) err = fn(ctx, request, response, batch_size);
  uint64_t compute_end = bk_now_ns();
  bool ok = (err == NULL);
  if (response != NULL) {
    BK_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err),
        "sending a response");
    if (err != NULL) TRITONSERVER_ErrorDelete(err);
  } else {
    /* Without a response the client cannot be told; the server sees the
     * release without a final response and answers the request itself. */
    BK_LOG_IF_ERROR(err, "creating a response");
  }
  uint64_t end = bk_now_ns();
  *end_ns = end;
  span->input = compute_start - start;
  span->output = end - compute_end;
  BK_LOG_IF_ERROR(TRITONBACKEND_ModelInstanceReportStatistics(
                      instance, request, ok, start, compute_start, compute_end, end),
                  "reporting request statistics");
  BK_LOG_IF_ERROR(TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL),
                  "releasing a request");
  return ok;
}

/* The batch's statistics say what its requests' say, summed: its
 * compute_input is the time its successful requests spent making their
 * responses, its compute_output the time they spent sending them, and
 * compute_infer the rest of the execution. So inference_stats and
 * batch_stats agree on each total, as Triton's backends make them (they
 * report the same four timestamps for a batch and its requests). */
void bk_execute_each(TRITONBACKEND_ModelInstance *instance,
                     TRITONBACKEND_Request **requests, uint32_t count, bk_respond_fn *fn,
                     void *ctx) {
  /* One clock read per timestamp that differs (issue 21): four for a lone
   * request, three more per request after it. The first request starts
   * with the execution, each next one where the one before ended (its
   * report and release count in the next one's input), and the execution
   * ends with the last one: Triton's backends too take exec_end before
   * they report and release. */
  uint64_t exec_start = bk_now_ns(), now = exec_start;
  uint64_t total_batch = 0, input = 0, output = 0;
  bool any = false;
  for (uint32_t i = 0; i < count; i++) {
    uint64_t batch_size = 1;
    span_t span = {0, 0};
    if (!answer(instance, requests[i], fn, ctx, now, &batch_size, &span, &now)) continue;
    any = true;
    total_batch += batch_size;
    input += span.input;
    output += span.output;
  }
  uint64_t exec_end = now;
  if (!any) return;
  /* The requests ran one after another inside [exec_start, exec_end]. */
  BK_LOG_IF_ERROR(TRITONBACKEND_ModelInstanceReportBatchStatistics(
                      instance, total_batch, exec_start, exec_start + input,
                      exec_end - output, exec_end),
                  "reporting batch statistics");
}
