/* TRITONSERVER_InferenceResponse (see bls.h): a backend's response as the
 * user of the in-process API receives it. Made by the request's owner actor
 * (outputs copied into buffers from the user's allocator), then owned by
 * the user, who reads and deletes it on any one thread. */
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/bls/bls.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/cuda/cuda.h"
#include "server/model/response.h"

typedef struct {
  char *name;
  TRITONSERVER_DataType datatype;
  int64_t *shape;
  uint32_t dims_count;
  void *buffer; /* from the allocator; NULL when it gave none */
  size_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  void *buffer_userp;
} bls_output_t;

struct TRITONSERVER_InferenceResponse {
  /* A reference, as Triton's response holds its model: the classification
   * labels are the model's. */
  srv_model_t *model;
  char *model_name;
  int64_t model_version;
  char *id;
  TRITONSERVER_Error *error; /* NULL on success */
  bls_output_t *outputs;
  uint32_t output_count;
  srv_response_param_t *params; /* taken from the backend's response */
  uint32_t param_count;
  /* The user keeps the allocator alive while its responses live. */
  TRITONSERVER_ResponseAllocator *allocator;
};

static void log_and_delete(TRITONSERVER_Error *err, const char *what) {
  if (err == NULL) return;
  SRV_ERROR("%s: %s", what, TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
}

/* Gives every buffer back to the allocator and drops the outputs. */
static void outputs_release(TRITONSERVER_InferenceResponse *resp) {
  TRITONSERVER_ResponseAllocator *a = resp->allocator;
  for (uint32_t i = 0; i < resp->output_count; i++) {
    bls_output_t *o = &resp->outputs[i];
    if (o->buffer != NULL && a->release_fn != NULL)
      log_and_delete(a->release_fn(a, o->buffer, o->buffer_userp, o->byte_size,
                                   o->memory_type, o->memory_type_id),
                     "response allocator failed to release an output buffer");
    free(o->name);
    free(o->shape);
  }
  free(resp->outputs);
  resp->outputs = NULL;
  resp->output_count = 0;
}

/* Moves the backend's output `from` into `to`, its bytes into a buffer the
 * allocator gives. `to` records the buffer before any check, so that a
 * failure still gives it back. Name and shape are taken from a response
 * that owns them in memory of their own, and copied from one that borrows
 * them (an ensemble's, whose outputs are its steps', ../model/response.h),
 * keeps them in its own room (srv_response_room_has) or names the output
 * with the model's own string (name_shared). */
static TRITONSERVER_Error *output_copy(const srv_bls_origin_t *o, bool owned,
                                       struct TRITONBACKEND_Output *from,
                                       bls_output_t *to) {
  TRITONSERVER_ResponseAllocator *a = o->allocator;
  if (owned && !from->name_shared && !srv_response_room_has(from->response, from->name) &&
      !srv_response_room_has(from->response, from->shape)) {
    to->name = from->name;
    from->name = NULL;
    to->shape = from->shape;
    from->shape = NULL;
  } else {
    to->name = srv_strdup(from->name);
    to->shape = malloc((from->dims_count ? from->dims_count : 1) * sizeof *to->shape);
    if (to->shape == NULL) SRV_FATAL("out of memory");
    if (from->dims_count > 0)
      memcpy(to->shape, from->shape, from->dims_count * sizeof *to->shape);
  }
  to->datatype = from->datatype;
  to->dims_count = from->dims_count;
  to->byte_size = from->byte_size;
  to->memory_type = TRITONSERVER_MEMORY_CPU;
  TRITONSERVER_Error *err = a->alloc_fn(
      a, to->name, to->byte_size, TRITONSERVER_MEMORY_CPU, 0, o->allocator_userp,
      &to->buffer, &to->buffer_userp, &to->memory_type, &to->memory_type_id);
  if (err != NULL) {
    to->buffer = NULL; /* the out-values of a failed allocation mean nothing */
    return err;
  }
  if (to->byte_size == 0) return NULL;
  if (to->buffer == NULL)
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "response allocator gave no buffer for the %zu bytes of output "
                         "'%s' of model '%s'",
                         to->byte_size, to->name, o->model->name);
  /* Wherever the allocator put it: GPU memory through the CUDA runtime. */
  srv_status_t *st = srv_cuda_copy(to->buffer, to->memory_type, from->buffer,
                                   TRITONSERVER_MEMORY_CPU, to->byte_size,
                                   to->memory_type_id);
  if (st == NULL) return NULL;
  TRITONSERVER_Error *copy_err =
      api_error_new(api_error_code_from_grpc(srv_status_code(st)),
                    "output '%s' of model '%s': %s", to->name, o->model->name,
                    srv_status_message(st));
  srv_status_free(st);
  return copy_err;
}

static bool requested(const srv_bls_origin_t *o, const char *name) {
  for (uint32_t i = 0; i < o->output_count; i++)
    if (strcmp(o->outputs[i], name) == 0) return true;
  return false;
}

/* Outputs in the order the backend made them, those requested only. */
static void outputs_fill(TRITONSERVER_InferenceResponse *resp, const srv_bls_origin_t *o,
                         TRITONBACKEND_Response *r) {
  resp->outputs = calloc(r->output_count ? r->output_count : 1, sizeof *resp->outputs);
  if (resp->outputs == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < r->output_count; i++) {
    if (!requested(o, r->outputs[i].name)) continue;
    TRITONSERVER_Error *err =
        output_copy(o, !r->borrows && !r->lent, &r->outputs[i],
                    &resp->outputs[resp->output_count++]);
    if (err != NULL) {
      outputs_release(resp);
      resp->error = err;
      return;
    }
  }
}

/* A response with no outputs yet; start_fn runs for every response made,
 * errors included, as in Triton. */
static TRITONSERVER_InferenceResponse *response_new(const srv_bls_origin_t *o) {
  TRITONSERVER_InferenceResponse *resp = calloc(1, sizeof *resp);
  if (resp == NULL) SRV_FATAL("out of memory");
  srv_model_ref(o->model);
  resp->model = o->model;
  resp->model_name = srv_strdup(o->model->name);
  resp->model_version = o->model->version;
  resp->id = srv_strdup(o->id);
  resp->allocator = o->allocator;
  if (o->allocator->start_fn != NULL)
    log_and_delete(o->allocator->start_fn(o->allocator, o->allocator_userp),
                   "response allocator failed to start a response");
  return resp;
}

TRITONSERVER_InferenceResponse *srv_bls_response_make(const srv_bls_origin_t *o,
                                                      TRITONBACKEND_Response *r) {
  TRITONSERVER_InferenceResponse *resp = response_new(o);
  resp->error = r->error;
  r->error = NULL;
  resp->params = r->params;
  resp->param_count = r->param_count;
  r->params = NULL;
  r->param_count = r->param_cap = 0;
  if (resp->error == NULL) outputs_fill(resp, o, r);
  return resp;
}

TRITONSERVER_InferenceResponse *srv_bls_response_failed(const srv_bls_origin_t *o,
                                                        TRITONSERVER_Error *err) {
  TRITONSERVER_InferenceResponse *resp = response_new(o);
  resp->error = err;
  return resp;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseDelete(
    TRITONSERVER_InferenceResponse *resp) {
  /* Triton's Python backend deletes the NULL response of a failed BLS
   * call; Triton treats it as nothing to do. */
  if (resp == NULL) return NULL;
  outputs_release(resp);
  for (uint32_t i = 0; i < resp->param_count; i++) {
    free(resp->params[i].name);
    if (resp->params[i].type == TRITONSERVER_PARAMETER_STRING)
      free(resp->params[i].value.s);
  }
  free(resp->params);
  if (resp->error != NULL) TRITONSERVER_ErrorDelete(resp->error);
  free(resp->model_name);
  free(resp->id);
  srv_model_unref(resp->model);
  free(resp);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseError(
    TRITONSERVER_InferenceResponse *resp) {
  return resp->error; /* still the response's: the caller must not delete it */
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseModel(
    TRITONSERVER_InferenceResponse *resp, const char **model_name,
    int64_t *model_version) {
  *model_name = resp->model_name;
  *model_version = resp->model_version;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseId(TRITONSERVER_InferenceResponse *resp,
                                                     const char **request_id) {
  *request_id = resp->id;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseParameterCount(
    TRITONSERVER_InferenceResponse *resp, uint32_t *count) {
  *count = resp->param_count;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseParameter(
    TRITONSERVER_InferenceResponse *resp, const uint32_t index, const char **name,
    TRITONSERVER_ParameterType *type, const void **vvalue) {
  if (index >= resp->param_count)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "out of bounds index %u: response has %u parameters", index,
                         resp->param_count);
  srv_response_param_t *p = &resp->params[index];
  *name = p->name;
  *type = p->type;
  switch (p->type) {
    case TRITONSERVER_PARAMETER_STRING:
      *vvalue = p->value.s;
      break;
    case TRITONSERVER_PARAMETER_INT:
      *vvalue = &p->value.i;
      break;
    case TRITONSERVER_PARAMETER_BOOL:
      *vvalue = &p->value.b;
      break;
    default:
      *vvalue = &p->value.d;
  }
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseOutputCount(
    TRITONSERVER_InferenceResponse *resp, uint32_t *count) {
  *count = resp->output_count;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceResponseOutput(
    TRITONSERVER_InferenceResponse *resp, const uint32_t index, const char **name,
    TRITONSERVER_DataType *datatype, const int64_t **shape, uint64_t *dim_count,
    const void **base, size_t *byte_size, TRITONSERVER_MemoryType *memory_type,
    int64_t *memory_type_id, void **userp) {
  if (index >= resp->output_count)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "out of bounds index %u: response has %u outputs", index,
                         resp->output_count);
  const bls_output_t *o = &resp->outputs[index];
  *name = o->name;
  *datatype = o->datatype;
  *shape = o->shape;
  *dim_count = o->dims_count;
  *base = o->buffer;
  *byte_size = o->byte_size;
  *memory_type = o->memory_type;
  *memory_type_id = o->memory_type_id;
  *userp = o->buffer_userp;
  return NULL;
}

/* Triton's: the label of class `class_index` of output `index` from the
 * output's label_filename, or NULL when it has none (no file, an index
 * past its lines). */
TRITONSERVER_Error *TRITONSERVER_InferenceResponseOutputClassificationLabel(
    TRITONSERVER_InferenceResponse *resp, const uint32_t index, const size_t class_index,
    const char **label) {
  if (resp == NULL || label == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "inference_response and label must not be NULL");
  if (index >= resp->output_count)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "out of bounds index %u: response has %u outputs", index,
                         resp->output_count);
  *label = NULL;
  srv_model_desc_t d;
  srv_model_describe(resp->model, &d);
  for (uint32_t i = 0; i < d.output_count; i++) {
    const srv_tensor_spec_t *spec = &d.outputs[i];
    if (strcmp(spec->name, resp->outputs[index].name) != 0) continue;
    if (class_index < spec->label_count) *label = spec->labels[class_index];
    break;
  }
  return NULL;
}
