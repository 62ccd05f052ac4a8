/* Responses, outputs and response factories (see response.h). Built on
 * backend threads; a factory may be used from any thread and outlive its
 * request, so it holds a reference on the request's shared state. */
#include "server/model/response.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/cache/cache_hook.h"
#include "server/common/block_pool.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/cuda/cuda.h"
#include "server/model/model.h"
#include "server/sched/reorder.h"
#include "server/trace/trace_request.h"

/* Responses are made on the backend's thread and freed where the owner
 * handles them: a block pool (issue 21). An ensemble's answer that borrows
 * more outputs than the inline ones is calloc'd, which `pooled` tells
 * apart. */
static srv_block_pool_t response_pool =
    SRV_BLOCK_POOL_INIT(sizeof(TRITONBACKEND_Response), 16, 32);

static TRITONBACKEND_Response *response_new(srv_infer_state_t *state) {
  TRITONBACKEND_Response *r = srv_block_pool_alloc(&response_pool);
  memset(r, 0, offsetof(TRITONBACKEND_Response, inline_outputs));
  r->pooled = true;
  r->outputs = r->inline_outputs;
  r->output_cap = SRV_RESPONSE_INLINE_OUTPUTS;
  r->msg.kind = SRV_MSG_INFER_RESPONSE;
  srv_infer_state_ref(state);
  r->state = state;
  return r;
}

TRITONBACKEND_Response *srv_response_new_borrowing(srv_infer_state_t *state,
                                                   uint32_t flags, uint32_t n) {
  TRITONBACKEND_Response *r;
  if (n <= SRV_RESPONSE_INLINE_OUTPUTS) {
    _Static_assert(SRV_RESPONSE_INLINE_OUTPUTS * sizeof(TRITONBACKEND_Response *) <=
                       SRV_RESPONSE_INLINE_BYTES,
                   "the lenders of the inline outputs fit the room");
    r = response_new(state);
    r->lenders = (TRITONBACKEND_Response **)(void *)r->inline_mem;
    r->inline_used = n * (uint32_t)sizeof *r->lenders;
  } else {
    r = calloc(1, sizeof *r + n * (sizeof *r->outputs + sizeof *r->lenders));
    if (r == NULL) SRV_FATAL("out of memory");
    r->outputs = (struct TRITONBACKEND_Output *)(r + 1);
    r->lenders = (TRITONBACKEND_Response **)(r->outputs + n);
    r->output_cap = n;
    r->msg.kind = SRV_MSG_INFER_RESPONSE;
    srv_infer_state_ref(state);
    r->state = state;
  }
  r->borrows = n != 0;
  r->flags = flags;
  return r;
}

/* From the response's own room when it fits (16-byte aligned), else
 * malloc'd; NULL only when malloc fails. */
static void *response_alloc(TRITONBACKEND_Response *r, size_t size) {
  size_t at = (r->inline_used + 15u) & ~(size_t)15u;
  if (size <= sizeof r->inline_mem && at <= sizeof r->inline_mem - size) {
    r->inline_used = (uint32_t)(at + size);
    return r->inline_mem + at;
  }
  r->spilled = true;
  return malloc(size);
}

static void response_release(const TRITONBACKEND_Response *r, void *p) {
  if (!srv_response_room_has(r, p)) free(p);
}

static char *response_strdup(TRITONBACKEND_Response *r, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = response_alloc(r, n);
  if (d == NULL) SRV_FATAL("out of memory");
  return memcpy(d, s, n);
}

void srv_response_lend_start(TRITONBACKEND_Response *r) {
  if (r->lent) return;
  r->lent = true;
  atomic_init(&r->holders, 1);
}

void srv_response_hold(TRITONBACKEND_Response *r) {
  /* Relaxed: the caller is a holder already. */
  atomic_fetch_add_explicit(&r->holders, 1, memory_order_relaxed);
}

void srv_response_free(TRITONBACKEND_Response *r) {
  /* Acq_rel: the last holder frees what the others read. */
  if (r->lent && atomic_fetch_sub_explicit(&r->holders, 1, memory_order_acq_rel) != 1)
    return;
  if (r->borrows) { /* its arrays live in its own block */
    for (uint32_t i = 0; i < r->lender_count; i++) srv_response_free(r->lenders[i]);
  } else {
    /* Only a response that spilled out of its room has parts to free. */
    for (uint32_t i = 0; r->spilled && i < r->output_count; i++) {
      if (!r->outputs[i].name_shared) response_release(r, r->outputs[i].name);
      response_release(r, r->outputs[i].shape);
      if (!r->outputs[i].in_place) response_release(r, r->outputs[i].buffer);
    }
    if (r->outputs != r->inline_outputs) free(r->outputs);
  }
  for (uint32_t i = 0; i < r->param_count; i++) {
    free(r->params[i].name);
    if (r->params[i].type == TRITONSERVER_PARAMETER_STRING) free(r->params[i].value.s);
  }
  /* Most responses have no parameters: free(NULL) costs jemalloc ~40
   * instructions. */
  if (r->params != NULL) free(r->params);
  if (r->error != NULL) TRITONSERVER_ErrorDelete(r->error);
  srv_infer_state_unref(r->state);
  if (r->pooled)
    srv_block_pool_free(&response_pool, r);
  else
    free(r);
}

TRITONSERVER_Error *TRITONBACKEND_ResponseNew(TRITONBACKEND_Response **response,
                                              TRITONBACKEND_Request *request) {
  *response = response_new(request->state);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response **response, TRITONBACKEND_ResponseFactory *factory) {
  *response = response_new(factory->state);
  return NULL;
}

/* NULL is a no-op, as in Triton: backends delete what a failed call left. */
TRITONSERVER_Error *TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response *response) {
  if (response != NULL) srv_response_free(response);
  return NULL;
}

static srv_response_param_t *param_add(TRITONBACKEND_Response *r, const char *name,
                                       TRITONSERVER_ParameterType type) {
  if (r->param_count == r->param_cap) {
    r->param_cap = r->param_cap ? 2 * r->param_cap : 4;
    r->params = realloc(r->params, r->param_cap * sizeof *r->params);
    if (r->params == NULL) SRV_FATAL("out of memory");
  }
  srv_response_param_t *p = &r->params[r->param_count++];
  p->name = srv_strdup(name);
  p->type = type;
  return p;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response *response, const char *name, const char *value) {
  param_add(response, name, TRITONSERVER_PARAMETER_STRING)->value.s = srv_strdup(value);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response *response, const char *name, const int64_t value) {
  param_add(response, name, TRITONSERVER_PARAMETER_INT)->value.i = value;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSetBoolParameter(
    TRITONBACKEND_Response *response, const char *name, const bool value) {
  param_add(response, name, TRITONSERVER_PARAMETER_BOOL)->value.b = value;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSetDoubleParameter(
    TRITONBACKEND_Response *response, const char *name, const double value) {
  param_add(response, name, TRITONSERVER_PARAMETER_DOUBLE)->value.d = value;
  return NULL;
}

/* The model's own string for its output `name`, NULL when it has none:
 * the response keeps the state, and the state the model, so the string
 * outlives the response, and readers (an ensemble taking a step's outputs)
 * may compare pointers. Backends most often make the outputs in the
 * config's order: that one is tried first. */
static const char *model_output_name(const TRITONBACKEND_Response *r, const char *name) {
  const srv_model_t *m = r->state->model;
  if (m == NULL) return NULL;
  uint32_t n = m->output_count, next = r->output_count;
  if (next < n &&
      (m->outputs[next].name == name || strcmp(m->outputs[next].name, name) == 0))
    return m->outputs[next].name;
  for (uint32_t k = 0; k < n; k++)
    if (k != next && strcmp(m->outputs[k].name, name) == 0) return m->outputs[k].name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseOutput(TRITONBACKEND_Response *response,
                                                 TRITONBACKEND_Output **output,
                                                 const char *name,
                                                 const TRITONSERVER_DataType datatype,
                                                 const int64_t *shape,
                                                 const uint32_t dims_count) {
  const char *own = model_output_name(response, name);
  for (uint32_t i = 0; i < response->output_count; i++)
    if (response->outputs[i].name == own ||
        (own == NULL && strcmp(response->outputs[i].name, name) == 0))
      return api_error_new(TRITONSERVER_ERROR_ALREADY_EXISTS,
                           "response already has an output named '%s'", name);
  if (response->output_count == response->output_cap) {
    response->output_cap =
        response->output_cap ? 2 * response->output_cap : SRV_RESPONSE_INLINE_OUTPUTS;
    struct TRITONBACKEND_Output *grown =
        response->outputs == response->inline_outputs
            ? malloc(response->output_cap * sizeof *grown)
            : realloc(response->outputs, response->output_cap * sizeof *grown);
    if (grown == NULL) SRV_FATAL("out of memory");
    if (response->outputs == response->inline_outputs)
      memcpy(grown, response->inline_outputs, sizeof response->inline_outputs);
    response->outputs = grown;
  }
  struct TRITONBACKEND_Output *o = &response->outputs[response->output_count++];
  char *o_name = own != NULL ? (char *)own : response_strdup(response, name);
  int64_t *o_shape =
      response_alloc(response, (dims_count ? dims_count : 1) * sizeof *o_shape);
  if (o_shape == NULL) SRV_FATAL("out of memory");
  if (dims_count) memcpy(o_shape, shape, dims_count * sizeof *shape);
  /* One store of the whole output, its buffer attributes the defaults of
   * api_buffer_attributes_init (0 bytes of CPU memory, id 0, no handle):
   * not a clear, then a second clear of the attributes (issue 21). */
  _Static_assert(TRITONSERVER_MEMORY_CPU == 0, "zeroed attributes are the defaults");
  *o = (struct TRITONBACKEND_Output){.name = o_name,
                                     .datatype = datatype,
                                     .shape = o_shape,
                                     .dims_count = dims_count,
                                     .response = response,
                                     .name_shared = own != NULL};
  o->shm = srv_shm_uses_output(response->state->shm, name);
  *output = o;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_OutputBuffer(TRITONBACKEND_Output *output,
                                               void **buffer,
                                               const uint64_t buffer_byte_size,
                                               TRITONSERVER_MemoryType *memory_type,
                                               int64_t *memory_type_id) {
  if (output->buffer != NULL)
    return api_error_new(TRITONSERVER_ERROR_ALREADY_EXISTS,
                         "output '%s' already has a buffer", output->name);
  const srv_shm_ref_t *shm = output->shm;
  if (shm != NULL && buffer_byte_size > shm->byte_size)
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "shared memory size specified with the request for output '%s' "
                         "(%llu bytes) should be at least %llu bytes to hold the results",
                         output->name, (unsigned long long)shm->byte_size,
                         (unsigned long long)buffer_byte_size);
  /* Straight into the client's region when the backend can write memory
   * of its kind: host memory always, GPU memory when it asked for that. */
  if (shm != NULL && (shm->memory_type == TRITONSERVER_MEMORY_CPU ||
                      *memory_type == TRITONSERVER_MEMORY_GPU)) {
    output->buffer = shm->addr;
    output->in_place = true;
    output->byte_size = buffer_byte_size;
    *buffer = shm->addr;
    *memory_type = shm->memory_type;
    *memory_type_id = shm->memory_type_id;
    api_buffer_attributes_describe(&output->attrs, buffer_byte_size, shm->memory_type,
                                   shm->memory_type_id, srv_shm_cuda_ipc_handle(shm));
    return NULL;
  }
  /* Else CPU memory whatever was asked: the frontend sends from host
   * memory, and srv_response_shm_settle copies to a GPU region. A small
   * buffer comes from the response's own room: never one that the reply's
   * slices take over (those are at least SRV_INFER_SLICE_MIN, 64 KiB). */
  output->buffer = response_alloc(output->response, buffer_byte_size ? buffer_byte_size : 1);
  if (output->buffer == NULL)
    return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE,
                         "cannot allocate %llu bytes for output '%s'",
                         (unsigned long long)buffer_byte_size, output->name);
  output->byte_size = buffer_byte_size;
  *buffer = output->buffer;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  api_buffer_attributes_describe(&output->attrs, buffer_byte_size, TRITONSERVER_MEMORY_CPU, 0,
                                 NULL);
  return NULL;
}

/* Triton's: the attributes of the buffer TRITONBACKEND_OutputBuffer gave
 * (defaults before), owned by the output. Triton's Python backend reads
 * them for every output, and writes a GPU output through the handle. */
TRITONSERVER_Error *TRITONBACKEND_OutputBufferAttributes(
    TRITONBACKEND_Output *output, TRITONSERVER_BufferAttributes **buffer_attributes) {
  if (output == NULL || buffer_attributes == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "output and buffer_attributes must not be NULL");
  *buffer_attributes = &output->attrs;
  return NULL;
}

/* Why the answer cannot stand, or NULL: an output placed in a region gets
 * there, and no region the request used faulted. */
static srv_status_t *shm_settle(TRITONBACKEND_Response *r) {
  const srv_shm_uses_t *uses = r->state->shm;
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct TRITONBACKEND_Output *o = &r->outputs[i];
    const srv_shm_ref_t *ref = srv_shm_uses_output(uses, o->name);
    if (ref == NULL || (o->in_place && o->buffer == ref->addr)) continue;
    if (o->byte_size > ref->byte_size)
      return srv_status_new(GRPC_STATUS_INTERNAL,
                            "shared memory size specified with the request for output "
                            "'%s' (%llu bytes) should be at least %llu bytes to hold the "
                            "results",
                            o->name, (unsigned long long)ref->byte_size,
                            (unsigned long long)o->byte_size);
    if (o->byte_size == 0) continue;
    srv_status_t *st = srv_cuda_copy(ref->addr, ref->memory_type, o->buffer,
                                     TRITONSERVER_MEMORY_CPU, o->byte_size,
                                     ref->memory_type_id);
    if (st != NULL) return st;
  }
  for (uint32_t i = 0; i < uses->count; i++)
    if (srv_shm_faulted(&uses->refs[i]))
      return srv_status_new(
          GRPC_STATUS_INVALID_ARGUMENT,
          "shared memory region '%s' shrank or was removed while the request used it",
          srv_shm_region_name(uses->refs[i].region));
  return NULL;
}

/* srv_response_shm_settle; static, so that ResponseSend's call inlines
 * the test that nearly every response stops at: no shared memory used
 * (issue 21). */
static inline void response_shm_settle(TRITONBACKEND_Response *r) {
  if (r->state->shm == NULL || r->error != NULL) return;
  srv_status_t *st = shm_settle(r);
  if (st == NULL) return;
  r->error = api_error_new(api_error_code_from_grpc(srv_status_code(st)), "%s",
                           srv_status_message(st));
  srv_status_free(st);
}

void srv_response_shm_settle(TRITONBACKEND_Response *r) { response_shm_settle(r); }

TRITONSERVER_Error *TRITONBACKEND_ResponseSend(TRITONBACKEND_Response *response,
                                               const uint32_t send_flags,
                                               TRITONSERVER_Error *error) {
  response->flags = send_flags;
  /* The error stays the backend's: Triton's backends delete it afterwards. */
  if (error != NULL)
    response->error = TRITONSERVER_ErrorNew(TRITONSERVER_ErrorCode(error),
                                            TRITONSERVER_ErrorMessage(error));
  response_shm_settle(response);
  srv_cache_on_send(response);
  if (response->state->trace != NULL) srv_trace_outputs(response->state->trace, response);
  srv_reorder_route(response->state, &response->msg);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_InferenceResponseOutputByName(
    TRITONBACKEND_Response *response, const char *name, TRITONSERVER_DataType *datatype,
    const int64_t **shape, uint64_t *dim_count) {
  for (uint32_t i = 0; i < response->output_count; i++) {
    if (strcmp(response->outputs[i].name, name) == 0) {
      *datatype = response->outputs[i].datatype;
      *shape = response->outputs[i].shape;
      *dim_count = response->outputs[i].dims_count;
      return NULL;
    }
  }
  return api_error_new(TRITONSERVER_ERROR_NOT_FOUND, "response has no output '%s'", name);
}

TRITONSERVER_Error *TRITONBACKEND_InferenceResponseOutput(
    TRITONBACKEND_Response *response, const uint32_t index, const char **name,
    TRITONSERVER_DataType *datatype, const int64_t **shape, uint64_t *dim_count) {
  if (index >= response->output_count)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "output index %u out of range: response has %u outputs", index,
                         response->output_count);
  *name = response->outputs[index].name;
  *datatype = response->outputs[index].datatype;
  *shape = response->outputs[index].shape;
  *dim_count = response->outputs[index].dims_count;
  return NULL;
}

/* ---- response factories ---- */

TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory **factory, TRITONBACKEND_Request *request) {
  srv_infer_state_t *s = request->state;
  /* Relaxed: the flag only decides who gets the embedded factory, whose
   * content was written before the request reached the backend. */
  struct TRITONBACKEND_ResponseFactory *f =
      !atomic_exchange_explicit(&s->factory_taken, true, memory_order_relaxed)
          ? &s->factory
          : malloc(sizeof *f);
  if (f == NULL) SRV_FATAL("out of memory");
  f->state = s;
  srv_infer_state_ref(s);
  *factory = f;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryDelete(
    TRITONBACKEND_ResponseFactory *factory) {
  if (factory == NULL) return NULL; /* Triton: deleting nothing succeeds */
  srv_infer_state_t *s = factory->state;
  /* The embedded one goes with the state: read before the reference. */
  if (factory != &s->factory) free(factory);
  srv_infer_state_unref(s);
  return NULL;
}

void srv_final_flags_send(srv_infer_state_t *state, uint32_t flags) {
  srv_final_msg_t *m = act_msg_alloc(sizeof *m);
  m->msg.kind = SRV_MSG_INFER_FINAL_FLAGS;
  m->flags = flags;
  srv_infer_state_ref(state);
  m->state = state;
  srv_reorder_route(state, &m->msg);
}

uint32_t srv_final_flags_take(act_msg_t *msg) {
  srv_final_msg_t *m = (srv_final_msg_t *)msg;
  uint32_t flags = m->flags;
  srv_infer_state_unref(m->state);
  act_msg_free(msg);
  return flags;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory *factory, const uint32_t send_flags) {
  srv_final_flags_send(factory->state, send_flags);
  return NULL;
}

/* Cancelled by its owner (client cancel, deadline), or by the server once
 * the exit timeout expired (srv_core_cancel). Relaxed: hints polled by the
 * backend; no data depends on them. `m` may be NULL (a state without a
 * model, in tests). */
static bool state_cancelled(srv_infer_state_t *s, srv_model_t *m) {
  if (atomic_load_explicit(&s->cancelled, memory_order_relaxed)) return true;
  return m != NULL && m->server != NULL && srv_server_cancelling(m->server);
}

/* A backend that polls cares about cancellation: its first poll asks a
 * lazy owner to start watching (request.h, SRV_WATCH_LAZY). */
TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory *factory, bool *is_cancelled) {
  srv_request_watch_ask(factory->state);
  *is_cancelled = state_cancelled(factory->state, factory->state->model);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestIsCancelled(TRITONBACKEND_Request *request,
                                                     bool *is_cancelled) {
  srv_request_watch_ask(request->state);
  *is_cancelled = state_cancelled(request->state, request->model);
  return NULL;
}
