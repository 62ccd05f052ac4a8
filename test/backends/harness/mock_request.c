/* Mock server: requests, their ids, inputs and requested outputs,
 * cancellation, release. The thread that owns a request (test thread, then
 * the backend's execute thread) uses it; cancellation is an atomic flag any
 * thread may set; release marks the call under its lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/backends/harness/mock_server.h"

mock_call_t *mock_call_new(void) {
  mock_call_t *c = calloc(1, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  return c;
}

void mock_call_free(mock_call_t *call) {
  for (size_t i = 0; i < call->sent_count; i++) {
    free(call->sent[i].error);
    for (uint32_t o = 0; o < call->sent[i].output_count; o++)
      free(call->sent[i].outputs[o].data);
  }
  pthread_cond_destroy(&call->cv);
  pthread_mutex_destroy(&call->mu);
  free(call);
}

/* Relaxed: a flag the backend polls; no data is published with it. */
void mock_call_cancel(mock_call_t *call) {
  atomic_store_explicit(&call->cancelled, true, memory_order_relaxed);
}

TRITONBACKEND_Request *mock_request_new(mock_call_t *call) {
  TRITONBACKEND_Request *r = calloc(1, sizeof *r);
  r->call = call;
  return r;
}

void mock_request_input(TRITONBACKEND_Request *r, const char *name,
                        TRITONSERVER_DataType datatype, const int64_t *shape,
                        uint32_t dims, const void *data, uint64_t size, uint32_t pieces) {
  struct TRITONBACKEND_Input *in = &r->inputs[r->input_count++];
  in->name = name;
  in->datatype = datatype;
  if (dims > 0) memcpy(in->shape, shape, dims * sizeof *shape);
  in->dims = dims;
  in->byte_size = size;
  in->buffers = size == 0 ? 0 : pieces;
  for (uint32_t p = 0, off = 0; p < in->buffers; p++) {
    uint64_t len = size / pieces + (p < size % pieces);
    in->buf[p] = (const char *)data + off;
    in->size[p] = len;
    off += (uint32_t)len;
  }
}

void mock_request_id(TRITONBACKEND_Request *r, const char *id) { r->id = id; }

void mock_request_output(TRITONBACKEND_Request *r, const char *name) {
  r->outputs[r->output_count++] = name;
}

TRITONSERVER_Error *TRITONBACKEND_RequestId(TRITONBACKEND_Request *request,
                                            const char **id) {
  *id = request->id;
  return NULL;
}

/* Relaxed, as in the server: a hint polled by the backend. */
TRITONSERVER_Error *TRITONBACKEND_RequestIsCancelled(TRITONBACKEND_Request *request,
                                                     bool *is_cancelled) {
  *is_cancelled = atomic_load_explicit(&request->call->cancelled, memory_order_relaxed);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request *request,
                                                    uint32_t *count) {
  *count = request->input_count;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInput(TRITONBACKEND_Request *request,
                                               const char *name,
                                               TRITONBACKEND_Input **input) {
  for (uint32_t i = 0; i < request->input_count; i++) {
    if (strcmp(request->inputs[i].name, name) == 0) {
      *input = &request->inputs[i];
      return NULL;
    }
  }
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_NOT_FOUND, "no such input");
}

TRITONSERVER_Error *TRITONBACKEND_RequestInputByIndex(TRITONBACKEND_Request *request,
                                                      const uint32_t index,
                                                      TRITONBACKEND_Input **input) {
  if (index >= request->input_count) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "input index");
  }
  *input = &request->inputs[index];
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputCount(TRITONBACKEND_Request *request,
                                                     uint32_t *count) {
  *count = request->output_count;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputName(TRITONBACKEND_Request *request,
                                                    const uint32_t index,
                                                    const char **output_name) {
  if (index >= request->output_count) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "output index");
  }
  *output_name = request->outputs[index];
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input *input, const char **name, TRITONSERVER_DataType *datatype,
    const int64_t **shape, uint32_t *dims_count, uint64_t *byte_size,
    uint32_t *buffer_count) {
  if (name) *name = input->name;
  if (datatype) *datatype = input->datatype;
  if (shape) *shape = input->shape;
  if (dims_count) *dims_count = input->dims;
  if (byte_size) *byte_size = input->byte_size;
  if (buffer_count) *buffer_count = input->buffers;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_InputBuffer(TRITONBACKEND_Input *input,
                                              const uint32_t index, const void **buffer,
                                              uint64_t *buffer_byte_size,
                                              TRITONSERVER_MemoryType *memory_type,
                                              int64_t *memory_type_id) {
  if (index >= input->buffers) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "buffer index");
  }
  *buffer = input->buf[index];
  *buffer_byte_size = input->size[index];
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

/* Released requests are freed; their calls remember the release. */
TRITONSERVER_Error *TRITONBACKEND_RequestRelease(TRITONBACKEND_Request *request,
                                                 uint32_t release_flags) {
  if (release_flags != TRITONSERVER_REQUEST_RELEASE_ALL) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED, "release flags");
  }
  mock_call_t *c = request->call;
  pthread_mutex_lock(&c->mu);
  if (c->released) {
    fprintf(stderr, "mock: request released twice\n");
    abort();
  }
  c->released = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  free(request);
  return NULL;
}
