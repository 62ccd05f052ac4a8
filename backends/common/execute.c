/* One-response-per-request execute loop with statistics. The instance's
 * execute thread. */
#include "backends/common/execute.h"

#include <stdbool.h>

#include "backends/common/clock.h"
#include "backends/common/error.h"

/* Answers one request; returns whether it succeeded. Per-request statistics
 * use this request's own timestamps, so a request is not charged for the
 * compute of the requests before it in the batch. */
static bool answer(TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
                   bk_respond_fn *fn, void *ctx, uint64_t *batch_size) {
  uint64_t start = bk_now_ns();
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
  BK_LOG_IF_ERROR(TRITONBACKEND_ModelInstanceReportStatistics(
                      instance, request, ok, start, compute_start, compute_end, end),
                  "reporting request statistics");
  BK_LOG_IF_ERROR(TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL),
                  "releasing a request");
  return ok;
}

void bk_execute_each(TRITONBACKEND_ModelInstance *instance,
                     TRITONBACKEND_Request **requests, uint32_t count, bk_respond_fn *fn,
                     void *ctx) {
  uint64_t exec_start = bk_now_ns();
  uint64_t compute_start = 0, total_batch = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (i == 0) compute_start = bk_now_ns();
    uint64_t batch_size = 1;
    if (answer(instance, requests[i], fn, ctx, &batch_size)) total_batch += batch_size;
  }
  uint64_t exec_end = bk_now_ns();
  if (total_batch == 0) return;
  BK_LOG_IF_ERROR(
      TRITONBACKEND_ModelInstanceReportBatchStatistics(instance, total_batch, exec_start,
                                                       compute_start, exec_end, exec_end),
      "reporting batch statistics");
}
