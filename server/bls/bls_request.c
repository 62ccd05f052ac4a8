/* Building a TRITONSERVER_InferenceRequest (see bls.h): the calls a user
 * makes on a request it owns, on its own thread. Nothing here checks the
 * request against the model beyond the model's name: as in Triton, that
 * happens at TRITONSERVER_ServerInferAsync (bls_infer.c). */
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/error_status.h"
#include "server/bls/bls.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/repository/registry.h"

/* Grows *items (of `size` bytes each) so that one more fits. */
static void *grow(void *items, uint32_t count, uint32_t *cap, size_t size) {
  if (count < *cap) return items;
  *cap = *cap ? 2 * *cap : 4;
  items = realloc(items, *cap * size);
  if (items == NULL) SRV_FATAL("out of memory");
  return items;
}

/* The texts of Triton's model repository manager, as server/model_lookup.c
 * gives them to gRPC clients. The model comes with a reference. */
TRITONSERVER_Error *srv_bls_model_find(srv_server_t *srv, const char *name,
                                       int64_t version, srv_model_t **out) {
  /* A NULL name is the empty name: INVALID_ARG, never a crash. */
  srv_status_t *st = srv_registry_acquire(srv->registry, name,
                                          name != NULL ? strlen(name) : 0, version, out);
  return st != NULL ? api_error_from_status(st) : NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestNew(
    TRITONSERVER_InferenceRequest **inference_request, TRITONSERVER_Server *server,
    const char *model_name, const int64_t model_version) {
  srv_server_t *srv = (srv_server_t *)server;
  srv_model_t *m;
  TRITONSERVER_Error *err = srv_bls_model_find(srv, model_name, model_version, &m);
  if (err != NULL) return err;
  TRITONSERVER_InferenceRequest *r = calloc(1, sizeof *r);
  if (r == NULL) SRV_FATAL("out of memory");
  r->server = srv;
  r->model = m;
  r->id = srv_strdup("");
  *inference_request = r;
  return NULL;
}

static void input_free(srv_bls_input_t *in) {
  free(in->name);
  free(in->shape);
  free(in->buffers);
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestDelete(
    TRITONSERVER_InferenceRequest *r) {
  for (uint32_t i = 0; i < r->input_count; i++) input_free(&r->inputs[i]);
  free(r->inputs);
  for (uint32_t i = 0; i < r->output_count; i++) free(r->outputs[i]);
  free(r->outputs);
  free(r->id);
  free(r->correlation_id_string);
  srv_bls_params_free(r);
  srv_bls_flight_unlink(r);
  srv_model_unref(r->model);
  free(r);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestId(TRITONSERVER_InferenceRequest *r,
                                                    const char **id) {
  *id = r->id;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetId(TRITONSERVER_InferenceRequest *r,
                                                       const char *id) {
  char *copy = srv_strdup(id);
  free(r->id);
  r->id = copy;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestFlags(TRITONSERVER_InferenceRequest *r,
                                                       uint32_t *flags) {
  *flags = r->flags;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetFlags(
    TRITONSERVER_InferenceRequest *r, uint32_t flags) {
  r->flags = flags;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestCorrelationId(
    TRITONSERVER_InferenceRequest *r, uint64_t *correlation_id) {
  if (r->correlation_id_string != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "given request's correlation id is not an unsigned int");
  *correlation_id = r->correlation_id;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestCorrelationIdString(
    TRITONSERVER_InferenceRequest *r, const char **correlation_id) {
  if (r->correlation_id_string == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "given request's correlation id is not a string");
  *correlation_id = r->correlation_id_string;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetCorrelationId(
    TRITONSERVER_InferenceRequest *r, uint64_t correlation_id) {
  free(r->correlation_id_string);
  r->correlation_id_string = NULL;
  r->correlation_id = correlation_id;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetCorrelationIdString(
    TRITONSERVER_InferenceRequest *r, const char *correlation_id) {
  if (strlen(correlation_id) > 128)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "string correlation ID cannot be longer than 128 characters");
  char *copy = srv_strdup(correlation_id);
  free(r->correlation_id_string);
  r->correlation_id_string = copy;
  r->correlation_id = 0;
  return NULL;
}

/* ---- inputs ---- */

static srv_bls_input_t *input_find(TRITONSERVER_InferenceRequest *r, const char *name) {
  for (uint32_t i = 0; i < r->input_count; i++)
    if (strcmp(r->inputs[i].name, name) == 0) return &r->inputs[i];
  return NULL;
}

static TRITONSERVER_Error *no_such_input(const char *name) {
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                       "input '%s' does not exist in request", name);
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddInput(
    TRITONSERVER_InferenceRequest *r, const char *name,
    const TRITONSERVER_DataType datatype, const int64_t *shape, uint64_t dim_count) {
  if (input_find(r, name) != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "input '%s' already exists in request", name);
  if (dim_count > 64)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "input '%s' has %llu dimensions: at most 64 are supported", name,
                         (unsigned long long)dim_count);
  r->inputs = grow(r->inputs, r->input_count, &r->input_cap, sizeof *r->inputs);
  srv_bls_input_t *in = &r->inputs[r->input_count++];
  memset(in, 0, sizeof *in);
  in->name = srv_strdup(name);
  in->datatype = datatype;
  in->dims_count = (uint32_t)dim_count;
  in->shape = malloc((dim_count ? dim_count : 1) * sizeof *in->shape);
  if (in->shape == NULL) SRV_FATAL("out of memory");
  if (dim_count > 0) memcpy(in->shape, shape, dim_count * sizeof *shape);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveInput(
    TRITONSERVER_InferenceRequest *r, const char *name) {
  srv_bls_input_t *in = input_find(r, name);
  if (in == NULL) return no_such_input(name);
  input_free(in);
  *in = r->inputs[--r->input_count]; /* order of inputs carries no meaning */
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveAllInputs(
    TRITONSERVER_InferenceRequest *r) {
  for (uint32_t i = 0; i < r->input_count; i++) input_free(&r->inputs[i]);
  r->input_count = 0;
  return NULL;
}

/* The server reads inputs on the CPU (the backend may too), so only host
 * memory can be referenced; pinned host memory is host memory. */
TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputData(
    TRITONSERVER_InferenceRequest *r, const char *name, const void *base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id) {
  srv_bls_input_t *in = input_find(r, name);
  if (in == NULL) return no_such_input(name);
  if (memory_type != TRITONSERVER_MEMORY_CPU &&
      memory_type != TRITONSERVER_MEMORY_CPU_PINNED && memory_type != TRITONSERVER_MEMORY_GPU)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "input '%s': unknown memory type %d",
                         name, (int)memory_type);
  if (byte_size == 0) return NULL; /* as Triton: an empty piece adds no buffer */
  in->buffers = grow(in->buffers, in->buffer_count, &in->buffer_cap, sizeof *in->buffers);
  /* GPU data is passed on as it is: the receiving backend reads it where
   * it lies, or gets a host copy (TRITONBACKEND_InputBuffer). */
  in->buffers[in->buffer_count] =
      (srv_buffer_t){.base = base,
                     .size = byte_size,
                     .memory_type = memory_type == TRITONSERVER_MEMORY_GPU
                                        ? TRITONSERVER_MEMORY_GPU
                                        : TRITONSERVER_MEMORY_CPU,
                     .memory_type_id = memory_type == TRITONSERVER_MEMORY_GPU ? memory_type_id : 0};
  in->buffer_count++;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveAllInputData(
    TRITONSERVER_InferenceRequest *r, const char *name) {
  srv_bls_input_t *in = input_find(r, name);
  if (in == NULL) return no_such_input(name);
  in->buffer_count = 0;
  return NULL;
}

/* ---- requested outputs: a set, as in Triton ---- */

TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddRequestedOutput(
    TRITONSERVER_InferenceRequest *r, const char *name) {
  for (uint32_t i = 0; i < r->output_count; i++)
    if (strcmp(r->outputs[i], name) == 0) return NULL;
  r->outputs = grow(r->outputs, r->output_count, &r->output_cap, sizeof *r->outputs);
  r->outputs[r->output_count++] = srv_strdup(name);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveRequestedOutput(
    TRITONSERVER_InferenceRequest *r, const char *name) {
  for (uint32_t i = 0; i < r->output_count; i++) {
    if (strcmp(r->outputs[i], name) == 0) {
      free(r->outputs[i]);
      memmove(&r->outputs[i], &r->outputs[i + 1],
              (r->output_count - i - 1) * sizeof *r->outputs);
      r->output_count--;
      return NULL;
    }
  }
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    TRITONSERVER_InferenceRequest *r) {
  for (uint32_t i = 0; i < r->output_count; i++) free(r->outputs[i]);
  r->output_count = 0;
  return NULL;
}

/* ---- callbacks ---- */

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetReleaseCallback(
    TRITONSERVER_InferenceRequest *r,
    TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,
    void *request_release_userp) {
  r->release_fn = request_release_fn;
  r->release_userp = request_release_userp;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetResponseCallback(
    TRITONSERVER_InferenceRequest *r, TRITONSERVER_ResponseAllocator *response_allocator,
    void *response_allocator_userp,
    TRITONSERVER_InferenceResponseCompleteFn_t response_fn, void *response_userp) {
  r->allocator = response_allocator;
  r->allocator_userp = response_allocator_userp;
  r->response_fn = response_fn;
  r->response_userp = response_userp;
  return NULL;
}
