/* pyshape: the backend's life cycle and Execute (see pyshape.h). Model and
 * instance initialize on loader threads; Execute on the instance's thread,
 * which handles its requests one by one as python_be.cc's ProcessRequests
 * does: read all, run the "model", answer, report statistics, release. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/common/model_config.h"
#include "test/backends/pyshape/pyshape.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  bk_model_config_t cfg;
  const char *mode, *target, *target_config;
  TRITONSERVER_Server *server;
} model_state_t;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  (void)backend;
  return ps_bls_init();
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend) {
  (void)backend;
  ps_bls_fini();
  return NULL;
}

static TRITONSERVER_Error *config_read(TRITONBACKEND_Model *model, model_state_t *st) {
  TRITONSERVER_Message *msg;
  const char *json;
  size_t len;
  PS_RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &msg));
  TRITONSERVER_Error *err = TRITONSERVER_MessageSerializeToJson(msg, &json, &len);
  char why[256];
  if (err == NULL && !bk_model_config_parse(json, len, &st->cfg, why, sizeof why))
    err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, why);
  TRITONSERVER_MessageDelete(msg);
  return err;
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
  const char *name;
  uint64_t version;
  PS_RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  PS_RETURN_IF_ERROR(TRITONBACKEND_ModelVersion(model, &version));
  model_state_t *st = calloc(1, sizeof *st);
  if (st == NULL) return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "pyshape: oom");
  TRITONSERVER_Error *err = config_read(model, st);
  if (err == NULL) err = TRITONBACKEND_ModelServer(model, &st->server);
  if (err == NULL) {
    st->mode = bk_model_config_param(&st->cfg, "mode");
    st->target = bk_model_config_param(&st->cfg, "target");
    st->target_config = bk_model_config_param(&st->cfg, "target_config");
    if (st->mode == NULL) st->mode = "echo";
    if (strcmp(st->mode, "echo") != 0 && strcmp(st->mode, "decoupled") != 0 &&
        st->target == NULL)
      err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                  "pyshape: this mode needs a `target` parameter");
  }
  if (err == NULL) err = TRITONBACKEND_ModelSetState(model, st);
  if (err != NULL) {
    bk_model_config_free(&st->cfg);
    free(st);
  }
  return err;
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
  void *vst;
  PS_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vst));
  model_state_t *st = vst;
  bk_model_config_free(&st->cfg);
  free(st);
  return NULL;
}

/* The decoupled mode: INPUT0[0] responses from the factory, each with its
 * index as OUTPUT0, stopping early when the client cancels (the response
 * sender's and the request's is_cancelled()), then the final flag on its
 * own. */
static TRITONSERVER_Error *run_decoupled(ps_request_t *req, const char *text) {
  int32_t n = req->input_size >= 4 ? *(const int32_t *)req->input : 0;
  const int64_t shape = 1;
  for (int32_t i = 0; i < n; i++) {
    bool cancelled = false, request_cancelled = false;
    PS_RETURN_IF_ERROR(TRITONBACKEND_ResponseFactoryIsCancelled(req->factory, &cancelled));
    PS_RETURN_IF_ERROR(TRITONBACKEND_RequestIsCancelled(req->request, &request_cancelled));
    if (cancelled || request_cancelled) break;
    TRITONBACKEND_Response *response;
    PS_RETURN_IF_ERROR(TRITONBACKEND_ResponseNewFromFactory(&response, req->factory));
    PS_RETURN_IF_ERROR(ps_response_send(response, 0, NULL, &i, &shape, 1, text));
  }
  return TRITONBACKEND_ResponseFactorySendFlags(req->factory,
                                                TRITONSERVER_RESPONSE_COMPLETE_FINAL);
}

/* One request: what the model's code answers, in a response of its own. */
static TRITONSERVER_Error *run(model_state_t *st, ps_request_t *req) {
  char text[PS_TEXT_MAX];
  ps_params_text(req, text, sizeof text);
  if (strcmp(st->mode, "decoupled") == 0) return run_decoupled(req, text);
  TRITONBACKEND_Response *response;
  PS_RETURN_IF_ERROR(TRITONBACKEND_ResponseNew(&response, req->request));
  TRITONSERVER_Error *failed = NULL;
  const int32_t *data = req->input_type == TRITONSERVER_TYPE_INT32 ? req->input : NULL;
  int32_t *answer = NULL;
  uint64_t count = 0;
  int64_t shape = 0;
  if (strcmp(st->mode, "echo") != 0) {
    failed = ps_bls_run(st->server, st->mode, st->target, st->target_config, req, text,
                        sizeof text, &answer, &count);
    data = answer;
    shape = (int64_t)count;
  }
  TRITONSERVER_Error *err = ps_response_send(
      response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, failed, data,
      answer != NULL ? &shape : req->input_shape, answer != NULL ? 1 : req->input_dims,
      text);
  free(answer);
  return err;
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  TRITONBACKEND_Model *model;
  void *vst;
  PS_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  PS_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vst));
  uint64_t start = now_ns();
  for (uint32_t i = 0; i < request_count; i++) {
    ps_request_t req;
    TRITONSERVER_Error *err = ps_request_read(requests[i], &req);
    if (err == NULL) err = run(vst, &req);
    if (err != NULL) {
      /* A request that could not be answered gets the error, as there. */
      TRITONBACKEND_Response *response;
      if (TRITONBACKEND_ResponseNew(&response, requests[i]) == NULL) {
        TRITONSERVER_Error *e =
            TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
        if (e != NULL) TRITONSERVER_ErrorDelete(e);
      }
      TRITONSERVER_ErrorDelete(err);
    }
    uint64_t end = now_ns();
    TRITONSERVER_Error *e = TRITONBACKEND_ModelInstanceReportStatistics(
        instance, requests[i], err == NULL, start, start, end, end);
    if (e != NULL) TRITONSERVER_ErrorDelete(e);
    ps_request_free(&req);
    e = TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
    if (e != NULL) TRITONSERVER_ErrorDelete(e);
  }
  uint64_t end = now_ns();
  return TRITONBACKEND_ModelInstanceReportBatchStatistics(instance, request_count, start,
                                                          start, end, end);
}
