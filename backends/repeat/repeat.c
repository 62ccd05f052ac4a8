/* The repeat backend (Triton's `repeat_int32`, decoupled): for each request,
 * one response per element of IN (OUT = IN[i], IDX = i, DELAY[i] ms apart)
 * and then the final flag, sent from the instance's scheduler thread;
 * Execute waits WAIT ms and releases the request, whether or not its
 * responses are all out. Entry points: server loading threads and each
 * instance's execute thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/common/clock.h"
#include "backends/common/config_fetch.h"
#include "backends/common/error.h"
#include "backends/common/export.h"
#include "backends/common/simple_backend.h"
#include "backends/repeat/repeat_job.h"
#include "backends/repeat/repeat_sched.h"

/* Expected config tensors; dims -1 means "one variable dim". */
static const struct {
  bool input;
  const char *name;
  TRITONSERVER_DataType type;
  int64_t dim;
} kTensors[] = {
    {true, "IN", TRITONSERVER_TYPE_INT32, -1},
    {true, "DELAY", TRITONSERVER_TYPE_UINT32, -1},
    {true, "WAIT", TRITONSERVER_TYPE_UINT32, 1},
    {false, "OUT", TRITONSERVER_TYPE_INT32, 1},
    {false, "IDX", TRITONSERVER_TYPE_UINT32, 1},
};

static bool validate(const bk_model_config_t *cfg, char *err, size_t len) {
  if (cfg->max_batch_size != 0) {
    snprintf(err, len, "the repeat backend needs max_batch_size 0");
    return false;
  }
  if (!cfg->decoupled) {
    snprintf(err, len,
             "the repeat backend needs model_transaction_policy "
             "{ decoupled: true }");
    return false;
  }
  for (size_t i = 0; i < sizeof kTensors / sizeof kTensors[0]; i++) {
    const bk_tensor_config_t *t = kTensors[i].input
                                      ? bk_model_config_input(cfg, kTensors[i].name)
                                      : bk_model_config_output(cfg, kTensors[i].name);
    bool ok = t != NULL && t->datatype == kTensors[i].type && t->dims_count == 1 &&
              (kTensors[i].dim == -1 || t->dims[0] == kTensors[i].dim);
    if (!ok) {
      snprintf(err, len, "expected %s '%s' of type %s and dims [%s]",
               kTensors[i].input ? "input" : "output", kTensors[i].name,
               kTensors[i].type == TRITONSERVER_TYPE_INT32 ? "INT32" : "UINT32",
               kTensors[i].dim == -1 ? "-1 or n" : "1");
      return false;
    }
  }
  if (bk_model_config_input(cfg, "IN")->dims[0] !=
      bk_model_config_input(cfg, "DELAY")->dims[0]) {
    snprintf(err, len, "inputs 'IN' and 'DELAY' must have the same dims");
    return false;
  }
  return true;
}

/* Answers a request that cannot start with one final error response. */
static void respond_error(TRITONBACKEND_Request *request, TRITONSERVER_Error *err) {
  TRITONBACKEND_Response *response = NULL;
  TRITONSERVER_Error *e = TRITONBACKEND_ResponseNew(&response, request);
  if (e == NULL) {
    e = TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
  }
  BK_LOG_IF_ERROR(e, "sending an error response");
  TRITONSERVER_ErrorDelete(err);
}

/* Starts one request's job; false when the request was answered with an
 * error instead. *wait_ms grows to the request's WAIT. */
static bool start(repeat_sched_t *sched, TRITONBACKEND_Request *request,
                  uint32_t *wait_ms) {
  repeat_job_t *job = NULL;
  uint32_t wait = 0;
  TRITONSERVER_Error *err = repeat_job_new(request, &job, &wait);
  if (err != NULL) {
    respond_error(request, err);
    return false;
  }
  if (!repeat_sched_push(sched, job)) {
    repeat_job_fail(job, bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory"));
    repeat_job_free(job);
    return false;
  }
  if (wait > *wait_ms) *wait_ms = wait;
  return true;
}

/* Statistics cover the request only (its responses may still be coming),
 * so the whole WAIT counts as compute, as in Triton's repeat backend. */
static void finish(TRITONBACKEND_ModelInstance *instance,
                   TRITONBACKEND_Request **requests, const bool *ok, uint32_t count,
                   uint64_t start_ns) {
  uint64_t end_ns = bk_now_ns(), good = 0;
  for (uint32_t i = 0; i < count; i++) {
    good += ok[i];
    BK_LOG_IF_ERROR(TRITONBACKEND_ModelInstanceReportStatistics(
                        instance, requests[i], ok[i], start_ns, start_ns, end_ns, end_ns),
                    "reporting request statistics");
    BK_LOG_IF_ERROR(
        TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL),
        "releasing a request");
  }
  if (good == 0) return;
  BK_LOG_IF_ERROR(TRITONBACKEND_ModelInstanceReportBatchStatistics(
                      instance, good, start_ns, start_ns, end_ns, end_ns),
                  "reporting batch statistics");
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  return bk_check_api_version("repeat");
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes) {
  return bk_prefer_cpu_instances(attributes);
}

/* Validates the config; nothing of it is needed afterwards, so the model
 * keeps no state. */
BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
  bk_model_config_t cfg;
  BK_RETURN_IF_ERROR(bk_model_config_fetch(model, &cfg));
  char why[BK_ERROR_MAX - 64];
  TRITONSERVER_Error *err = NULL;
  if (!validate(&cfg, why, sizeof why)) {
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s' (backend 'repeat'): %s",
                   cfg.name, why);
  }
  bk_model_config_free(&cfg);
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
  return NULL;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance) {
  repeat_sched_t *sched = NULL;
  BK_RETURN_IF_ERROR(repeat_sched_start(&sched));
  TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceSetState(instance, sched);
  if (err != NULL) repeat_sched_stop(sched);
  return err;
}

/* Waits for the instance's pending response streams to finish. */
BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance) {
  void *sched = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &sched));
  if (sched != NULL) repeat_sched_stop(sched);
  return NULL;
}

#define STACK_REQUESTS 16

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  uint64_t start_ns = bk_now_ns();
  void *sched = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &sched));
  /* Failing before touching a request leaves them all to the server. */
  if (sched == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "repeat: no scheduler");
  bool stack_ok[STACK_REQUESTS];
  bool *ok = request_count <= STACK_REQUESTS ? stack_ok : malloc(request_count);
  if (ok == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "repeat: out of memory");
  uint32_t wait_ms = 0;
  for (uint32_t i = 0; i < request_count; i++)
    ok[i] = start(sched, requests[i], &wait_ms);
  bk_sleep_ms(wait_ms);
  finish(instance, requests, ok, request_count, start_ns);
  if (ok != stack_ok) free(ok);
  return NULL;
}
