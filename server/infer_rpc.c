/* ModelInfer (see infer_rpc.h). The call holds itself while the backend
 * owns the request (its inputs alias the call's received bytes), replies
 * when the response arrives, and is freed once the request is released. */
#include "server/infer_rpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "actors/timer.h"
#include "grpc_service.upb.h"
#include "server/api/datatype.h"
#include "server/api/error.h"
#include "server/core/response.h"
#include "server/infer_request.h"
#include "server/log.h"
#include "server/memory.h"
#include "server/model_lookup.h"

typedef struct {
  srv_model_t *model;
  TRITONBACKEND_Request *request;
  bool replied;
} infer_ctx_t;

static void params_encode(inference_ModelInferResponse *resp,
                          const TRITONBACKEND_Response *r, upb_Arena *a) {
  for (uint32_t i = 0; i < r->param_count; i++) {
    const srv_response_param_t *p = &r->params[i];
    inference_InferParameter *v = inference_InferParameter_new(a);
    switch (p->type) {
      case TRITONSERVER_PARAMETER_STRING:
        inference_InferParameter_set_string_param(v,
                                                  upb_StringView_FromString(p->value.s));
        break;
      case TRITONSERVER_PARAMETER_INT:
        inference_InferParameter_set_int64_param(v, p->value.i);
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        inference_InferParameter_set_bool_param(v, p->value.b);
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        inference_InferParameter_set_double_param(v, p->value.d);
        break;
      default:
        continue;
    }
    inference_ModelInferResponse_parameters_set(resp, upb_StringView_FromString(p->name),
                                                v, a);
  }
}

static bool output_requested(const TRITONBACKEND_Request *req, const char *name) {
  for (uint32_t i = 0; i < req->output_count; i++)
    if (strcmp(req->outputs[i], name) == 0) return true;
  return false;
}

/* Outputs in the order the backend made them; raw bytes are referenced and
 * copied once, by serialization. */
static void reply_encode(srv_call_t *call, infer_ctx_t *x,
                         const TRITONBACKEND_Response *r) {
  upb_Arena *a = srv_call_arena(call);
  inference_ModelInferResponse *resp = inference_ModelInferResponse_new(a);
  if (resp == NULL) SRV_FATAL("out of memory");
  inference_ModelInferResponse_set_model_name(resp,
                                              upb_StringView_FromString(x->model->name));
  inference_ModelInferResponse_set_model_version(
      resp, upb_StringView_FromString(x->model->version_string));
  inference_ModelInferResponse_set_id(resp, upb_StringView_FromString(x->request->id));
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    if (!output_requested(x->request, o->name)) continue;
    inference_ModelInferResponse_InferOutputTensor *t =
        inference_ModelInferResponse_add_outputs(resp, a);
    inference_ModelInferResponse_InferOutputTensor_set_name(
        t, upb_StringView_FromString(o->name));
    const char *dt = api_datatype_protocol_name(o->datatype);
    inference_ModelInferResponse_InferOutputTensor_set_datatype(
        t, upb_StringView_FromString(dt ? dt : ""));
    for (uint32_t d = 0; d < o->dims_count; d++)
      inference_ModelInferResponse_InferOutputTensor_add_shape(t, o->shape[d], a);
    upb_StringView bytes = {.data = o->buffer ? o->buffer : "", .size = o->byte_size};
    inference_ModelInferResponse_add_raw_output_contents(resp, bytes, a);
  }
  params_encode(resp, r, a);
  size_t len;
  char *out = inference_ModelInferResponse_serialize(resp, a, &len);
  if (out == NULL) SRV_FATAL("out of memory");
  srv_call_reply(call, out, len);
}

static void response_handle(srv_call_t *call, infer_ctx_t *x, TRITONBACKEND_Response *r) {
  if (x->replied) {
    SRV_WARN("model '%s' sent more than one response to request '%s'; extra dropped",
             x->model->name, x->request->id);
  } else if (r->error != NULL) {
    x->replied = true;
    srv_call_fail(
        call, srv_status_new(api_error_grpc_code(TRITONSERVER_ErrorCode(r->error)), "%s",
                             TRITONSERVER_ErrorMessage(r->error)));
  } else {
    x->replied = true;
    reply_encode(call, x, r);
  }
  srv_response_free(r);
}

static void infer_on_message(srv_call_t *call, void *ctx, act_msg_t *msg) {
  infer_ctx_t *x = ctx;
  switch (msg->kind) {
    case SRV_MSG_INFER_RESPONSE:
      response_handle(call, x, (TRITONBACKEND_Response *)msg);
      return;
    case SRV_MSG_INFER_FINAL_FLAGS:
      act_msg_free(msg);
      if (!x->replied) {
        x->replied = true;
        srv_call_fail(call, srv_status_new(GRPC_STATUS_INTERNAL,
                                           "model '%s' completed request '%s' without a "
                                           "response",
                                           x->model->name, x->request->id));
      }
      return;
    case SRV_MSG_INFER_RELEASED:
      srv_infer_state_unref(x->request->state);
      srv_call_unhold(call); /* may free the call: nothing after this */
      return;
    default:
      SRV_FATAL("ModelInfer: unexpected message kind %u", msg->kind);
  }
}

void srv_rpc_model_infer(srv_call_t *call, const char *bytes, size_t len) {
  uint64_t start = act_now_ns();
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ModelInferRequest, "ModelInfer", bytes,
                           len);
  srv_model_t *m = NULL;
  srv_status_t *st =
      srv_model_lookup(srv_call_server(call), inference_ModelInferRequest_model_name(req),
                       inference_ModelInferRequest_model_version(req), &m);
  if (st == NULL && m->decoupled)
    st =
        srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                       "ModelInfer RPC doesn't support models with decoupled transaction "
                       "policy (model '%s'); use ModelStreamInfer",
                       m->name);
  TRITONBACKEND_Request *r = NULL;
  if (st == NULL) {
    st = srv_infer_request_build(m, req, srv_call_arena(call), &r);
    /* A request the model refused counts as one of its failures. */
    if (st != NULL) srv_duration_add(&m->stats.fail, act_now_ns() - start);
  }
  if (st != NULL) {
    if (m != NULL) srv_model_unref(m);
    srv_call_fail(call, st);
    return;
  }
  infer_ctx_t *x = upb_Arena_Malloc(srv_call_arena(call), sizeof *x);
  if (x == NULL) SRV_FATAL("out of memory");
  x->model = m;
  x->request = r;
  x->replied = false;
  r->state = srv_infer_state_new(srv_call_actor(call));
  r->state->model = m; /* the lookup's reference: the model stays until the state goes */
  r->state->request_start_ns = start;
  r->queue_start_ns = act_now_ns();
  srv_call_on_message(call, infer_on_message, x);
  srv_call_hold(call);
  srv_model_enqueue(m, r);
}
