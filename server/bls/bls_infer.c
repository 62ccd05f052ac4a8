/* TRITONSERVER_ServerInferAsync: checks a user's request against its model
 * (the checks gRPC uses, infer_check.h), builds the TRITONBACKEND_Request
 * the backend sees, and spawns a heap actor, the "flight", that owns the
 * request while it is in flight: it is the request's state->owner, turns
 * each backend response into the user's response (bls_response.c), calls
 * the response and release callbacks, and stops itself once both the final
 * response and the release were delivered. The check and build run on the
 * caller's thread; the flight's behaviour on the runtime's workers. */
#include <string.h>

#include "actors/timer.h"
#include "server/api/datatype.h"
#include "server/api/error.h"
#include "server/api/error_status.h"
#include "server/bls/bls.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/model/infer_check.h"
#include "server/model/response.h"
#include "server/trace/trace.h"

enum { FLIGHT_CHECK = 0x400, FLIGHT_STOP, FLIGHT_CANCEL };

/* The flight's link with its user request, in the state's outside_link.
 * TRITONSERVER_InferenceRequestCancel runs on the user's thread, outside
 * the actors, and may come at any time, even once the flight has stopped:
 * the user's request keeps a reference on the state (which outlives the
 * flight) and reaches the flight only through this word. The user sets
 * ASKED and sends the flight's cancel_ask message only if the flight was
 * still ALIVE and no ask had been sent; the flight clears ALIVE when it
 * would stop, and if an ask was sent that it has not received yet, it
 * waits for it: the message and the actor are the flight's memory. */
enum { LINK_ALIVE = 1u, LINK_ASKED = 2u };

typedef struct {
  TRITONBACKEND_Request request; /* its msg comes back when released */
  act_msg_t check_msg;           /* sent to itself, see on_release */
  act_msg_t stop_msg;            /* sent to itself: the flight owns it */
  act_msg_t cancel_ask;          /* the user's Cancel, see LINK_* */
  upb_Arena *arena;              /* holds this struct and all it points to */
  srv_bls_origin_t origin;
  /* Copied from the user's request, which is never read after the build:
   * the user may delete it in the release callback. */
  TRITONSERVER_InferenceRequest *user_request;
  TRITONSERVER_InferenceRequestReleaseFn_t release_fn;
  void *release_userp;
  TRITONSERVER_InferenceResponseCompleteFn_t response_fn;
  void *response_userp;
  bool decoupled;
  /* The behaviour's alone. */
  bool final_sent, released, stopping;
  bool unlinked;  /* ALIVE was cleared */
  bool ask_seen;  /* the user's ask came */
  bool ask_due;   /* an ask was sent that has not come yet */
} flight_t;

/* The input's data per host policy, each checked against the shape as
 * the input's own data is; lists copied, data the user's. */
static srv_status_t *policies_build(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                    const srv_bls_input_t *in, upb_Arena *arena,
                                    struct TRITONBACKEND_Input *out) {
  if (in->policy_count == 0) return NULL;
  srv_policy_data_t *p = srv_arena_alloc(arena, in->policy_count * sizeof *p);
  for (uint32_t i = 0; i < in->policy_count; i++) {
    const srv_bls_policy_data_t *from = &in->policies[i];
    srv_status_t *st = srv_check_input_data(m, spec, in->datatype, in->shape, in->dims_count,
                                            from->data.buffers, from->data.buffer_count,
                                            &p[i].byte_size);
    if (st != NULL) return st;
    p[i].policy = srv_arena_copy(arena, from->policy, strlen(from->policy) + 1);
    p[i].buffers = srv_arena_copy(arena, from->data.buffers,
                                  from->data.buffer_count * sizeof *from->data.buffers);
    p[i].buffer_count = from->data.buffer_count;
  }
  out->policies = p;
  out->policy_count = in->policy_count;
  return NULL;
}

/* One input, checked as gRPC checks its inputs; shape and buffer list are
 * copied, the data stays the user's. */
static srv_status_t *input_build(const srv_model_t *m, const srv_bls_input_t *in,
                                 upb_Arena *arena, struct TRITONBACKEND_Input *out) {
  const srv_tensor_spec_t *spec;
  srv_status_t *st = srv_check_input_spec(m, in->name, strlen(in->name), &spec);
  if (st != NULL) return st;
  const char *dt = api_datatype_protocol_name(in->datatype);
  if (dt == NULL) dt = "<invalid>"; /* Triton's name for a type it does not know */
  st = srv_check_input_datatype(m, spec, in->datatype, dt, strlen(dt));
  if (st == NULL) st = srv_check_input_shape(m, spec, in->shape, in->dims_count);
  if (st == NULL)
    st = srv_check_input_data(m, spec, in->datatype, in->shape, in->dims_count,
                              in->buffers, in->buffer_count, &out->byte_size);
  if (st != NULL) return st;
  out->name = spec->name;
  out->datatype = in->datatype;
  out->shape = srv_arena_copy(arena, in->shape, in->dims_count * sizeof *in->shape);
  out->dims_count = in->dims_count;
  out->buffers =
      srv_arena_copy(arena, in->buffers, in->buffer_count * sizeof *in->buffers);
  out->buffer_count = in->buffer_count;
  return policies_build(m, spec, in, arena, out);
}

static srv_status_t *inputs_build(const srv_model_t *m,
                                  const TRITONSERVER_InferenceRequest *u,
                                  upb_Arena *arena, TRITONBACKEND_Request *r) {
  /* Zeroed: fields not set here (a GPU input's host copy, `staged`) start
   * empty, as the release expects. */
  r->inputs = srv_arena_zalloc(arena, u->input_count * sizeof *r->inputs);
  srv_bls_input_t raw; /* the only input when set */
  srv_status_t *raw_st = srv_bls_raw_input(m, u, arena, &raw);
  if (raw_st != NULL) return raw_st;
  for (uint32_t i = 0; i < u->input_count; i++) {
    const srv_bls_input_t *in = raw.name != NULL ? &raw : &u->inputs[i];
    srv_status_t *st = input_build(m, in, arena, &r->inputs[i]);
    if (st != NULL) return st;
  }
  r->input_count = u->input_count;
  return srv_check_required_inputs(m, r);
}

static srv_status_t *outputs_build(const srv_model_t *m,
                                   const TRITONSERVER_InferenceRequest *u,
                                   upb_Arena *arena, TRITONBACKEND_Request *r) {
  if (u->output_count == 0) { /* all of the model's outputs */
    r->outputs = m->output_names;
    r->output_count = m->output_count;
    return NULL;
  }
  r->outputs = srv_arena_alloc(arena, u->output_count * sizeof *r->outputs);
  for (uint32_t i = 0; i < u->output_count; i++) {
    srv_status_t *st =
        srv_check_output_name(m, u->outputs[i], strlen(u->outputs[i]), &r->outputs[i]);
    if (st != NULL) return st;
  }
  r->output_count = u->output_count;
  return NULL;
}

/* The flight of request u, or why u cannot fly (then nothing was kept). */
static TRITONSERVER_Error *flight_build(TRITONSERVER_InferenceRequest *u,
                                        flight_t **out) {
  srv_model_t *m = u->model;
  upb_Arena *arena = upb_Arena_New();
  if (arena == NULL) SRV_FATAL("out of memory");
  flight_t *f = srv_arena_zalloc(arena, sizeof *f);
  f->arena = arena;
  TRITONBACKEND_Request *r = &f->request;
  r->model = m;
  r->id = srv_arena_copy(arena, u->id, strlen(u->id) + 1);
  r->correlation_id = u->correlation_id;
  if (u->correlation_id_string != NULL)
    r->correlation_id_string = srv_arena_copy(arena, u->correlation_id_string,
                                              strlen(u->correlation_id_string) + 1);
  r->flags = u->flags;
  srv_status_t *st = srv_bls_options_build(u, arena, r);
  if (st == NULL) st = inputs_build(m, u, arena, r);
  if (st == NULL) st = srv_check_batch(m, r);
  if (st == NULL) st = outputs_build(m, u, arena, r);
  if (st != NULL) {
    upb_Arena_Free(arena);
    return api_error_from_status(st);
  }
  f->origin = (srv_bls_origin_t){.model = m,
                                 .id = r->id,
                                 .outputs = r->outputs,
                                 .output_count = r->output_count,
                                 .allocator = u->allocator,
                                 .allocator_userp = u->allocator_userp};
  f->user_request = u;
  f->release_fn = u->release_fn;
  f->release_userp = u->release_userp;
  f->response_fn = u->response_fn;
  f->response_userp = u->response_userp;
  f->decoupled = m->decoupled;
  f->check_msg.kind = FLIGHT_CHECK;
  f->stop_msg.kind = FLIGHT_STOP;
  f->cancel_ask.kind = FLIGHT_CANCEL;
  *out = f;
  return NULL;
}

/* ---- the flight's behaviour ---- */

static void deliver(flight_t *f, TRITONSERVER_InferenceResponse *resp, uint32_t flags) {
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) f->final_sent = true;
  f->response_fn(resp, flags, f->response_userp);
}

static void on_response(flight_t *f, TRITONBACKEND_Response *r) {
  if (f->final_sent) {
    SRV_WARN("model '%s' sent a response to request '%s' after its final one; dropped",
             f->origin.model->name, f->origin.id);
    srv_response_free(r);
    return;
  }
  uint32_t flags = srv_response_final(f->decoupled, r->flags)
                       ? TRITONSERVER_RESPONSE_COMPLETE_FINAL
                       : 0;
  TRITONSERVER_InferenceResponse *resp = srv_bls_response_make(&f->origin, r);
  srv_response_free(r);
  deliver(f, resp, flags);
}

/* Flags without a response (TRITONBACKEND_ResponseFactorySendFlags): the
 * user gets a NULL response with them, as from Triton. */
static void on_flags(flight_t *f, uint32_t flags) {
  if (f->final_sent) {
    SRV_VERBOSE(1, "model '%s': flags %u for request '%s' after its final response",
                f->origin.model->name, flags, f->origin.id);
    return;
  }
  deliver(f, NULL, flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL);
}

/* The backend is done with the request; the user gets it back. If nothing
 * can answer it any more (no response or factory holds its state but us),
 * a final response that never came would keep the user waiting forever.
 * Responses and flags messages in flight hold references too, so nothing
 * is on its way; the failure is answered from a message of our own
 * (on_check), after the user's release callback. */
static void on_release(act_actor_t *self, flight_t *f) {
  f->released = true;
  /* Ours and the user request's (which it keeps until it is deleted or
   * flies again, neither of which may happen before this release). */
  if (!f->final_sent && srv_infer_state_only_held(f->request.state, 2))
    act_send(self, &f->check_msg);
  if (f->release_fn != NULL)
    f->release_fn(f->user_request, TRITONSERVER_REQUEST_RELEASE_ALL, f->release_userp);
}

static void on_check(flight_t *f) {
  if (f->final_sent) return;
  TRITONSERVER_Error *err =
      api_error_new(TRITONSERVER_ERROR_INTERNAL,
                    "model '%s' released request '%s' without sending its final response",
                    f->origin.model->name, f->origin.id);
  deliver(f, srv_bls_response_failed(&f->origin, err),
          TRITONSERVER_RESPONSE_COMPLETE_FINAL);
}

/* Whether nothing reads the flight on its cancel's behalf any more: no
 * cancel out at the model (../model/README.md, "Cancelling a request"),
 * and no ask from the user on its way (LINK_*). Once the final response
 * and the release are both in. */
static bool flight_may_stop(flight_t *f) {
  if (!f->unlinked) {
    f->unlinked = true;
    /* Acq_rel: pairs with the user's fetch_or; whichever comes second sees
     * the other, so an ask is either never sent or waited for. */
    uint32_t old = atomic_fetch_and_explicit(&f->request.state->outside_link, ~LINK_ALIVE,
                                             memory_order_acq_rel);
    f->ask_due = (old & LINK_ASKED) != 0 && !f->ask_seen;
  }
  return !f->ask_due && !srv_request_cancel_out(&f->request);
}

static void flight_behaviour(act_actor_t *self, act_msg_t *msg) {
  flight_t *f = act_actor_state(self);
  switch (msg->kind) {
    case SRV_MSG_INFER_RESPONSE:
      on_response(f, (TRITONBACKEND_Response *)msg);
      break;
    case SRV_MSG_INFER_FINAL_FLAGS:
      on_flags(f, srv_final_flags_take(msg));
      break;
    case SRV_MSG_INFER_RELEASED:
      on_release(self, f);
      break;
    case FLIGHT_CHECK:
      on_check(f);
      break;
    case FLIGHT_CANCEL:
      /* Nothing left to cancel once both are in; else as a client's. */
      f->ask_seen = true;
      f->ask_due = false;
      if (!f->final_sent || !f->released) srv_request_cancel(&f->request);
      break;
    case SRV_MSG_INFER_CANCEL_DONE:
      srv_request_cancel_back(msg);
      break;
    case FLIGHT_STOP: {
      /* The runtime frees the actor after this returns; f is ours to free. */
      upb_Arena *arena = f->arena;
      srv_infer_state_unref(f->request.state);
      upb_Arena_Free(arena);
      return;
    }
    default:
      SRV_FATAL("in-process request: unexpected message kind %u", msg->kind);
  }
  if (f->final_sent && f->released && !f->stopping && flight_may_stop(f)) {
    f->stopping = true;
    act_send_stop(self, &f->stop_msg);
  }
}

static void link_user(TRITONSERVER_InferenceRequest *u, flight_t *f);

TRITONSERVER_Error *TRITONSERVER_ServerInferAsync(TRITONSERVER_Server *server,
                                                  TRITONSERVER_InferenceRequest *u,
                                                  TRITONSERVER_InferenceTrace *trace) {
  srv_server_t *srv = (srv_server_t *)server;
  /* Triton's rule: requests are taken while exiting too, so that in-flight
   * work that spans several requests can finish. */
  srv_state_t state = srv_server_state(srv);
  if (state != SRV_STATE_READY && state != SRV_STATE_EXITING)
    return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  if (u->response_fn == NULL || u->allocator == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "inference request for model '%s' has no response callback "
                         "or allocator: call "
                         "TRITONSERVER_InferenceRequestSetResponseCallback first",
                         u->model->name);
  uint64_t start = act_now_ns();
  flight_t *f = NULL;
  TRITONSERVER_Error *err = flight_build(u, &f);
  if (err != NULL) return err;
  act_actor_t *self = act_spawn(srv->runtime, flight_behaviour, f);
  f->request.state = srv_infer_state_new(self);
  srv_model_ref(u->model); /* the flight may outlive the user's request */
  f->request.state->model = u->model;
  f->request.state->request_start_ns = start;
  /* The caller's trace (a child of its own request's, for a BLS call):
   * the request's from now, released with it (Triton's ownership). */
  f->request.state->trace = trace;
  link_user(u, f);
  f->request.queue_start_ns = act_now_ns();
  srv_model_enqueue(u->model, &f->request);
  return NULL;
}

/* ---- cancel, from the user's thread ---- */

void srv_bls_flight_unlink(TRITONSERVER_InferenceRequest *u) {
  if (u->flight_state == NULL) return;
  srv_infer_state_unref(u->flight_state);
  u->flight_state = NULL;
  u->flight_cancel = NULL;
}

/* u's link to its new flight f, before f's request reaches the model (so
 * before f can stop). The reference on the state is the user request's. */
static void link_user(TRITONSERVER_InferenceRequest *u, flight_t *f) {
  srv_bls_flight_unlink(u);
  /* Relaxed: the enqueue (a message) publishes it to the flight's thread,
   * and the user reads it on this thread. */
  atomic_store_explicit(&f->request.state->outside_link, LINK_ALIVE, memory_order_relaxed);
  srv_infer_state_ref(f->request.state);
  u->flight_state = f->request.state;
  u->flight_cancel = &f->cancel_ask;
  u->cancelled = false;
}

/* Triton's cancel of an in-process request: as a client's, the request is
 * dropped if it still waits in its model's queue, and its backend sees
 * TRITONBACKEND_RequestIsCancelled / ResponseFactoryIsCancelled. Once the
 * flight has stopped there is nothing left to cancel: a success. */
TRITONSERVER_Error *TRITONSERVER_InferenceRequestCancel(TRITONSERVER_InferenceRequest *u) {
  if (u == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "no inference request to cancel");
  if (u->flight_state == NULL)
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "request '%s' for model '%s' cannot be cancelled before "
                         "TRITONSERVER_ServerInferAsync sent it",
                         u->id, u->model->name);
  u->cancelled = true;
  /* Acq_rel: see flight_may_stop. Only the first ask, and only to a flight
   * that was still alive, is sent; it keeps the flight alive until it
   * arrives. */
  uint32_t old = atomic_fetch_or_explicit(&u->flight_state->outside_link, LINK_ASKED,
                                          memory_order_acq_rel);
  if ((old & LINK_ALIVE) != 0 && (old & LINK_ASKED) == 0)
    act_send(u->flight_state->owner, u->flight_cancel);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestIsCancelled(
    TRITONSERVER_InferenceRequest *u, _Bool *is_cancelled) {
  if (u == NULL || is_cancelled == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "TRITONSERVER_InferenceRequestIsCancelled needs a request and "
                         "a result");
  /* Relaxed: a flag that orders nothing, as for backends that poll it. */
  *is_cancelled =
      u->cancelled ||
      (u->flight_state != NULL &&
       atomic_load_explicit(&u->flight_state->cancelled, memory_order_relaxed));
  return NULL;
}
