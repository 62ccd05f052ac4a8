/* ModelInfer (see infer_rpc.h). The call holds itself while the backend
 * owns the request (its inputs alias the call's received bytes), replies
 * when the response arrives, and is freed once the request is released.
 * A client cancel or an expired deadline cancels the request; the cancel
 * holds the call, and the request's state, until it comes back. The call
 * watches for them only once asked (README.md, "Cancellation watching"). */
#include "server/grpc/infer_rpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "actors/timer.h"
#include "grpc_service.upb.h"
#include "server/api/datatype.h"
#include "server/api/error.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/core.h"
#include "server/grpc/infer_aggregate.h"
#include "server/grpc/infer_request.h"
#include "server/grpc/infer_response.h"
#include "server/grpc/infer_slices.h"
#include "server/views/model_lookup.h"

typedef struct {
  srv_model_t *model;
  TRITONBACKEND_Request *request;
  bool replied;    /* the call has its answer (or it was cancelled) */
  bool released;   /* the backend is done with the request */
  bool aggregate;  /* decoupled, opted in: keep responses until the final */
  bool final_owed; /* answered early: a hold until the backend's final */
  bool lazy;       /* watches for a cancel only once asked (watch_msg) */
  bool watch_got;  /* the ask arrived */
  bool watch_held; /* an ask is on its way after watching ended: a hold */
  srv_aggregate_t kept;
  act_msg_t watch_msg; /* SRV_MSG_INFER_WATCH, sent by srv_request_watch_ask */
} infer_ctx_t;

static void send_end(void *ctx, bool sent) {
  if (sent) srv_trace_later_stamp(ctx, "GRPC_SEND_END");
  srv_trace_later_done(ctx);
}

/* A traced request's reply: GRPC_SEND_START now, GRPC_SEND_END when the
 * reply batch is over (after the request's trace may be released). */
static void send_traced(srv_call_t *call, infer_ctx_t *x) {
  TRITONSERVER_InferenceTrace *t = x->request->state->trace;
  srv_trace_stamp_now(t, "GRPC_SEND_START");
  srv_trace_later_t *l = srv_trace_later(t);
  if (l != NULL) srv_call_on_sent(call, send_end, l);
}

/* An aggregated reply, merged in the call's arena (so no output of it can
 * be taken over by a slice): serialized by upb, then copied into a slice. */
static void reply_encode(srv_call_t *call, infer_ctx_t *x,
                         const TRITONBACKEND_Response *r) {
  upb_Arena *a = srv_call_arena(call);
  inference_ModelInferResponse *resp =
      srv_infer_response_encode(x->model, x->request, r, a);
  size_t len;
  char *out = inference_ModelInferResponse_serialize(resp, a, &len);
  if (out == NULL) SRV_FATAL("out of memory");
  if (x->request->state->trace != NULL) send_traced(call, x);
  srv_call_reply(call, out, len);
}

/* The request's state (and with it the model) is ours until the backend
 * released the request, the call has its answer, and our cancel, if any,
 * is back. The last condition closes a race (issue 15, F1): the client
 * cancels, we send the cancel to the model actor; before that actor gets
 * to it, the backend (seeing the request cancelled) sends the final
 * response, the release is in too, and we used to drop the state here and
 * clear request->state; the model actor then read request->state: NULL, or
 * freed memory. */
static void state_drop_if_done(infer_ctx_t *x) {
  if (x->released && x->replied && !srv_request_cancel_out(x->request) &&
      x->request->state != NULL) {
    srv_infer_state_unref(x->request->state);
    x->request->state = NULL;
  }
}

static void reply_aggregated(srv_call_t *call, infer_ctx_t *x) {
  TRITONBACKEND_Response merged;
  srv_status_t *st = srv_aggregate_merge(&x->kept, srv_call_arena(call), &merged);
  if (st != NULL)
    srv_call_fail(call, st);
  else
    reply_encode(call, x, &merged);
  srv_aggregate_free(&x->kept);
}

/* A decoupled request was answered before the backend's final: the
 * backend may still send to the call, which must stay until the final. */
static void final_await(srv_call_t *call, infer_ctx_t *x, uint32_t flags) {
  if (!x->aggregate || (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL)) return;
  x->final_owed = true;
  srv_call_hold(call);
}

/* The backend's last word came (or none can come any more). */
static void final_arrived(srv_call_t *call, infer_ctx_t *x) {
  if (!x->final_owed) return;
  x->final_owed = false;
  srv_call_unhold(call); /* may free the call: nothing after this */
}

/* The aggregate passed a bound: the call fails now, and the request is
 * cancelled so that the backend stops; what it still sends is dropped. */
static void aggregate_overflow(srv_call_t *call, infer_ctx_t *x, srv_status_t *st,
                               uint32_t flags) {
  x->replied = true;
  srv_aggregate_free(&x->kept);
  srv_call_fail(call, st);
  final_await(call, x, flags);
  if (srv_request_cancel(x->request)) srv_call_hold(call);
}

static void response_handle(srv_call_t *call, infer_ctx_t *x, TRITONBACKEND_Response *r) {
  uint32_t flags = r->flags;
  if (x->replied) {
    if (!x->aggregate)
      SRV_WARN("model '%s' sent more than one response to request '%s'; extra dropped",
               srv_model_name(x->model), x->request->id);
    srv_response_free(r);
    if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) final_arrived(call, x);
    return;
  }
  if (r->error != NULL) {
    x->replied = true;
    srv_call_fail(
        call, srv_status_new(api_error_grpc_code(TRITONSERVER_ErrorCode(r->error)), "%s",
                             TRITONSERVER_ErrorMessage(r->error)));
    srv_response_free(r);
    srv_aggregate_free(&x->kept);
    final_await(call, x, flags);
  } else if (x->aggregate) {
    srv_status_t *st = srv_aggregate_add(&x->kept, r, srv_call_server(call)->options,
                                         srv_model_name(x->model), x->request->id);
    if (st != NULL) {
      srv_response_free(r);
      aggregate_overflow(call, x, st, flags);
      return;
    }
    if ((r->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) == 0) return;
    x->replied = true;
    reply_aggregated(call, x);
  } else {
    x->replied = true;
    /* Written once into the slices gRPC sends; large outputs by reference. */
    grpc_byte_buffer *reply =
        srv_infer_slices_encode(x->model, x->request, r, srv_call_arena(call));
    if (x->request->state->trace != NULL) send_traced(call, x);
    srv_call_reply_buffer(call, reply);
    srv_response_free(r);
  }
  state_drop_if_done(x);
}

static void final_flags_handle(srv_call_t *call, infer_ctx_t *x, uint32_t flags) {
  if ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) == 0) return;
  if (x->replied) {
    final_arrived(call, x); /* may free the call: nothing after this */
    return;
  }
  x->replied = true;
  if (x->aggregate)
    reply_aggregated(call, x);
  else
    srv_call_fail(call, srv_status_new(GRPC_STATUS_INTERNAL,
                                       "model '%s' completed request '%s' without a "
                                       "response",
                                       srv_model_name(x->model), x->request->id));
  state_drop_if_done(x);
}

static void infer_on_message(srv_call_t *call, void *ctx, act_msg_t *msg) {
  infer_ctx_t *x = ctx;
  switch (msg->kind) {
    case SRV_MSG_INFER_RESPONSE:
      response_handle(call, x, (TRITONBACKEND_Response *)msg);
      return;
    case SRV_MSG_INFER_FINAL_FLAGS: {
      srv_final_msg_t *f = (srv_final_msg_t *)msg;
      uint32_t flags = f->flags;
      srv_infer_state_unref(f->state);
      act_msg_free(msg);
      final_flags_handle(call, x, flags);
      return;
    }
    case SRV_MSG_INFER_RELEASED: {
      x->released = true;
      /* No ask can come after this; one already sent must arrive first. */
      if (x->lazy && srv_infer_state_watch_end(x->request->state) && !x->watch_got) {
        x->watch_held = true;
        srv_call_hold(call);
      }
      /* Ours is the last reference: no answer can come any more. */
      bool silent = srv_infer_state_only_held(x->request->state, 1);
      if (!x->replied && silent) {
        x->replied = true;
        srv_aggregate_free(&x->kept);
        srv_call_fail(call, srv_status_new(GRPC_STATUS_INTERNAL,
                                           "model '%s' released request '%s' without "
                                           "sending its final response",
                                           srv_model_name(x->model), x->request->id));
      }
      state_drop_if_done(x);
      if (silent) final_arrived(call, x); /* the release's hold keeps the call */
      srv_call_unhold(call);              /* may free the call: nothing after this */
      return;
    }
    case SRV_CALL_CANCELLED:
      /* The client left or its deadline passed: the model drops the request
       * if it still waits, and backends see it cancelled. A dropped state
       * means the request is back and answered: nothing to cancel. */
      if (x->request->state == NULL) return;
      if (srv_request_cancel(x->request)) srv_call_hold(call);
      return;
    case SRV_MSG_INFER_WATCH:
      /* The request takes time: watch from now on, unless the reply went
       * (its batch receives the close). */
      x->watch_got = true;
      if (!x->replied) srv_call_watch_cancel(call);
      if (x->watch_held) {
        x->watch_held = false;
        srv_call_unhold(call); /* may free the call: nothing after this */
      }
      return;
    case SRV_MSG_INFER_CANCEL_DONE:
      srv_request_cancel_back(msg);
      state_drop_if_done(x);
      srv_call_unhold(call); /* may free the call: nothing after this */
      return;
    default:
      SRV_FATAL("ModelInfer: unexpected message kind %u", msg->kind);
  }
}

/* Whether the request asks for aggregated decoupled responses. */
static bool wants_aggregate(const inference_ModelInferRequest *req) {
  inference_InferParameter *p;
  return inference_ModelInferRequest_parameters_get(
             req, upb_StringView_FromString(SRV_AGGREGATE_PARAMETER), &p) &&
         inference_InferParameter_parameter_choice_case(p) ==
             inference_InferParameter_parameter_choice_bool_param &&
         inference_InferParameter_bool_param(p);
}

void srv_rpc_model_infer(srv_call_t *call, const char *bytes, size_t len) {
  uint64_t start = act_now_ns();
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ModelInferRequest, "ModelInfer", bytes,
                           len);
  srv_server_t *srv = srv_call_server(call);
  upb_Arena *arena = srv_call_arena(call);
  srv_model_t *m = NULL;
  srv_status_t *st =
      srv_model_lookup(srv, inference_ModelInferRequest_model_name(req),
                       inference_ModelInferRequest_model_version(req), &m);
  srv_model_desc_t d;
  if (st == NULL) srv_model_describe(m, &d);
  bool aggregate = st == NULL && d.decoupled && wants_aggregate(req);
  if (st == NULL && d.decoupled && !aggregate)
    st =
        srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                       "ModelInfer RPC doesn't support models with decoupled transaction "
                       "policy (model '%s'); use ModelStreamInfer, or set the bool "
                       "parameter '" SRV_AGGREGATE_PARAMETER
                       "' to get all responses in "
                       "one reply",
                       d.name);
  TRITONBACKEND_Request *r = NULL;
  srv_shm_uses_t *uses = NULL;
  if (st == NULL) {
    st = srv_infer_request_build(m, &d, req, srv->shm, arena, &r, &uses);
    /* A request the model refused counts as one of its failures. */
    if (st != NULL)
      srv_stats_fail(srv_model_stats(m), SRV_FAIL_OTHER, act_now_ns() - start);
  }
  if (st != NULL) {
    if (m != NULL) srv_model_unref(m);
    srv_call_fail(call, st);
    return;
  }
  infer_ctx_t *x = upb_Arena_Malloc(arena, sizeof *x);
  if (x == NULL) SRV_FATAL("out of memory");
  memset(x, 0, sizeof *x);
  x->model = m;
  x->request = r;
  x->aggregate = aggregate;
  r->state = srv_infer_state_new(srv_call_actor(call));
  r->state->model = m; /* the lookup's reference: the model stays until the state goes */
  r->state->request_start_ns = start;
  r->state->shm = uses;
  r->state->trace_sample = true; /* a client's request: the tracer samples it */
  r->queue_start_ns = act_now_ns();
  srv_call_on_message(call, infer_on_message, x);
  /* Aggregated decoupled responses may take long without a poll: watched
   * at once. So is a call with a deadline: when it expires with no batch of
   * ours on the call, gRPC ends the stream alone and the client may read
   * CANCELLED (or UNAVAILABLE) instead of DEADLINE_EXCEEDED. Other requests
   * are watched once they wait or a backend polls. */
  if (aggregate || srv_call_has_deadline(call)) {
    srv_call_watch_cancel(call);
  } else {
    x->lazy = true;
    srv_infer_state_watch_lazily(r->state, &x->watch_msg);
  }
  srv_call_hold(call);
  srv_model_enqueue(m, r);
}
