/* pyshape: the model's calls into the server, as request_executor.cc and
 * model_loader.cc make them for a Python model: a BLS request (Infer), its
 * cancel (InferRequestCancel, guarded as InferPayload::SafeCancelRequest
 * guards it: never after the release callback deleted the request), its
 * responses (InferResponseComplete), and loading and unloading a model.
 * The instance's thread sends and waits; the callbacks run on server
 * threads, take the pending call's lock and post its semaphore. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/inprocess.h"
#include "test/backends/pyshape/pyshape.h"

/* Made at backend initialize, read-only afterwards. */
static TRITONSERVER_ResponseAllocator *allocator;

/* One BLS call: its request until released, what its response said. */
typedef struct {
  sem_t done; /* posted at the final response and at the release */
  pthread_mutex_t mu;
  TRITONSERVER_InferenceRequest *request; /* NULL once released (under mu) */
  TRITONSERVER_Error_Code code;
  bool failed;
  char text[PS_TEXT_MAX]; /* PARAMS of the response, or its error */
  int32_t *data;
  uint64_t count;
} pending_t;

/* request_executor.cc's OutputBufferQuery: any memory is fine. */
static TRITONSERVER_Error *query_fn(TRITONSERVER_ResponseAllocator *a, void *userp,
                                    const char *name, size_t *size,
                                    TRITONSERVER_MemoryType *mt, int64_t *mt_id) {
  return NULL;
}

TRITONSERVER_Error *ps_bls_init(void) {
  PS_RETURN_IF_ERROR(bk_host_allocator_new(&allocator));
  return TRITONSERVER_ResponseAllocatorSetQueryFunction(allocator, query_fn);
}

void ps_bls_fini(void) {
  TRITONSERVER_Error *err = TRITONSERVER_ResponseAllocatorDelete(allocator);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
}

/* The outputs and parameters of a good response, read as
 * InferResponseComplete reads them. */
static TRITONSERVER_Error *response_read(TRITONSERVER_InferenceResponse *response,
                                         pending_t *p) {
  uint32_t count;
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceResponseOutputCount(response, &count));
  for (uint32_t i = 0; i < count; i++) {
    bk_response_output_t o;
    PS_RETURN_IF_ERROR(bk_response_output(response, i, &o));
    if (strcmp(o.name, "PARAMS") == 0 && o.byte_size >= 4) {
      uint32_t len;
      memcpy(&len, o.base, 4);
      if (len > o.byte_size - 4 || len >= sizeof p->text) len = 0;
      memcpy(p->text, (const char *)o.base + 4, len);
      p->text[len] = '\0';
    } else if (strcmp(o.name, "OUTPUT0") == 0 && o.datatype == TRITONSERVER_TYPE_INT32) {
      p->data = malloc(o.byte_size > 0 ? o.byte_size : 1);
      if (o.byte_size > 0) memcpy(p->data, o.base, o.byte_size);
      p->count = o.byte_size / sizeof(int32_t);
    }
  }
  uint32_t params;
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceResponseParameterCount(response, &params));
  for (uint32_t i = 0; i < params; i++) {
    const char *name;
    TRITONSERVER_ParameterType type;
    const void *v;
    PS_RETURN_IF_ERROR(TRITONSERVER_InferenceResponseParameter(response, i, &name, &type, &v));
  }
  return NULL;
}

/* InferResponseComplete: on an error the response is deleted at once and
 * then deleted again as NULL, as request_executor.cc does. */
static void on_response(TRITONSERVER_InferenceResponse *response, const uint32_t flags,
                        void *userp) {
  pending_t *p = userp;
  if (response != NULL) {
    TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(response);
    if (err != NULL) {
      p->failed = true;
      p->code = TRITONSERVER_ErrorCode(err);
      snprintf(p->text, sizeof p->text, "%s", TRITONSERVER_ErrorMessage(err));
    } else {
      err = response_read(response, p);
      if (err != NULL) {
        p->failed = true;
        p->code = TRITONSERVER_ErrorCode(err);
        snprintf(p->text, sizeof p->text, "%s", TRITONSERVER_ErrorMessage(err));
        TRITONSERVER_ErrorDelete(err); /* ours, unlike the response's */
      }
    }
    if (p->failed) {
      TRITONSERVER_Error *e = TRITONSERVER_InferenceResponseDelete(response);
      if (e != NULL) TRITONSERVER_ErrorDelete(e);
      response = NULL;
    }
    TRITONSERVER_Error *e = TRITONSERVER_InferenceResponseDelete(response);
    if (e != NULL) TRITONSERVER_ErrorDelete(e);
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) sem_post(&p->done);
}

/* InferRequestComplete: the request is deleted, and nobody may cancel it
 * any more. */
static void on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                       void *userp) {
  pending_t *p = userp;
  pthread_mutex_lock(&p->mu);
  p->request = NULL;
  pthread_mutex_unlock(&p->mu);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceRequestDelete(request);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  sem_post(&p->done);
}

/* SafeCancelRequest: a cancel, only while the server has the request. */
static TRITONSERVER_Error *cancel(pending_t *p, bool *is_cancelled) {
  TRITONSERVER_Error *err = NULL;
  pthread_mutex_lock(&p->mu);
  if (p->request != NULL) err = TRITONSERVER_InferenceRequestCancel(p->request);
  if (err == NULL && p->request != NULL)
    err = TRITONSERVER_InferenceRequestIsCancelled(p->request, is_cancelled);
  pthread_mutex_unlock(&p->mu);
  return err;
}

/* The caller's parameters, handed on as the stub hands them on (string,
 * int, bool), then ours: one of each type. */
static TRITONSERVER_Error *params_set(const ps_request_t *req,
                                      TRITONSERVER_InferenceRequest *to) {
  uint32_t count;
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestParameterCount(req->request, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char *key;
    TRITONSERVER_ParameterType type;
    const void *v;
    PS_RETURN_IF_ERROR(TRITONBACKEND_RequestParameter(req->request, i, &key, &type, &v));
    if (type == TRITONSERVER_PARAMETER_STRING)
      PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetStringParameter(to, key, v));
    else if (type == TRITONSERVER_PARAMETER_INT)
      PS_RETURN_IF_ERROR(
          TRITONSERVER_InferenceRequestSetIntParameter(to, key, *(const int64_t *)v));
    else if (type == TRITONSERVER_PARAMETER_BOOL)
      PS_RETURN_IF_ERROR(
          TRITONSERVER_InferenceRequestSetBoolParameter(to, key, *(const bool *)v));
  }
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetStringParameter(to, "via", "pyshape"));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetIntParameter(to, "hop", 1));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetBoolParameter(to, "bls", true));
  return TRITONSERVER_InferenceRequestSetDoubleParameter(to, "ratio", 0.5);
}

/* The scheduler's settings, read back as set: a BLS request's timeout and
 * priority act as a client's. The timeout is the caller's plus one, so the
 * callee shows it was this request's. */
static TRITONSERVER_Error *sched_set(const ps_request_t *req,
                                     TRITONSERVER_InferenceRequest *to) {
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(to, req->timeout_us + 1));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetPriorityUInt64(to, 1));
  uint64_t timeout, prio64;
  uint32_t prio;
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestTimeoutMicroseconds(to, &timeout));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestPriorityUInt64(to, &prio64));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetPriority(to, 1));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestPriority(to, &prio));
  if (timeout != req->timeout_us + 1 || prio64 != 1 || prio != 1)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                 "pyshape: timeout or priority not kept");
  return NULL;
}

/* RequestExecutor::Infer, from TRITONSERVER_InferenceRequestNew on. */
static TRITONSERVER_Error *request_fill(const ps_request_t *req,
                                        TRITONSERVER_InferenceRequest *to, pending_t *p,
                                        bool want_params) {
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetId(to, req->id));
  if (req->correlation_id_string != NULL)
    PS_RETURN_IF_ERROR(
        TRITONSERVER_InferenceRequestSetCorrelationIdString(to, req->correlation_id_string));
  else
    PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetCorrelationId(to, req->correlation_id));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetFlags(to, req->flags));
  PS_RETURN_IF_ERROR(sched_set(req, to));
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetReleaseCallback(to, on_release, p));
  PS_RETURN_IF_ERROR(params_set(req, to));
  if (req->input_name != NULL) {
    PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAddInput(
        to, req->input_name, req->input_type, req->input_shape, req->input_dims));
    PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAppendInputData(
        to, req->input_name, req->input, req->input_size, TRITONSERVER_MEMORY_CPU, 0));
  }
  PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAddRequestedOutput(to, "OUTPUT0"));
  if (want_params)
    PS_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAddRequestedOutput(to, "PARAMS"));
  return TRITONSERVER_InferenceRequestSetResponseCallback(to, allocator, NULL, on_response,
                                                          p);
}

/* Sends req on to `target`, asking for OUTPUT0 and, if `want_params`,
 * PARAMS; on success p gets the answer and the release. */
static TRITONSERVER_Error *infer(TRITONSERVER_Server *server, const char *target,
                                 const ps_request_t *req, pending_t *p, bool want_params) {
  bool ready = false;
  uint32_t txn;
  PS_RETURN_IF_ERROR(TRITONSERVER_ServerModelIsReady(server, target, -1, &ready));
  if (!ready)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE,
                                 "pyshape: the BLS target is not ready");
  PS_RETURN_IF_ERROR(TRITONSERVER_ServerModelTransactionProperties(server, target, -1, &txn,
                                                                   NULL));
  TRITONSERVER_InferenceRequest *to = NULL;
  TRITONSERVER_Error *err = TRITONSERVER_InferenceRequestNew(&to, server, target, -1);
  if (err == NULL) err = request_fill(req, to, p, want_params);
  /* A traced caller's BLS call is traced as its child, as there. */
  TRITONSERVER_InferenceTrace *trace = NULL;
  if (err == NULL && req->trace != NULL)
    err = TRITONSERVER_InferenceTraceSpawnChildTrace(req->trace, &trace);
  if (err == NULL) {
    p->request = to; /* before it flies: a cancel may come at once */
    err = TRITONSERVER_ServerInferAsync(server, to, trace);
    if (err != NULL && trace != NULL) TRITONSERVER_InferenceTraceDelete(trace);
  }
  if (err != NULL) {
    p->request = NULL;
    /* Still ours; NULL when InferenceRequestNew failed, as there. */
    TRITONSERVER_Error *e = TRITONSERVER_InferenceRequestDelete(to);
    if (e != NULL) TRITONSERVER_ErrorDelete(e);
  }
  return err;
}

static void wait_twice(pending_t *p) {
  for (int i = 0; i < 2; i++)
    while (sem_wait(&p->done) != 0 && errno == EINTR) {
    }
}

/* Triton's name for an error code. */
static void code_name(TRITONSERVER_Error_Code code, char *buf, size_t len) {
  TRITONSERVER_Error *e = TRITONSERVER_ErrorNew(code, "");
  snprintf(buf, len, "%s", TRITONSERVER_ErrorCodeString(e));
  TRITONSERVER_ErrorDelete(e);
}

static TRITONSERVER_Error *run_bls(TRITONSERVER_Server *server, const char *target,
                                   bool cancel_it, const ps_request_t *req, char *text,
                                   size_t len, int32_t **data, uint64_t *count) {
  pending_t p = {.failed = false};
  sem_init(&p.done, 0, 0);
  pthread_mutex_init(&p.mu, NULL);
  bool cancelled = false;
  TRITONSERVER_Error *err = infer(server, target, req, &p, !cancel_it);
  bool flying = err == NULL;
  if (err == NULL && cancel_it) err = cancel(&p, &cancelled);
  if (err == NULL && cancel_it) err = cancel(&p, &cancelled); /* twice: still fine */
  if (flying) wait_twice(&p); /* the callbacks hold p until both came */
  if (err == NULL && cancel_it) {
    char code[64] = "OK";
    if (p.failed) code_name(p.code, code, sizeof code);
    snprintf(text, len, "code=%s;cancelled=%d", code, cancelled ? 1 : 0);
  } else if (err == NULL && p.failed) {
    err = TRITONSERVER_ErrorNew(p.code, p.text);
  } else if (err == NULL) {
    snprintf(text, len, "%s", p.text);
  }
  *data = p.data;
  *count = p.count;
  pthread_mutex_destroy(&p.mu);
  sem_destroy(&p.done);
  return err;
}

/* One step of the control mode: "name=ok" or "name=<error text>". */
static void step_note(char *text, size_t len, const char *name, TRITONSERVER_Error *err) {
  size_t used = strlen(text);
  snprintf(text + used, len - used, "%s%s=%s", used ? ";" : "", name,
           err == NULL ? "ok" : TRITONSERVER_ErrorMessage(err));
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
}

/* model_loader.cc's load: a `config` parameter (ParameterNew) when given. */
static TRITONSERVER_Error *load(TRITONSERVER_Server *server, const char *target,
                                const char *config) {
  TRITONSERVER_Parameter *params[1];
  uint64_t n = 0;
  if (config != NULL)
    params[n++] = TRITONSERVER_ParameterNew("config", TRITONSERVER_PARAMETER_STRING, config);
  TRITONSERVER_Error *err = TRITONSERVER_ServerLoadModelWithParameters(
      server, target, (const TRITONSERVER_Parameter **)params, n);
  for (uint64_t i = 0; i < n; i++) TRITONSERVER_ParameterDelete(params[i]);
  return err;
}

/* model_loader.cc: load, ask whether it is ready, unload; load again and
 * unload with its dependents. */
static TRITONSERVER_Error *run_control(TRITONSERVER_Server *server, const char *target,
                                       const char *config, char *text, size_t len) {
  text[0] = '\0';
  step_note(text, len, "load", load(server, target, config));
  bool ready = false;
  TRITONSERVER_Error *err = TRITONSERVER_ServerModelIsReady(server, target, -1, &ready);
  step_note(text, len, ready ? "ready" : "not_ready", err);
  step_note(text, len, "unload", TRITONSERVER_ServerUnloadModel(server, target));
  step_note(text, len, "reload", load(server, target, config));
  step_note(text, len, "unload_dependents",
            TRITONSERVER_ServerUnloadModelAndDependents(server, target));
  return NULL;
}

TRITONSERVER_Error *ps_bls_run(TRITONSERVER_Server *server, const char *mode,
                               const char *target, const char *target_config,
                               const ps_request_t *req, char *text, size_t len,
                               int32_t **data, uint64_t *count) {
  *data = NULL;
  *count = 0;
  if (strcmp(mode, "bls") == 0)
    return run_bls(server, target, false, req, text, len, data, count);
  if (strcmp(mode, "bls_cancel") == 0)
    return run_bls(server, target, true, req, text, len, data, count);
  if (strcmp(mode, "control") == 0) return run_control(server, target, target_config, text, len);
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "pyshape: unknown mode");
}
