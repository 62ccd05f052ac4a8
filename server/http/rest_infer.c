/* POST /v2/models/{m}[/versions/{v}]/infer: one actor per request (the
 * request's owner, like a gRPC call), see http.md "Inference". The loop
 * thread copies the body, parses it into a checked request (infer_json.h)
 * and enqueues it; the actor gets the response and the release, encodes the
 * answer and hands it to the loop; the loop tells it when h2o is done with
 * the answer's bytes, and then it frees everything. */
#include "server/http/rest_infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/log.h"
#include "server/http/exchange.h"
#include "server/http/infer_json.h"

enum { FLIGHT_SENT = 0x500, FLIGHT_STOP };

typedef struct {
  act_actor_t actor;
  act_msg_t sent_msg, stop_msg;
  srv_http_exchange_t *x; /* NULL once answered */
  upb_Arena *arena;
  char *body; /* the request's copy: inputs point into it */
  srv_model_t *model;
  srv_model_desc_t desc;
  TRITONBACKEND_Request *request;
  srv_http_infer_opts_t opts;
  TRITONBACKEND_Response *response; /* kept while the loop sends it */
  bool answered, released, sent, stopping;
} flight_t;

/* On the loop thread, when h2o is done with the answer's bytes. */
static void answer_sent(void *arg) {
  flight_t *f = arg;
  act_send(&f->actor, &f->sent_msg);
}

static void answer_error(flight_t *f, int status, const char *message) {
  f->answered = true;
  f->sent = true; /* the error body is the exchange's own */
  srv_http_reply_error(f->x, status, "%s", message);
  f->x = NULL;
}

static void answer_status(flight_t *f, srv_status_t *st) {
  answer_error(f, srv_http_status_of_grpc(srv_status_code(st)), srv_status_message(st));
  srv_status_free(st);
}

static void on_response(flight_t *f, TRITONBACKEND_Response *r) {
  if (f->answered) { /* a model that is not decoupled answered twice */
    srv_response_free(r);
    return;
  }
  if (r->error != NULL) {
    answer_error(f, srv_http_status_of(TRITONSERVER_ErrorCode(r->error)),
                 TRITONSERVER_ErrorMessage(r->error));
    srv_response_free(r);
    return;
  }
  srv_http_infer_reply_t reply;
  srv_status_t *st =
      srv_http_infer_encode(&f->desc, f->request, &f->opts, r, f->arena, &reply);
  if (st != NULL) {
    srv_response_free(r);
    answer_status(f, st);
    return;
  }
  f->response = r;
  f->answered = true;
  uint32_t n = 1 + reply.part_count;
  srv_http_bytes_t *parts = upb_Arena_Malloc(f->arena, n * sizeof *parts);
  if (parts == NULL) SRV_FATAL("out of memory");
  parts[0] = (srv_http_bytes_t){reply.json, reply.json_len};
  for (uint32_t i = 0; i < reply.part_count; i++)
    parts[1 + i] = (srv_http_bytes_t){reply.parts[i].base, reply.parts[i].size};
  const char *type = "application/json";
  if (reply.part_count > 0) {
    char len[24];
    snprintf(len, sizeof len, "%zu", reply.json_len);
    srv_http_add_header(f->x, "inference-header-content-length", len);
    type = "application/octet-stream";
  }
  srv_http_body_t body = {parts, n, answer_sent, f};
  srv_http_reply(f->x, 200, type, &body);
  f->x = NULL;
}

static void flight_behaviour(act_actor_t *self, act_msg_t *msg) {
  flight_t *f = act_actor_state(self);
  switch (msg->kind) {
    case SRV_MSG_INFER_RESPONSE:
      on_response(f, (TRITONBACKEND_Response *)msg);
      break;
    case SRV_MSG_INFER_FINAL_FLAGS: { /* not decoupled: nothing to add */
      srv_infer_state_unref(((srv_final_msg_t *)msg)->state);
      act_msg_free(msg);
      break;
    }
    case SRV_MSG_INFER_RELEASED:
      f->released = true;
      /* Nothing can answer any more when only our reference is left. */
      if (!f->answered && srv_infer_state_only_held(f->request->state, 1))
        answer_error(f, 500, "the model released the request without a response");
      break;
    case FLIGHT_SENT:
      f->sent = true;
      break;
    case FLIGHT_STOP:
      /* The actor is embedded in f: nothing touches it after this. */
      if (f->response != NULL) srv_response_free(f->response);
      srv_infer_state_unref(f->request->state);
      upb_Arena_Free(f->arena);
      free(f->body);
      free(f);
      return;
    default:
      SRV_FATAL("HTTP inference: unexpected message kind %u", msg->kind);
  }
  if (f->answered && f->released && f->sent && !f->stopping) {
    f->stopping = true;
    act_send_stop(self, &f->stop_msg);
  }
}

/* The value of Inference-Header-Content-Length, or the whole body. */
static bool header_length(srv_http_exchange_t *x, size_t body_len, size_t *out) {
  srv_http_bytes_t v;
  if (!srv_http_header(x, "inference-header-content-length", &v)) {
    *out = body_len;
    return true;
  }
  size_t n = 0;
  if (v.len == 0 || v.len > 19) return false;
  for (size_t i = 0; i < v.len; i++) {
    if (v.base[i] < '0' || v.base[i] > '9') return false;
    n = n * 10 + (size_t)(v.base[i] - '0');
  }
  *out = n;
  return n <= body_len;
}

void srv_rest_infer(srv_server_t *srv, srv_http_exchange_t *x, srv_model_t *m) {
  flight_t *f = calloc(1, sizeof *f);
  if (f == NULL) SRV_FATAL("out of memory");
  f->x = x;
  f->model = m;
  srv_model_describe(m, &f->desc);
  if (f->desc.decoupled) {
    srv_http_reply_error(x, 400,
                         "HTTP end point doesn't support models with decoupled "
                         "transaction policy");
    srv_model_unref(m);
    free(f);
    return;
  }
  srv_http_bytes_t body = srv_http_body(x);
  size_t header_len;
  if (!header_length(x, body.len, &header_len)) {
    srv_http_reply_error(x, 400,
                         "Inference-Header-Content-Length is not a byte count within "
                         "the body of %zu bytes",
                         body.len);
    srv_model_unref(m);
    free(f);
    return;
  }
  /* h2o frees the body with the connection; the request outlives that. */
  f->body = malloc(body.len ? body.len : 1);
  if (f->body == NULL) SRV_FATAL("out of memory");
  memcpy(f->body, body.base, body.len);
  f->arena = upb_Arena_New();
  if (f->arena == NULL) SRV_FATAL("out of memory");
  srv_status_t *st = srv_http_infer_parse(m, &f->desc, f->body, body.len, header_len,
                                          f->arena, &f->request, &f->opts);
  if (st != NULL) {
    srv_http_reply_error(x, srv_http_status_of_grpc(srv_status_code(st)), "%s",
                         srv_status_message(st));
    srv_status_free(st);
    srv_model_unref(m);
    upb_Arena_Free(f->arena);
    free(f->body);
    free(f);
    return;
  }
  f->sent_msg.kind = FLIGHT_SENT;
  f->stop_msg.kind = FLIGHT_STOP;
  act_actor_init(&f->actor, srv->runtime, flight_behaviour, f);
  srv_infer_state_t *state = srv_infer_state_new(&f->actor);
  state->model = m; /* the lookup's reference, dropped with the state */
  uint64_t now = act_now_ns();
  state->request_start_ns = now;
  TRITONBACKEND_Request *r = f->request;
  r->state = state;
  r->model = m;
  r->queue_start_ns = now;
  srv_model_enqueue(m, r);
}
