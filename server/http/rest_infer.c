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
#include <strings.h>

#include "actors/timer.h"
#include "server/common/inflate.h"
#include "server/common/log.h"
#include "server/http/exchange.h"
#include "server/http/generate_json.h"
#include "server/http/infer_json.h"
#include "server/views/http_views.h"

enum { FLIGHT_SENT = 0x500, FLIGHT_DROPPED, FLIGHT_STOP };

typedef struct {
  act_actor_t actor;
  srv_rest_mode_t mode;
  uint32_t responses;    /* generate: answers with outputs seen */
  bool final, streaming; /* the final flag came; generate_stream began */
  int compress;          /* the answer's Content-Encoding: 0 none, 1 gzip, 2 deflate */
  char *compressed;      /* the compressed answer, ours */
  act_msg_t sent_msg, dropped_msg, stop_msg;
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

/* On the loop thread, when the client left before its answer. */
static void client_left(void *arg) {
  flight_t *f = arg;
  act_send(&f->actor, &f->dropped_msg);
}

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
  answer_error(f, srv_http_code_of_grpc(srv_status_code(st)), srv_status_message(st));
  srv_status_free(st);
}

/* A response that ends here: one after the answer (dropped), or an error
 * (the answer). True when r was taken. */
static bool response_settled(flight_t *f, TRITONBACKEND_Response *r) {
  if (f->answered) {
    srv_response_free(r);
    return true;
  }
  if (r->error == NULL) return false;
  answer_error(f, srv_http_status_of(TRITONSERVER_ErrorCode(r->error)),
               TRITONSERVER_ErrorMessage(r->error));
  srv_response_free(r);
  return true;
}

static void infer_response(flight_t *f, TRITONBACKEND_Response *r) {
  /* A model that is not decoupled answers once; more are dropped. */
  if (response_settled(f, r)) return;
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
  if (f->compress != 0) { /* Accept-Encoding: one compressed part */
    srv_piece_t *pieces = upb_Arena_Malloc(f->arena, n * sizeof *pieces);
    if (pieces == NULL) SRV_FATAL("out of memory");
    for (uint32_t i = 0; i < n; i++)
      pieces[i] = (srv_piece_t){parts[i].base, parts[i].len};
    size_t len;
    srv_deflate(pieces, n, f->compress == 1, &f->compressed, &len);
    parts[0] = (srv_http_bytes_t){f->compressed, len};
    n = 1;
    srv_http_add_header(f->x, "content-encoding", f->compress == 1 ? "gzip" : "deflate");
  }
  srv_http_body_t body = {parts, n, answer_sent, f};
  if (f->request->state->trace != NULL)
    srv_trace_stamp_now(f->request->state->trace, "HTTP_SEND_START");
  srv_http_reply(f->x, 200, type, &body);
  f->x = NULL;
}

/* generate: the one answer, as flat JSON. */
static void generate_answer(flight_t *f, TRITONBACKEND_Response *r) {
  const char *json;
  size_t len;
  srv_status_t *st =
      srv_http_generate_encode(&f->desc, f->request, r, f->arena, &json, &len);
  if (st != NULL) {
    srv_response_free(r);
    answer_status(f, st);
    return;
  }
  f->response = r;
  f->answered = true;
  srv_http_bytes_t *part = upb_Arena_Malloc(f->arena, sizeof *part);
  if (part == NULL) SRV_FATAL("out of memory");
  *part = (srv_http_bytes_t){json, len};
  srv_http_body_t body = {part, 1, answer_sent, f};
  if (f->request->state->trace != NULL)
    srv_trace_stamp_now(f->request->state->trace, "HTTP_SEND_START");
  srv_http_reply(f->x, 200, "application/json", &body);
  f->x = NULL;
}

/* generate_stream: one server-sent event, in memory of its own. */
static void stream_event(flight_t *f, const char *json, size_t len) {
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  size_t n;
  const char *event = srv_http_sse_event(json, len, a, &n);
  char *copy = malloc(n ? n : 1);
  if (copy == NULL) SRV_FATAL("out of memory");
  memcpy(copy, event, n);
  upb_Arena_Free(a);
  if (!f->streaming) {
    f->streaming = true;
    srv_http_stream_begin(f->x, 200, "text/event-stream; charset=utf-8");
  }
  srv_http_stream_write(f->x, copy, n, free, copy, false);
}

/* generate_stream: a response becomes an event; an error before any event
 * is the exchange's status, after one an event of its own (Triton). */
static void stream_response(flight_t *f, TRITONBACKEND_Response *r) {
  if (f->answered) {
    srv_response_free(r);
    return;
  }
  if (r->error != NULL && !f->streaming) {
    answer_error(f, srv_http_status_of(TRITONSERVER_ErrorCode(r->error)),
                 TRITONSERVER_ErrorMessage(r->error));
    srv_response_free(r);
    return;
  }
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  const char *json = NULL;
  size_t len = 0;
  if (r->error != NULL) {
    json = srv_http_error_body(TRITONSERVER_ErrorMessage(r->error), a, &len);
  } else if (r->output_count > 0) {
    srv_status_t *st = srv_http_generate_encode(&f->desc, f->request, r, a, &json, &len);
    if (st != NULL) {
      json = srv_http_error_body(srv_status_message(st), a, &len);
      srv_status_free(st);
    }
  }
  if (json != NULL) stream_event(f, json, len);
  upb_Arena_Free(a);
  srv_response_free(r);
}

/* The last word of generate_stream: the stream's end, or the error that
 * nothing was streamed before. */
static void stream_end(flight_t *f) {
  if (f->answered) return;
  if (!f->streaming) {
    srv_http_stream_begin(f->x, 200, "text/event-stream; charset=utf-8");
    f->streaming = true;
  }
  f->answered = true;
  srv_http_stream_write(f->x, "", 0, answer_sent, f, true);
  f->x = NULL;
}

/* The final flag of a decoupled model's request. */
static void on_final(flight_t *f) {
  f->final = true;
  if (f->mode == SRV_REST_GENERATE_STREAM) {
    stream_end(f);
  } else if (f->mode == SRV_REST_GENERATE && !f->answered) {
    TRITONBACKEND_Response *r = f->response;
    f->response = NULL;
    if (r != NULL)
      generate_answer(f, r);
    else
      answer_error(f, 400, "the model sent no response to generate");
  }
}

static void on_response(flight_t *f, TRITONBACKEND_Response *r) {
  bool final = srv_response_final(f->desc.decoupled, r->flags);
  if (final) f->final = true;
  switch (f->mode) {
    case SRV_REST_INFER:
      infer_response(f, r);
      return;
    case SRV_REST_GENERATE_STREAM:
      stream_response(f, r);
      if (final) stream_end(f);
      return;
    case SRV_REST_GENERATE:
      break;
  }
  /* generate: exactly one answer; a decoupled model's comes with the final
   * flag or before it, and a second one is an error. */
  if (response_settled(f, r)) return;
  if (r->output_count > 0 && ++f->responses > 1) {
    srv_response_free(r);
    answer_error(f, 400,
                 "generate returns one response, and the model sent more: use "
                 "generate_stream");
    return;
  }
  if (r->output_count > 0 && !f->desc.decoupled) {
    generate_answer(f, r);
    return;
  }
  if (r->output_count > 0) {
    f->response = r; /* sent with the final flag */
  } else {
    srv_response_free(r);
  }
  if (final) on_final(f);
}

static void flight_behaviour(act_actor_t *self, act_msg_t *msg) {
  flight_t *f = act_actor_state(self);
  switch (msg->kind) {
    case SRV_MSG_INFER_RESPONSE:
      on_response(f, (TRITONBACKEND_Response *)msg);
      break;
    case SRV_MSG_INFER_FINAL_FLAGS:
      if (srv_final_flags_take(msg) & TRITONSERVER_RESPONSE_COMPLETE_FINAL) on_final(f);
      break;
    case SRV_MSG_INFER_RELEASED:
      f->released = true;
      /* Nothing can answer any more when only our reference is left. */
      if (!f->final && srv_infer_state_only_held(f->request->state, 1)) {
        f->final = true;
        if (f->mode == SRV_REST_GENERATE_STREAM && f->streaming)
          stream_end(f);
        else if (!f->answered)
          answer_error(f, 500, "the model released the request without a response");
      }
      break;
    case FLIGHT_SENT:
      f->sent = true;
      /* The state, with the trace, is ours until FLIGHT_STOP. A stream's
       * events are not stamped (trace.md). */
      if (f->request->state->trace != NULL && f->mode != SRV_REST_GENERATE_STREAM)
        srv_trace_stamp_now(f->request->state->trace, "HTTP_SEND_END");
      break;
    case FLIGHT_DROPPED: /* nobody waits for the answer: stop the work */
      if (!f->final) srv_request_cancel(f->request);
      break;
    case SRV_MSG_INFER_CANCEL_DONE:
      srv_request_cancel_back(msg);
      break;
    case FLIGHT_STOP:
      /* The actor is embedded in f: nothing touches it after this. */
      if (f->response != NULL) srv_response_free(f->response);
      srv_infer_state_unref(f->request->state);
      upb_Arena_Free(f->arena);
      free(f->body);
      free(f->compressed);
      free(f);
      return;
    default:
      SRV_FATAL("HTTP inference: unexpected message kind %u", msg->kind);
  }
  /* Not before the final answer: the backend's messages come to us. */
  if (f->answered && f->released && f->sent && f->final &&
      !srv_request_cancel_out(f->request) && !f->stopping) {
    f->stopping = true;
    act_send_stop(self, &f->stop_msg);
  }
}

/* The value of Inference-Header-Content-Length (checked against the body
 * once it is inflated), or the whole body. */
static bool header_length(srv_http_exchange_t *x, size_t body_len, size_t *out,
                          bool *given) {
  srv_http_bytes_t v;
  *given = srv_http_header(x, "inference-header-content-length", &v);
  if (!*given) {
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
  return true;
}

static bool token_is(srv_http_bytes_t v, const char *t) {
  return v.len == strlen(t) && strncasecmp(v.base, t, v.len) == 0;
}

/* The answer's compression that Accept-Encoding asks for: gzip first,
 * then deflate (q-values are not weighed). */
static int answer_encoding(srv_http_exchange_t *x) {
  srv_http_bytes_t v;
  if (!srv_http_header(x, "accept-encoding", &v)) return 0;
  int found = 0;
  for (size_t i = 0; i < v.len;) {
    while (i < v.len && (v.base[i] == ' ' || v.base[i] == ',')) i++;
    size_t start = i;
    while (i < v.len && v.base[i] != ',' && v.base[i] != ';' && v.base[i] != ' ') i++;
    srv_http_bytes_t t = {v.base + start, i - start};
    if (token_is(t, "gzip")) return 1;
    if (token_is(t, "deflate")) found = 2;
    while (i < v.len && v.base[i] != ',') i++;
  }
  return found;
}

/* The body, ours: copied, or inflated (Content-Encoding gzip or deflate)
 * within --http-max-input-size. */
static srv_status_t *body_take(srv_server_t *srv, srv_http_exchange_t *x,
                               srv_http_bytes_t body, char **out, size_t *len) {
  srv_http_bytes_t enc;
  if (!srv_http_header(x, "content-encoding", &enc) || token_is(enc, "identity")) {
    *out = malloc(body.len ? body.len : 1);
    if (*out == NULL) SRV_FATAL("out of memory");
    memcpy(*out, body.base, body.len);
    *len = body.len;
    return NULL;
  }
  bool gzip = token_is(enc, "gzip");
  if (!gzip && !token_is(enc, "deflate"))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "unsupported Content-Encoding '%.*s': gzip, deflate or "
                          "identity",
                          (int)(enc.len > 64 ? 64 : enc.len), enc.base);
  srv_piece_t piece = {body.base, body.len};
  return srv_inflate(&piece, 1, gzip, (size_t)srv->options->http_max_input_size,
                     "the request body", "--http-max-input-size", out, len);
}

/* A request refused before it went to the model: the answer, and nothing
 * of the flight is left. */
static void refuse(flight_t *f, srv_status_t *st) {
  srv_http_reply_error(f->x, srv_http_code_of_grpc(srv_status_code(st)), "%s",
                       srv_status_message(st));
  srv_status_free(st);
  srv_model_unref(f->model);
  if (f->arena != NULL) upb_Arena_Free(f->arena);
  free(f->body);
  free(f);
}

void srv_rest_infer(srv_server_t *srv, srv_http_exchange_t *x, srv_model_t *m,
                    srv_rest_mode_t mode) {
  flight_t *f = calloc(1, sizeof *f);
  if (f == NULL) SRV_FATAL("out of memory");
  f->x = x;
  f->model = m;
  f->mode = mode;
  srv_model_describe(m, &f->desc);
  if (mode == SRV_REST_INFER && f->desc.decoupled) {
    /* Triton's UNSUPPORTED, which its HTTP frontend answers 501. */
    srv_http_reply_error(x, 501,
                         "HTTP end point doesn't support models with decoupled "
                         "transaction policy");
    srv_model_unref(m);
    free(f);
    return;
  }
  srv_http_bytes_t body = srv_http_body(x);
  size_t header_len;
  bool header_given;
  if (!header_length(x, body.len, &header_len, &header_given)) {
    srv_http_reply_error(x, 400,
                         "Inference-Header-Content-Length is not a byte count (body of "
                         "%zu bytes)",
                         body.len);
    srv_model_unref(m);
    free(f);
    return;
  }
  /* h2o frees the body with the connection; the request outlives that. A
   * compressed body is inflated into the copy, within the same limit. */
  srv_status_t *st = body_take(srv, x, body, &f->body, &body.len);
  if (st == NULL && mode == SRV_REST_INFER && !header_given) header_len = body.len;
  if (st == NULL && header_len > body.len)
    st =
        srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                       "Inference-Header-Content-Length %zu is past the body's %zu bytes",
                       header_len, body.len);
  if (st != NULL) {
    refuse(f, st);
    return;
  }
  f->arena = upb_Arena_New();
  if (f->arena == NULL) SRV_FATAL("out of memory");
  srv_shm_uses_t *uses = NULL; /* ours until the state takes it */
  st = mode == SRV_REST_INFER
           ? srv_http_infer_parse(m, &f->desc, f->body, body.len, header_len, srv->shm,
                                  f->arena, &f->request, &uses, &f->opts)
           : srv_http_generate_parse(m, &f->desc, f->body, body.len, f->arena,
                                     &f->request);
  if (st != NULL) {
    refuse(f, st);
    return;
  }
  f->sent_msg.kind = FLIGHT_SENT;
  f->dropped_msg.kind = FLIGHT_DROPPED;
  f->stop_msg.kind = FLIGHT_STOP;
  act_actor_init(&f->actor, srv->runtime, flight_behaviour, f);
  srv_infer_state_t *state = srv_infer_state_new(&f->actor);
  state->model = m; /* the lookup's reference, dropped with the state */
  uint64_t now = act_now_ns();
  state->request_start_ns = now;
  state->shm = uses; /* released with the state, as the gRPC frontend's */
  state->trace_sample = true; /* a client's request: the tracer samples it */
  TRITONBACKEND_Request *r = f->request;
  r->state = state;
  r->model = m;
  r->queue_start_ns = now;
  f->compress = mode == SRV_REST_INFER ? answer_encoding(x) : 0;
  srv_http_on_drop(x, client_left, f);
  srv_model_enqueue(m, r);
}
