/* Building a TRITONSERVER_InferenceRequest (see bls.h): the calls a user
 * makes on a request it owns, on its own thread. Nothing here checks the
 * request against the model beyond the model's name: as in Triton, that
 * happens at TRITONSERVER_ServerInferAsync (bls_infer.c). */
#include <stdlib.h>
#include <string.h>

#include "server/api/buffer_attributes.h"
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

static void policies_free(srv_bls_input_t *in) {
  for (uint32_t i = 0; i < in->policy_count; i++) {
    free(in->policies[i].policy);
    free(in->policies[i].data.buffers);
  }
  free(in->policies);
  in->policies = NULL;
  in->policy_count = in->policy_cap = 0;
}

static void input_free(srv_bls_input_t *in) {
  free(in->name);
  free(in->shape);
  free(in->buffers);
  policies_free(in);
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestDelete(
    TRITONSERVER_InferenceRequest *r) {
  if (r == NULL) return NULL; /* Triton: deleting nothing succeeds */
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

/* Triton's: an input whose name, type and shape come from the model's only
 * input when the request is sent (srv_bls_raw_input); it must be the
 * request's only input. */
TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddRawInput(
    TRITONSERVER_InferenceRequest *r, const char *name) {
  if (name == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "raw input name must not be NULL");
  if (r->input_count != 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "raw input '%s' can't be added to request with other inputs", name);
  TRITONSERVER_Error *err =
      TRITONSERVER_InferenceRequestAddInput(r, name, TRITONSERVER_TYPE_INVALID, NULL, 0);
  if (err == NULL) r->inputs[r->input_count - 1].raw = true;
  return err;
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

/* Appends a piece to a buffer list. The server reads inputs on the CPU
 * (the backend may too), so host memory is referenced as such; pinned host
 * memory is host memory. GPU data is passed on as it is: the receiving
 * backend reads it where it lies, or gets a host copy
 * (TRITONBACKEND_InputBuffer). */
static TRITONSERVER_Error *piece_append(srv_buffer_t **buffers, uint32_t *count,
                                        uint32_t *cap, const char *name, const void *base,
                                        size_t byte_size, TRITONSERVER_MemoryType memory_type,
                                        int64_t memory_type_id) {
  if (memory_type != TRITONSERVER_MEMORY_CPU &&
      memory_type != TRITONSERVER_MEMORY_CPU_PINNED && memory_type != TRITONSERVER_MEMORY_GPU)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "input '%s': unknown memory type %d",
                         name, (int)memory_type);
  if (byte_size == 0) return NULL; /* as Triton: an empty piece adds no buffer */
  *buffers = grow(*buffers, *count, cap, sizeof **buffers);
  bool gpu = memory_type == TRITONSERVER_MEMORY_GPU;
  (*buffers)[(*count)++] =
      (srv_buffer_t){.base = base,
                     .size = byte_size,
                     .memory_type = gpu ? TRITONSERVER_MEMORY_GPU : TRITONSERVER_MEMORY_CPU,
                     .memory_type_id = gpu ? memory_type_id : 0};
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputData(
    TRITONSERVER_InferenceRequest *r, const char *name, const void *base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id) {
  srv_bls_input_t *in = input_find(r, name);
  if (in == NULL) return no_such_input(name);
  return piece_append(&in->buffers, &in->buffer_count, &in->buffer_cap, name, base,
                      byte_size, memory_type, memory_type_id);
}

/* Triton's: the attributes give type, device and size; the CUDA IPC
 * handle is not needed, the server reads GPU data in its own process. */
TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    TRITONSERVER_InferenceRequest *r, const char *name, const void *base,
    TRITONSERVER_BufferAttributes *buffer_attributes) {
  if (buffer_attributes == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "input '%s': buffer_attributes must not be NULL", name);
  return TRITONSERVER_InferenceRequestAppendInputData(
      r, name, base, buffer_attributes->byte_size, buffer_attributes->memory_type,
      buffer_attributes->memory_type_id);
}

/* Triton's: data that instances of host policy `host_policy_name` ("cpu",
 * "gpu_<device>", TRITONBACKEND_ModelInstanceHostPolicy) read instead of
 * the input's own (TRITONBACKEND_InputBufferForHostPolicy). */
TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
    TRITONSERVER_InferenceRequest *r, const char *name, const void *base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id,
    const char *host_policy_name) {
  srv_bls_input_t *in = input_find(r, name);
  if (in == NULL) return no_such_input(name);
  if (host_policy_name == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "input '%s': host_policy_name must not be NULL", name);
  srv_bls_policy_data_t *p = NULL;
  for (uint32_t i = 0; i < in->policy_count && p == NULL; i++)
    if (strcmp(in->policies[i].policy, host_policy_name) == 0) p = &in->policies[i];
  if (p == NULL) {
    in->policies = grow(in->policies, in->policy_count, &in->policy_cap, sizeof *in->policies);
    p = &in->policies[in->policy_count++];
    *p = (srv_bls_policy_data_t){.policy = srv_strdup(host_policy_name)};
  }
  return piece_append(&p->data.buffers, &p->data.buffer_count, &p->data.buffer_cap, name,
                      base, byte_size, memory_type, memory_type_id);
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveAllInputData(
    TRITONSERVER_InferenceRequest *r, const char *name) {
  srv_bls_input_t *in = input_find(r, name);
  if (in == NULL) return no_such_input(name);
  in->buffer_count = 0;
  policies_free(in); /* Triton drops the host policies' data too */
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
