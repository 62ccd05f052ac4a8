/* bls: a test backend in the style of Triton's BLS example, built against
 * the API headers only. Each request it executes is forwarded, inputs and
 * requested outputs unchanged, to model `simple` through the in-process
 * API (TRITONSERVER_ServerInferAsync); it waits for that answer and the
 * inner request's release, then answers with a copy of the outputs. The
 * execute thread blocks while `simple` works on its own instance thread;
 * the callbacks run on server threads and only post a semaphore. */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/inprocess.h"
#include "triton/core/tritonbackend.h"

#define EXPORT __attribute__((visibility("default")))
#define TARGET "simple"

#define RETURN_IF_ERROR(x)          \
  do {                              \
    TRITONSERVER_Error *err_ = (x); \
    if (err_ != NULL) return err_;  \
  } while (0)

/* Made at backend initialize, read-only afterwards. */
static TRITONSERVER_ResponseAllocator *allocator;

/* One inner request: its answer, and a post for its final response and
 * one for its release. */
typedef struct {
  sem_t done;
  TRITONSERVER_InferenceResponse *response;
} pending_t;

static void on_response(TRITONSERVER_InferenceResponse *response, const uint32_t flags,
                        void *userp) {
  pending_t *p = userp;
  if (response != NULL) {
    if (p->response == NULL)
      p->response = response;
    else
      TRITONSERVER_InferenceResponseDelete(response);
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) sem_post(&p->done);
}

static void on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                       void *userp) {
  pending_t *p = userp;
  if (flags & TRITONSERVER_REQUEST_RELEASE_ALL)
    TRITONSERVER_InferenceRequestDelete(request);
  sem_post(&p->done);
}

/* Copies the outer request's inputs (by reference) and requested outputs. */
static TRITONSERVER_Error *copy_tensors(TRITONBACKEND_Request *from,
                                        TRITONSERVER_InferenceRequest *to) {
  uint32_t count;
  RETURN_IF_ERROR(TRITONBACKEND_RequestInputCount(from, &count));
  for (uint32_t i = 0; i < count; i++) {
    TRITONBACKEND_Input *in;
    const char *name;
    TRITONSERVER_DataType dt;
    const int64_t *shape;
    uint32_t dims, buffers;
    RETURN_IF_ERROR(TRITONBACKEND_RequestInputByIndex(from, i, &in));
    RETURN_IF_ERROR(
        TRITONBACKEND_InputProperties(in, &name, &dt, &shape, &dims, NULL, &buffers));
    RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAddInput(to, name, dt, shape, dims));
    for (uint32_t b = 0; b < buffers; b++) {
      const void *base;
      uint64_t size;
      TRITONSERVER_MemoryType mt;
      int64_t mt_id;
      RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(in, b, &base, &size, &mt, &mt_id));
      RETURN_IF_ERROR(
          TRITONSERVER_InferenceRequestAppendInputData(to, name, base, size, mt, mt_id));
    }
  }
  RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(from, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char *name;
    RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(from, i, &name));
    RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAddRequestedOutput(to, name));
  }
  return NULL;
}

/* Sends `from` on to TARGET; on success p receives the answer. */
static TRITONSERVER_Error *forward(TRITONSERVER_Server *server,
                                   TRITONBACKEND_Request *from, pending_t *p) {
  bool ready = false;
  RETURN_IF_ERROR(TRITONSERVER_ServerModelIsReady(server, TARGET, -1, &ready));
  if (!ready)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE,
                                 "bls: model '" TARGET "' is not ready");
  const char *id;
  uint32_t flags;
  TRITONSERVER_InferenceRequest *to = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_RequestId(from, &id));
  RETURN_IF_ERROR(TRITONBACKEND_RequestFlags(from, &flags));
  RETURN_IF_ERROR(TRITONSERVER_InferenceRequestNew(&to, server, TARGET, -1));
  TRITONSERVER_Error *err = TRITONSERVER_InferenceRequestSetId(to, id);
  if (err == NULL) err = TRITONSERVER_InferenceRequestSetFlags(to, flags);
  if (err == NULL) err = copy_tensors(from, to);
  if (err == NULL)
    err = TRITONSERVER_InferenceRequestSetReleaseCallback(to, on_release, p);
  if (err == NULL)
    err = TRITONSERVER_InferenceRequestSetResponseCallback(to, allocator, NULL,
                                                           on_response, p);
  /* A traced request's call is its child trace, as Triton's BLS when the
   * model passes request.trace(). */
  TRITONSERVER_InferenceTrace *trace = NULL, *child = NULL;
  if (err == NULL) err = TRITONBACKEND_RequestTrace(from, &trace);
  if (err == NULL && trace != NULL)
    err = TRITONSERVER_InferenceTraceSpawnChildTrace(trace, &child);
  if (err == NULL) err = TRITONSERVER_ServerInferAsync(server, to, child);
  if (err != NULL) { /* still ours */
    TRITONSERVER_InferenceRequestDelete(to);
    if (child != NULL) TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(child));
  }
  return err;
}

/* The inner answer's outputs, copied into the outer response. */
static TRITONSERVER_Error *copy_answer(TRITONSERVER_InferenceResponse *from,
                                       TRITONBACKEND_Response *to) {
  TRITONSERVER_Error *failed = TRITONSERVER_InferenceResponseError(from);
  if (failed != NULL) /* the response's own: hand on a copy */
    return TRITONSERVER_ErrorNew(TRITONSERVER_ErrorCode(failed),
                                 TRITONSERVER_ErrorMessage(failed));
  uint32_t count;
  RETURN_IF_ERROR(TRITONSERVER_InferenceResponseOutputCount(from, &count));
  for (uint32_t i = 0; i < count; i++) {
    bk_response_output_t o;
    RETURN_IF_ERROR(bk_response_output(from, i, &o));
    TRITONBACKEND_Output *out;
    void *buffer;
    TRITONSERVER_MemoryType out_mt = TRITONSERVER_MEMORY_CPU;
    int64_t out_id = 0;
    RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(to, &out, o.name, o.datatype, o.shape,
                                                 (uint32_t)o.dims_count));
    RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(out, &buffer, o.byte_size, &out_mt, &out_id));
    if (o.byte_size > 0) memcpy(buffer, o.base, o.byte_size);
  }
  return NULL;
}

static void wait_twice(pending_t *p) {
  for (int i = 0; i < 2; i++)
    while (sem_wait(&p->done) != 0 && errno == EINTR) {
    }
}

static TRITONSERVER_Error *answer(TRITONSERVER_Server *server,
                                  TRITONBACKEND_Request *request,
                                  TRITONBACKEND_Response *response) {
  pending_t p = {.response = NULL};
  sem_init(&p.done, 0, 0);
  TRITONSERVER_Error *err = forward(server, request, &p);
  if (err == NULL) {
    wait_twice(&p); /* the inner request referenced our inputs until now */
    if (p.response == NULL)
      err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                  "bls: model '" TARGET "' sent no response");
    else
      err = copy_answer(p.response, response);
  }
  if (p.response != NULL) TRITONSERVER_InferenceResponseDelete(p.response);
  sem_destroy(&p.done);
  return err;
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  return bk_host_allocator_new(&allocator);
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend) {
  return TRITONSERVER_ResponseAllocatorDelete(allocator);
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  TRITONBACKEND_Model *model;
  TRITONSERVER_Server *server;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  RETURN_IF_ERROR(TRITONBACKEND_ModelServer(model, &server));
  for (uint32_t r = 0; r < request_count; r++) {
    TRITONBACKEND_Response *response;
    TRITONSERVER_Error *err = TRITONBACKEND_ResponseNew(&response, requests[r]);
    if (err == NULL) {
      TRITONSERVER_Error *failed = answer(server, requests[r], response);
      err = TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL,
                                       failed);
      if (failed != NULL) TRITONSERVER_ErrorDelete(failed);
    }
    if (err != NULL) TRITONSERVER_ErrorDelete(err); /* nothing more can be said */
    TRITONSERVER_Error *rel =
        TRITONBACKEND_RequestRelease(requests[r], TRITONSERVER_REQUEST_RELEASE_ALL);
    if (rel != NULL) TRITONSERVER_ErrorDelete(rel);
  }
  return NULL;
}
