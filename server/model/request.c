/* Request state and the TRITONBACKEND_Request* accessors. Accessors run on
 * the executing instance's thread (the backend's); release runs wherever
 * the backend calls it and hands the request back to its owner. */
#include "server/model/request.h"

#include <stdlib.h>
#include <string.h>

#include "actors/inline.h"
#include "server/api/error.h"
#include "server/common/block_pool.h"
#include "server/common/log.h"
#include "server/model/model.h"
#include "server/trace/trace.h"

/* One state per request, made on the frontend's thread and freed by its
 * last holder, often the backend's thread: a block pool (issue 21), whose
 * depot brings such blocks back in batches. */
static srv_block_pool_t state_pool =
    SRV_BLOCK_POOL_INIT(sizeof(srv_infer_state_t), 32, 32);

srv_infer_state_t *srv_infer_state_new(act_actor_t *owner) {
  srv_infer_state_t *s = srv_block_pool_alloc(&state_pool);
  memset(s, 0, sizeof *s);
  atomic_init(&s->refs, 1);
  s->owner = owner;
  return s;
}

void srv_infer_state_watch_lazily(srv_infer_state_t *s, act_msg_t *ask) {
  ask->kind = SRV_MSG_INFER_WATCH;
  s->watch_msg = ask;
  /* Relaxed: the request's send to its model publishes it. */
  atomic_store_explicit(&s->watch, SRV_WATCH_LAZY, memory_order_relaxed);
}

void srv_request_watch_ask(srv_infer_state_t *s) {
  /* Relaxed first look: EAGER states (most in-server requests) and those
   * asked already pay one load. */
  if (atomic_load_explicit(&s->watch, memory_order_relaxed) != SRV_WATCH_LAZY) return;
  uint8_t lazy = SRV_WATCH_LAZY;
  /* Relaxed: only one CAS wins, and the owner's watch_end exchange decides
   * against it alone; watch_msg was published to us with the request. */
  if (atomic_compare_exchange_strong_explicit(&s->watch, &lazy, SRV_WATCH_ASKED,
                                              memory_order_relaxed, memory_order_relaxed))
    act_send(s->owner, s->watch_msg);
}

bool srv_infer_state_watch_end(srv_infer_state_t *s) {
  /* Relaxed: the ask's message, not this word, carries what follows. */
  return atomic_exchange_explicit(&s->watch, SRV_WATCH_OFF, memory_order_relaxed) ==
         SRV_WATCH_ASKED;
}

void srv_infer_state_ref(srv_infer_state_t *s) {
  /* Relaxed: taking a reference needs no ordering, the holder has one. */
  atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void srv_infer_state_unref(srv_infer_state_t *s) {
  /* Acq_rel: the last holder must see every other holder's writes. */
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  if (s->trace != NULL) srv_trace_release(s->trace); /* its last entry is in */
  if (s->model != NULL) srv_model_unref(s->model);
  srv_shm_uses_free(s->shm);
  srv_block_pool_free(&state_pool, s);
}

TRITONSERVER_Error *TRITONBACKEND_RequestId(TRITONBACKEND_Request *request,
                                            const char **id) {
  *id = request->id;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestCorrelationId(TRITONBACKEND_Request *request,
                                                       uint64_t *id) {
  if (request->correlation_id_string != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "correlation ID of request '%s' is a string, not an integer",
                         request->id);
  *id = request->correlation_id;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestCorrelationIdString(
    TRITONBACKEND_Request *request, const char **id) {
  if (request->correlation_id_string == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "correlation ID of request '%s' is an integer, not a string",
                         request->id);
  *id = request->correlation_id_string;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestFlags(TRITONBACKEND_Request *request,
                                               uint32_t *flags) {
  *flags = request->flags;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request *request,
                                                    uint32_t *count) {
  *count = request->input_count + request->extra_count;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInputName(TRITONBACKEND_Request *request,
                                                   const uint32_t index,
                                                   const char **input_name) {
  TRITONBACKEND_Input *input = NULL;
  TRITONSERVER_Error *err = TRITONBACKEND_RequestInputByIndex(request, index, &input);
  if (err != NULL) return err;
  *input_name = input->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInput(TRITONBACKEND_Request *request,
                                               const char *name,
                                               TRITONBACKEND_Input **input) {
  /* The server's inputs first: a control input the config also declares
   * as a model input overrides what the client sent, as in Triton. */
  for (uint32_t i = 0; i < request->extra_count; i++) {
    if (strcmp(request->extra_inputs[i].name, name) == 0) {
      *input = &request->extra_inputs[i];
      return NULL;
    }
  }
  for (uint32_t i = 0; i < request->input_count; i++) {
    if (strcmp(request->inputs[i].name, name) == 0) {
      *input = &request->inputs[i];
      return NULL;
    }
  }
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "unknown request input name '%s'",
                       name);
}

TRITONSERVER_Error *TRITONBACKEND_RequestInputByIndex(TRITONBACKEND_Request *request,
                                                      const uint32_t index,
                                                      TRITONBACKEND_Input **input) {
  if (index < request->input_count) {
    *input = &request->inputs[index];
    return NULL;
  }
  if (index - request->input_count < request->extra_count) {
    *input = &request->extra_inputs[index - request->input_count];
    return NULL;
  }
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                       "input index %u out of range: request has %u inputs", index,
                       request->input_count + request->extra_count);
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputCount(TRITONBACKEND_Request *request,
                                                     uint32_t *count) {
  *count = request->output_count;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputName(TRITONBACKEND_Request *request,
                                                    const uint32_t index,
                                                    const char **output_name) {
  if (index >= request->output_count)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "output index %u out of range: request has %u outputs", index,
                         request->output_count);
  *output_name = request->outputs[index];
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputBufferProperties(
    TRITONBACKEND_Request *request, const char *name, size_t *byte_size,
    TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id) {
  /* No output size is known in advance; CPU memory is preferred. */
  (void)request;
  (void)name;
  if (byte_size != NULL) *byte_size = 0;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestRelease(TRITONBACKEND_Request *request,
                                                 uint32_t release_flags) {
  /* Triton crashes here; a release of nothing changes nothing. */
  if (request == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "request to release is NULL");
  if (release_flags != TRITONSERVER_REQUEST_RELEASE_ALL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "request release flags %u: only RELEASE_ALL is supported",
                         release_flags);
  /* Acq_rel exchange: a second release is a backend bug, reported not fatal. */
  if (atomic_exchange_explicit(&request->released, true, memory_order_acq_rel))
    return api_error_new(TRITONSERVER_ERROR_INTERNAL, "request '%s' released twice",
                         request->id);
  srv_request_pending_end(request); /* released without executing */
  if (request->state->trace != NULL)
    srv_trace_report(request->state->trace, TRITONSERVER_TRACE_REQUEST_END, act_now_ns(),
                     NULL);
  for (uint32_t i = 0; i < request->input_count; i++) srv_input_release(&request->inputs[i]);
  for (uint32_t i = 0; i < request->extra_count; i++)
    srv_input_release(&request->extra_inputs[i]);
  request->msg.kind = SRV_MSG_INFER_RELEASED;
  act_actor_t *to =
      request->release_to != NULL ? request->release_to : request->state->owner;
  act_send_inline(to, &request->msg);
  return NULL;
}
