/* The cancellable route (see call.h): TRITONSERVER_InferenceRequestCancel
 * is not implemented (server/api/unsupported.c), and srv_request_cancel
 * must come from the request's owner actor, so the call gets an actor of
 * its own, built as the gRPC frontend's ModelInfer builds its request:
 * checked with infer_check.h, sent with srv_model_enqueue; responses,
 * final flags, the release and the cancel's acknowledgement come back as
 * messages to the owner. The owner stops once it has the final flag, the
 * release and (when asked to cancel) the acknowledgement; the test thread
 * asks for the cancel and waits, both under the call's lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "test/backends/call_internal.h"

enum { DIRECT_CANCEL = 0x7100, DIRECT_STOP };

struct bt_direct {
  act_actor_t *actor; /* act_spawn'ed: the runtime frees it after its stop */
  bool decoupled;
  TRITONBACKEND_Request request; /* ours until the owner stops */
  struct TRITONBACKEND_Input inputs[BT_MAX_TENSORS];
  srv_buffer_t buffers[BT_MAX_TENSORS][BT_MAX_PIECES];
  const char *outputs[BT_MAX_TENSORS]; /* the model's own name strings */
  act_msg_t cancel_msg, stop_msg;
  /* The behaviour's alone. */
  bool cancel_sent, cancel_done;
};

void bt_direct_free(bt_direct_t *d) { free(d); }

/* ---- building the request ---- */

static srv_status_t *input_build(srv_model_t *m, const bt_input_t *in,
                                 struct TRITONBACKEND_Input *out, srv_buffer_t *buffers) {
  const srv_tensor_spec_t *spec = NULL;
  srv_status_t *st = srv_check_input_spec(m, in->name, strlen(in->name), &spec);
  if (st != NULL) return st;
  const char *dt = TRITONSERVER_DataTypeString(in->datatype);
  st = srv_check_input_datatype(m, spec, in->datatype, dt, strlen(dt));
  if (st == NULL) st = srv_check_input_shape(m, spec, in->shape, in->dims);
  uint32_t count = 0;
  for (uint32_t k = 0; k < in->pieces; k++) {
    uint64_t from, to;
    bt_input_piece(in, k, &from, &to);
    if (to > from) buffers[count++] = (srv_buffer_t){.base = in->data + from, .size = to - from};
  }
  if (st == NULL)
    st = srv_check_input_data(m, spec, in->datatype, in->shape, in->dims, buffers, count,
                              &out->byte_size);
  if (st != NULL) return st;
  out->name = spec->name; /* the model's pointer: the checks compare those */
  out->datatype = in->datatype;
  out->shape = in->shape;
  out->dims_count = in->dims;
  out->buffers = buffers;
  out->buffer_count = count;
  return NULL;
}

static srv_status_t *request_build(bt_call_t *c, srv_model_t *m, bt_direct_t *d) {
  srv_model_desc_t desc;
  srv_model_describe(m, &desc);
  d->decoupled = desc.decoupled;
  TRITONBACKEND_Request *r = &d->request;
  r->model = m;
  r->id = c->id != NULL ? c->id : "";
  r->inputs = d->inputs;
  for (uint32_t i = 0; i < c->input_count; i++) {
    srv_status_t *st = input_build(m, &c->inputs[i], &d->inputs[i], d->buffers[i]);
    if (st != NULL) return st;
  }
  r->input_count = c->input_count;
  srv_status_t *st = srv_check_required_inputs(m, r);
  if (st == NULL) st = srv_check_batch(m, r);
  if (st != NULL) return st;
  if (c->output_count == 0) { /* all of the model's, as the other routes do */
    r->outputs = (const char **)desc.output_names;
    r->output_count = desc.output_count;
    return NULL;
  }
  for (uint32_t i = 0; i < c->output_count; i++) {
    st = srv_check_output_name(m, c->outputs[i], strlen(c->outputs[i]), &d->outputs[i]);
    if (st != NULL) return st;
  }
  r->outputs = d->outputs;
  r->output_count = c->output_count;
  return NULL;
}

/* ---- the owner's behaviour ---- */

static void response_record(bt_call_t *c, bt_direct_t *d, TRITONBACKEND_Response *r) {
  bool final = srv_response_final(d->decoupled, r->flags);
  bt_sent_t s = {.flags = final ? TRITONSERVER_RESPONSE_COMPLETE_FINAL : 0,
                 .is_response = true};
  if (r->error != NULL) {
    s.code = TRITONSERVER_ErrorCode(r->error);
    s.error = strdup(TRITONSERVER_ErrorMessage(r->error));
  }
  s.output_count = r->output_count < BT_MAX_TENSORS ? r->output_count : BT_MAX_TENSORS;
  for (uint32_t i = 0; i < s.output_count; i++) {
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    bt_tensor_t *t = &s.outputs[i];
    snprintf(t->name, sizeof t->name, "%s", o->name);
    t->datatype = o->datatype;
    t->dims = o->dims_count < BT_MAX_DIMS ? o->dims_count : BT_MAX_DIMS;
    memcpy(t->shape, o->shape, t->dims * sizeof *t->shape);
    t->size = o->buffer != NULL ? o->byte_size : 0;
    t->data = t->size > 0 ? malloc(t->size) : NULL;
    if (t->data != NULL) memcpy(t->data, o->buffer, t->size);
  }
  srv_response_free(r);
  bt_record_sent(c, &s);
}

static void flags_record(bt_call_t *c, srv_final_msg_t *f) {
  bt_sent_t s = {.flags = f->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL};
  srv_infer_state_unref(f->state);
  act_msg_free(&f->msg);
  bt_record_sent(c, &s);
}

/* Under the call's lock, so that a cancel asked for meanwhile either comes
 * before this decision (and is waited for) or sees owner_stopping. */
static void stop_if_done(act_actor_t *self, bt_call_t *c, bt_direct_t *d) {
  pthread_mutex_lock(&c->mu);
  bool done = c->final_seen && c->released && !c->owner_stopping &&
              (!c->cancel_asked || d->cancel_done);
  if (done) c->owner_stopping = true;
  pthread_mutex_unlock(&c->mu);
  if (done) act_send_stop(self, &d->stop_msg);
}

static void owner_behaviour(act_actor_t *self, act_msg_t *msg) {
  bt_call_t *c = act_actor_state(self);
  bt_direct_t *d = c->direct;
  switch (msg->kind) {
    case SRV_MSG_INFER_RESPONSE:
      response_record(c, d, (TRITONBACKEND_Response *)msg);
      break;
    case SRV_MSG_INFER_FINAL_FLAGS:
      flags_record(c, (srv_final_msg_t *)msg);
      break;
    case SRV_MSG_INFER_RELEASED:
      bt_record_released(c);
      break;
    case DIRECT_CANCEL:
      d->cancel_sent = true;
      srv_request_cancel(&d->request);
      break;
    case SRV_MSG_INFER_CANCEL_DONE:
      d->cancel_done = true;
      break;
    case DIRECT_STOP:
      /* The last use of the request: its state (and with it the model
       * reference) goes; then the test may free the call. */
      srv_infer_state_unref(d->request.state);
      bt_record_owner_done(c);
      return;
    default:
      fprintf(stderr, "  call owner: unexpected message kind %u\n", msg->kind);
      abort();
  }
  stop_if_done(self, c, d);
}

/* ---- sending and cancelling ---- */

bool bt_call_send_cancellable(bt_call_t *c) {
  srv_model_t *m = NULL;
  srv_status_t *st =
      srv_registry_acquire(c->server->srv.registry, c->model, strlen(c->model), -1, &m);
  bt_direct_t *d = calloc(1, sizeof *d);
  if (d == NULL) abort();
  if (st == NULL) st = request_build(c, m, d);
  if (st != NULL) {
    fprintf(stderr, "  request for %s refused: %s\n", c->model, srv_status_message(st));
    srv_status_free(st);
    if (m != NULL) srv_model_unref(m);
    free(d);
    return false;
  }
  c->direct = d;
  d->cancel_msg.kind = DIRECT_CANCEL;
  d->stop_msg.kind = DIRECT_STOP;
  d->actor = act_spawn(c->server->srv.runtime, owner_behaviour, c);
  TRITONBACKEND_Request *r = &d->request;
  r->state = srv_infer_state_new(d->actor);
  r->state->model = m; /* the lookup's reference: dropped with the state */
  c->sent_ns = bt_now_ns();
  r->state->request_start_ns = act_now_ns();
  r->queue_start_ns = act_now_ns();
  srv_model_enqueue(m, r);
  return true;
}

void bt_call_cancel(bt_call_t *c) {
  pthread_mutex_lock(&c->mu);
  bool send = c->direct != NULL && !c->cancel_asked && !c->owner_stopping;
  if (send) c->cancel_asked = true;
  pthread_mutex_unlock(&c->mu);
  /* The owner cannot stop before it has handled this message: it waits for
   * the acknowledgement that the message leads to. */
  if (send) act_send(c->direct->actor, &c->direct->cancel_msg);
}
