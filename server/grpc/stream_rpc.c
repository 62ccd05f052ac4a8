/* ModelStreamInfer streams (see stream_rpc.h): one actor per stream, the
 * only one to start batches on its call. It keeps a receive-close batch
 * outstanding from the start (to learn of a client cancel or an expired
 * deadline), at most one receive and one send in flight, and sends the
 * status last. Completion-queue threads deliver its tags; backends'
 * threads send it responses, final flags and released requests.
 *
 * Each received request gets a record, and an arena that also owns the
 * received bytes (the request's inputs alias them). The arena starts in a
 * 4 KiB block of a block pool shared by all streams (issue 21), not in a
 * block of the stream's own: a stream has many requests in flight, each
 * aliased by its request until it comes back, so no block can be reused
 * for the next message before its request is done. The arena goes once
 * the request's final response was handled, the backend released it, and,
 * if it was cancelled, the model actor handed the cancel back. The record
 * itself may stay a little longer: until none of its responses waits to be
 * written, since the write queue counts them against it. Records are
 * reused (up to 64 spares per stream) and otherwise come from a block
 * pool shared by all streams, so a request costs no allocation of its
 * own, in a new stream too.
 *
 * Writes wait in a FIFO (stream_writes.h), each serialized as soon as its
 * response arrives. When more than WRITES_HIGH wait, the stream stops
 * receiving, so HTTP/2 flow control holds a client that sends faster than
 * it reads; it receives again once fewer than WRITES_LOW wait. That holds
 * back new requests only: one already running may keep sending (a
 * decoupled one, thousands of responses), and a client that stops reading
 * left all of them queued. So what waits is bounded, in responses and
 * bytes, per request and per stream (--grpc-request-max-queued-*,
 * --grpc-stream-max-queued-*): a response that does not fit ends its
 * request. The client gets an error response in its place, final; the
 * request is cancelled, so the backend learns to stop from
 * TRITONBACKEND_ResponseFactoryIsCancelled; what the backend still sends
 * for it is dropped. Never blocking the backend's thread is the point: the
 * client may never read again, and that thread serves other requests. A
 * response always fits an empty queue, however large: the bounds are on
 * backlog, not on a response's size.
 * A send that has more queued behind it carries GRPC_WRITE_BUFFER_HINT:
 * gRPC then completes it at once and coalesces it with the next into
 * fewer frames and writes; the last one queued goes without the hint and
 * flushes them all (repeat_int32, 5000 responses per stream, h2load:
 * about +15% responses/s on one stream, +75% on four).
 *
 * End: after the client's half-close, once no request is in flight and
 * every write is out, the status is OK. A client cancel or deadline
 * cancels every request still in flight, drops what waits to be written,
 * and waits for each request to come back. The stream frees itself once
 * its call closed, no batch is in flight and no record is left. */
#include "server/grpc/stream_rpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "grpc_service.upb.h"
#include "server/common/block_pool.h"
#include "server/common/log.h"
#include "server/core/core.h"
#include "server/grpc/handoff.h"
#include "server/grpc/health_port.h"
#include "server/grpc/infer_request.h"
#include "server/grpc/message_bytes.h"
#include "server/grpc/restrict.h"
#include "server/grpc/stream_response.h"
#include "server/grpc/stream_sequences.h"
#include "server/grpc/stream_writes.h"
#include "server/grpc/tag.h"
#include "server/views/model_lookup.h"
#include "upb/decode.h"

#define WRITES_HIGH 128u
#define WRITES_LOW (WRITES_HIGH / 2)

enum {
  STREAM_NEW = 1,
  STREAM_RECEIVED,
  STREAM_SENT,
  STREAM_STATUS_SENT,
  STREAM_CLOSED,
  STREAM_STOP,
};

/* Spare records a stream keeps for reuse. */
#define SPARE_RECORDS 64u

/* Where a request's arena starts: most messages (and the request built
 * from them) fit, larger ones grow the arena with mallocs. Made and freed
 * by stream actors on any worker thread; the pool's per-thread caches and
 * its depot bound what idles (../common/block_pool.md). */
enum { STREAM_ARENA_BYTES = 4096 };
static srv_block_pool_t arena_pool = SRV_BLOCK_POOL_INIT(STREAM_ARENA_BYTES, 16, 32);

/* One request of the stream, from its arrival until it came back and none
 * of its responses waits to be written. */
typedef struct stream_req {
  upb_Arena *arena;        /* the decoded message, the request; NULL once done */
  void *arena_block;       /* where the arena starts, from arena_pool */
  grpc_byte_buffer *bytes; /* the received message */
  grpc_slice flat;         /* its flat copy, when it was not one plain slice */
  TRITONBACKEND_Request *request;
  srv_infer_state_t *state;       /* our own reference: a cancel may follow the release */
  struct stream_req *prev, *next; /* s->reqs while in flight; s->spare after */
  srv_write_tally_t queued;       /* its responses waiting to be written */
  bool empty_final; /* the client asked for triton_enable_empty_final_response */
  bool decoupled;   /* its model's transaction policy */
  bool final_done;  /* its final response was sent or dropped */
  bool released;
  bool exhausted; /* ended by a bound: the client has its error, the rest goes */
} stream_req_t;

typedef struct {
  act_actor_t actor;
  srv_frontend_t *fe;
  const srv_options_t *opt; /* the bounds */
  size_t rpc;
  unsigned cq;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array request_md;
  grpc_byte_buffer *received; /* the receive's target */
  grpc_byte_buffer *sending;  /* the message of the send in flight */
  srv_trace_later_t *sending_trace; /* its request's trace, when traced */
  srv_write_queue_t writes;
  grpc_slice status_details;
  stream_req_t *reqs; /* records in flight */
  uint32_t req_count;
  stream_req_t *spare; /* records to reuse */
  uint32_t spare_count;
  srv_stream_sequences_t seqs; /* sequences it started and did not end */
  int cancelled;               /* set by the receive-close */
  bool counted;                /* srv_frontend_call_begin was called */
  bool initial_md_sent;
  bool recv_busy, send_busy, status_busy;
  bool read_paused; /* too many writes wait: back-pressure on the client */
  bool read_done;   /* the client half-closed, or receiving failed */
  bool mute;        /* nothing more can be sent: writes and responses are dropped */
  bool aborted;     /* cancelled: every request in flight was cancelled */
  bool status_sent, closed, stopping;
  srv_tag_t tag_new, tag_received, tag_sent, tag_status_sent, tag_closed;
  act_msg_t stop_msg;
} stream_t;

static void stream_behaviour(act_actor_t *self, act_msg_t *msg);

/* Records beyond a stream's spares come from a pool shared by all streams,
 * so a new stream's first requests allocate nothing either. */
static srv_block_pool_t record_pool = SRV_BLOCK_POOL_INIT(sizeof(stream_req_t), 32, 16);

static void stream_stop_self(stream_t *s) {
  if (s->stopping) return;
  s->stopping = true;
  s->stop_msg.kind = STREAM_STOP;
  act_send_stop(&s->actor, &s->stop_msg);
}

void srv_stream_infer_request(srv_frontend_t *fe, size_t rpc, unsigned cq) {
  stream_t *s = calloc(1, sizeof *s);
  if (s == NULL) SRV_FATAL("out of memory");
  act_actor_init(&s->actor, srv_frontend_server(fe)->runtime, stream_behaviour, s);
  s->fe = fe;
  s->opt = srv_frontend_server(fe)->options;
  s->rpc = rpc;
  s->cq = cq;
  s->status_details = grpc_empty_slice();
  grpc_metadata_array_init(&s->request_md);
  srv_tag_init(&s->tag_new, &s->actor, STREAM_NEW);
  srv_tag_init(&s->tag_received, &s->actor, STREAM_RECEIVED);
  srv_tag_init(&s->tag_sent, &s->actor, STREAM_SENT);
  srv_tag_init(&s->tag_status_sent, &s->actor, STREAM_STATUS_SENT);
  srv_tag_init(&s->tag_closed, &s->actor, STREAM_CLOSED);
  grpc_completion_queue *q = srv_frontend_cq(fe, cq);
  SRV_HANDOFF_TO_GRPC(&s->tag_new);
  grpc_call_error err = grpc_server_request_registered_call(
      srv_frontend_grpc(fe), srv_frontend_method(fe, rpc), &s->call, &s->deadline,
      &s->request_md, NULL, q, q, &s->tag_new);
  if (err != GRPC_CALL_OK) {
    SRV_ERROR("requesting a ModelStreamInfer call failed (gRPC error %d)", (int)err);
    stream_stop_self(s);
  }
}

static void batch_start(stream_t *s, grpc_op *ops, size_t n, srv_tag_t *tag) {
  SRV_HANDOFF_TO_GRPC(tag);
  grpc_call_error err = grpc_call_start_batch(s->call, ops, n, tag, NULL);
  if (err != GRPC_CALL_OK)
    SRV_FATAL("ModelStreamInfer: batch refused (gRPC error %d)", (int)err);
}

/* Appends SEND_INITIAL_METADATA the first time anything is sent. */
static size_t ops_initial(stream_t *s, grpc_op *ops) {
  if (s->initial_md_sent) return 0;
  s->initial_md_sent = true;
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  /* Every message of the stream is an inference response: all take
   * --grpc-infer-response-compression-level, as tritonserver's. */
  grpc_compression_level level = srv_frontend_infer_compression(s->fe);
  ops[0].data.send_initial_metadata.maybe_compression_level.is_set =
      level != GRPC_COMPRESS_LEVEL_NONE;
  ops[0].data.send_initial_metadata.maybe_compression_level.level = level;
  return 1;
}

/* ---- request records ---- */

static stream_req_t *req_new(stream_t *s, grpc_byte_buffer *bytes) {
  stream_req_t *q = s->spare;
  if (q != NULL) {
    s->spare = q->next;
    s->spare_count--;
  } else {
    q = srv_block_pool_alloc(&record_pool);
  }
  memset(q, 0, sizeof *q);
  q->arena_block = srv_block_pool_alloc(&arena_pool);
  q->arena = upb_Arena_Init(q->arena_block, STREAM_ARENA_BYTES, &upb_alloc_global);
  if (q->arena == NULL) SRV_FATAL("out of memory");
  q->bytes = bytes;
  q->flat = grpc_empty_slice();
  return q;
}

static void record_recycle(stream_t *s, stream_req_t *q) {
  if (s->spare_count >= SPARE_RECORDS) {
    srv_block_pool_free(&record_pool, q);
    return;
  }
  q->next = s->spare;
  s->spare = q;
  s->spare_count++;
}

/* Frees what the request needed. The record follows at once, or with the
 * last of its writes to leave the queue (write_pop). */
static void req_free(stream_t *s, stream_req_t *q) {
  if (q->bytes != NULL) grpc_byte_buffer_destroy(q->bytes);
  grpc_slice_unref(q->flat);
  upb_Arena_Free(q->arena); /* its grown blocks; the first is the pool's */
  srv_block_pool_free(&arena_pool, q->arena_block);
  q->arena = NULL;
  q->arena_block = NULL;
  if (q->queued.count == 0) record_recycle(s, q);
}

/* Frees the request once nothing will refer to it again: a cancel that is
 * out may still be read by the model actor after the final and the
 * release (request.h, srv_request_cancel). */
static void req_maybe_free(stream_t *s, stream_req_t *q) {
  if (!q->final_done || !q->released || srv_request_cancel_out(q->request)) return;
  if (q->prev != NULL)
    q->prev->next = q->next;
  else
    s->reqs = q->next;
  if (q->next != NULL) q->next->prev = q->prev;
  s->req_count--;
  /* A misbehaving backend's late messages then find no record. */
  q->state->owner_data = NULL;
  srv_infer_state_unref(q->state);
  req_free(s, q);
}

static bool empty_final_wanted(const inference_ModelInferRequest *req) {
  inference_InferParameter *p;
  return inference_ModelInferRequest_parameters_get(
             req, upb_StringView_FromString("triton_enable_empty_final_response"), &p) &&
         inference_InferParameter_parameter_choice_case(p) ==
             inference_InferParameter_parameter_choice_bool_param &&
         inference_InferParameter_bool_param(p);
}

/* ---- writes ---- */

/* Queues bb, counted against q's bounds when q is given; no bound refuses
 * it (see request_exhaust). */
static void write_push(stream_t *s, stream_req_t *q, grpc_byte_buffer *bb) {
  if (s->mute) {
    grpc_byte_buffer_destroy(bb);
    return;
  }
  /* A traced request's response carries a hold on its trace's record:
   * GRPC_SEND_START and _END come when it is sent, maybe after the
   * request's trace was released. */
  srv_trace_later_t *trace = NULL;
  if (q != NULL && q->state != NULL && q->state->trace != NULL)
    trace = srv_trace_later(q->state->trace);
  srv_write_queue_push(&s->writes, bb, q != NULL ? &q->queued : NULL, trace);
  if (s->writes.len > WRITES_HIGH && !s->read_paused) {
    s->read_paused = true;
    SRV_VERBOSE(2, "ModelStreamInfer: stream %p: %u writes wait, receiving paused",
                (void *)s, s->writes.len);
  }
}

/* The oldest write, with its trace hold; a done record whose last write it
 * was goes. */
static grpc_byte_buffer *write_pop(stream_t *s, srv_trace_later_t **trace) {
  srv_write_tally_t *t;
  void *note;
  grpc_byte_buffer *bb = srv_write_queue_pop(&s->writes, &t, &note);
  *trace = note;
  if (t != NULL && t->count == 0) {
    stream_req_t *q = (stream_req_t *)((char *)t - offsetof(stream_req_t, queued));
    if (q->arena == NULL) record_recycle(s, q);
  }
  return bb;
}

/* The call can send no more: every queued write goes. */
static void writes_drop(stream_t *s) {
  grpc_byte_buffer *bb;
  srv_trace_later_t *trace;
  while ((bb = write_pop(s, &trace)) != NULL) {
    grpc_byte_buffer_destroy(bb);
    if (trace != NULL) srv_trace_later_done(trace);
  }
}

static void write_pump(stream_t *s) {
  if (s->send_busy || s->mute || s->writes.len == 0) return;
  s->sending = write_pop(s, &s->sending_trace);
  if (s->sending_trace != NULL) srv_trace_later_stamp(s->sending_trace, "GRPC_SEND_START");
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = ops_initial(s, ops);
  ops[n].op = GRPC_OP_SEND_MESSAGE;
  /* More to come: let gRPC hold this one back and coalesce (see top). */
  ops[n].flags = s->writes.len > 0 ? GRPC_WRITE_BUFFER_HINT : 0;
  ops[n++].data.send_message.send_message = s->sending;
  s->send_busy = true;
  batch_start(s, ops, n, &s->tag_sent);
}

/* Answers a request that never reached a model. */
static void reject(stream_t *s, stream_req_t *q, upb_StringView id, srv_status_t *st) {
  SRV_VERBOSE(1, "ModelStreamInfer: request '%.*s' failed: %s", (int)id.size, id.data,
              srv_status_message(st));
  write_push(s, NULL, srv_stream_response_error(id, srv_status_message(st)));
  srv_status_free(st);
  req_free(s, q);
}

/* ---- receiving ---- */

static void recv_post(stream_t *s) {
  if (s->recv_busy || s->read_done || s->read_paused || s->aborted || s->closed) return;
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &s->received;
  s->recv_busy = true;
  batch_start(s, &op, 1, &s->tag_received);
}

/* Decodes q's message in its arena, strings aliasing the received bytes
 * (the record keeps them as long as the request). */
static srv_status_t *request_decode(stream_t *s, stream_req_t *q,
                                    inference_ModelInferRequest **out) {
  size_t len = 0;
  const char *data = NULL;
  srv_status_t *st = srv_message_bytes(
      q->bytes,
      (size_t)srv_frontend_server(s->fe)->options->grpc_max_receive_message_size,
      "ModelStreamInfer", &q->flat, &data, &len);
  if (st != NULL) return st;
  inference_ModelInferRequest *req = inference_ModelInferRequest_new(q->arena);
  if (req == NULL) SRV_FATAL("out of memory");
  if (upb_Decode(data, len, req, &inference_ModelInferRequest_msginit, NULL,
                 kUpb_DecodeOption_AliasString, q->arena) != kUpb_DecodeStatus_Ok)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "ModelStreamInfer: malformed request message");
  *out = req;
  return NULL;
}

/* Decodes, checks and sends one request to its model, or answers it with
 * an error right away; the stream goes on either way. */
static void request_accept(stream_t *s, grpc_byte_buffer *bytes) {
  uint64_t start = act_now_ns();
  stream_req_t *q = req_new(s, bytes);
  upb_StringView no_id = {.data = "", .size = 0};
  inference_ModelInferRequest *req = NULL;
  srv_status_t *st = request_decode(s, q, &req);
  if (st != NULL) {
    reject(s, q, no_id, st);
    return;
  }
  upb_StringView id = inference_ModelInferRequest_id(req);
  srv_model_t *m = NULL;
  st = srv_model_lookup(srv_frontend_server(s->fe),
                        inference_ModelInferRequest_model_name(req),
                        inference_ModelInferRequest_model_version(req), &m);
  if (st != NULL) {
    reject(s, q, id, st);
    return;
  }
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  TRITONBACKEND_Request *r = NULL;
  srv_shm_uses_t *uses = NULL;
  st = srv_infer_request_build(m, &d, req, srv_frontend_server(s->fe)->shm, q->arena, &r,
                               &uses);
  if (st != NULL) {
    /* A request the model refused counts as one of its failures. */
    srv_stats_fail(srv_model_stats(m), SRV_FAIL_OTHER, act_now_ns() - start);
    srv_model_unref(m);
    reject(s, q, id, st);
    return;
  }
  q->request = r;
  q->empty_final = empty_final_wanted(req);
  q->decoupled = d.decoupled;
  r->state = srv_infer_state_new(&s->actor);
  r->state->model = m; /* the lookup's reference: the model stays until the state goes */
  r->state->owner_data = q;
  r->state->request_start_ns = start;
  r->state->shm = uses;
  r->state->trace_sample = true; /* a client's request: the tracer samples it */
  q->state = r->state;
  srv_infer_state_ref(q->state);
  q->next = s->reqs;
  if (s->reqs != NULL) s->reqs->prev = q;
  s->reqs = q;
  s->req_count++;
  r->queue_start_ns = act_now_ns();
  srv_stream_sequences_note(&s->seqs, m, r);
  srv_model_enqueue(m, r);
}

static void on_received(stream_t *s) {
  s->recv_busy = false;
  grpc_byte_buffer *bytes = s->received;
  s->received = NULL;
  if (!s->tag_received.success || bytes == NULL) {
    s->read_done = true; /* half-closed by the client, or the call failed */
    if (bytes != NULL) grpc_byte_buffer_destroy(bytes);
  } else if (s->aborted) {
    grpc_byte_buffer_destroy(bytes);
  } else {
    request_accept(s, bytes);
  }
  recv_post(s);
}

/* ---- the end ---- */

static void status_send(stream_t *s, grpc_status_code code) {
  s->status_sent = true;
  s->status_busy = true;
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = ops_initial(s, ops);
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = code;
  ops[n++].data.send_status_from_server.status_details = &s->status_details;
  batch_start(s, ops, n, &s->tag_status_sent);
}

static void status_send_ok(stream_t *s) { status_send(s, GRPC_STATUS_OK); }

/* Cancels every request in flight and drops what waits to be written; the
 * records stay until their requests come back. */
static void stream_abort(stream_t *s) {
  if (s->aborted) return;
  SRV_VERBOSE(1,
              "ModelStreamInfer: stream %p cancelled by the client or its deadline, "
              "%u requests in flight",
              (void *)s, s->req_count);
  s->aborted = true;
  s->mute = true;
  writes_drop(s);
  for (stream_req_t *q = s->reqs; q != NULL; q = q->next)
    srv_request_cancel(q->request); /* once per request: false the second time */
}

/* Runs after every event: sends what can go, receives again once the
 * writes drained, ends the call when all is answered, and stops the actor
 * when nothing refers to the stream any more. */
static void stream_progress(stream_t *s) {
  write_pump(s);
  if (s->read_paused && s->writes.len < WRITES_LOW) {
    s->read_paused = false;
    SRV_VERBOSE(2, "ModelStreamInfer: stream %p: receiving resumed", (void *)s);
    recv_post(s);
  }
  if (s->read_done && !s->status_sent && !s->closed && s->req_count == 0 &&
      !s->send_busy && s->writes.len == 0)
    status_send_ok(s);
  if (s->closed && !s->recv_busy && !s->send_busy && !s->status_busy && s->req_count == 0)
    stream_stop_self(s);
}

/* ---- messages from the model's side ---- */

/* Whether one more response of len bytes passes a bound on `count`
 * responses of `bytes` waiting `where`, set by --grpc-<scope>-max-queued-*;
 * if so, why. Anything fits an empty queue: the bounds are on backlog. */
static bool bound_passed(const char *scope, const char *where, uint64_t count,
                         uint64_t bytes, size_t len, int max_count, int max_bytes,
                         char *why, size_t cap) {
  if (count >= (uint64_t)max_count)
    snprintf(why, cap,
             "%llu responses wait to be written %s, as many as "
             "--grpc-%s-max-queued-responses=%d allows",
             (unsigned long long)count, where, scope, max_count);
  else if (count > 0 && bytes + len > (uint64_t)max_bytes)
    snprintf(why, cap,
             "%llu bytes of responses wait to be written %s, and %zu more would pass "
             "--grpc-%s-max-queued-bytes=%d",
             (unsigned long long)bytes, where, len, scope, max_bytes);
  else
    return false;
  return true;
}

/* Whether a write of len bytes for q fits its request's and its stream's
 * bounds; if not, why. */
static bool write_fits(const stream_t *s, const stream_req_t *q, size_t len, char *why,
                       size_t cap) {
  const srv_options_t *o = s->opt;
  return !bound_passed("request", "for it", q->queued.count, q->queued.bytes, len,
                       o->grpc_request_max_queued_responses,
                       o->grpc_request_max_queued_bytes, why, cap) &&
         !bound_passed("stream", "on its stream", s->writes.len, s->writes.bytes, len,
                       o->grpc_stream_max_queued_responses,
                       o->grpc_stream_max_queued_bytes, why, cap);
}

/* Ends q for a client that does not read fast enough: an error response,
 * final, takes the place of what did not fit, and the request is
 * cancelled, so that the backend stops sending. */
static void request_exhaust(stream_t *s, stream_req_t *q, const char *why) {
  char message[512];
  snprintf(message, sizeof message,
           "RESOURCE_EXHAUSTED: request '%s' for model '%s' was cancelled: %s (the "
           "client does not read the stream fast enough)",
           q->request->id, srv_model_name(q->state->model), why);
  SRV_VERBOSE(1, "ModelStreamInfer: stream %p: %s", (void *)s, message);
  q->exhausted = true;
  write_push(s, q, srv_stream_response_fail(q->state->model, q->request, message));
  srv_request_cancel(q->request); /* once per request: false the second time */
}

static void on_response(stream_t *s, TRITONBACKEND_Response *r) {
  stream_req_t *q = r->state->owner_data;
  if (q == NULL || q->final_done) {
    SRV_WARN("model '%s' sent a response after the final one; dropped",
             r->state->model != NULL ? srv_model_name(r->state->model) : "?");
    srv_response_free(r);
    return;
  }
  bool final = srv_response_final(q->decoupled, r->flags);
  if (!s->mute && !q->exhausted) {
    grpc_byte_buffer *bb =
        srv_stream_response_encode(q->state->model, q->request, r, final);
    char why[256];
    if (write_fits(s, q, grpc_byte_buffer_length(bb), why, sizeof why)) {
      write_push(s, q, bb);
    } else {
      grpc_byte_buffer_destroy(bb);
      request_exhaust(s, q, why);
    }
  }
  srv_response_free(r);
  q->final_done = final;
  req_maybe_free(s, q);
}

static void on_final_flags(stream_t *s, srv_final_msg_t *fm) {
  stream_req_t *q = fm->state->owner_data;
  if (q != NULL && !q->final_done && (fm->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL)) {
    q->final_done = true;
    /* Otherwise the client learns nothing of a final without a response. */
    if (q->empty_final && !q->exhausted && !s->mute)
      write_push(s, q,
                 srv_stream_response_encode(q->state->model, q->request, NULL, true));
  }
  srv_infer_state_unref(fm->state);
  act_msg_free(&fm->msg);
  if (q != NULL) req_maybe_free(s, q);
}

static void on_released(stream_t *s, TRITONBACKEND_Request *r) {
  stream_req_t *q = r->state->owner_data;
  q->released = true;
  /* Only the request's reference and ours left: no final can come. An
   * exhausted request had its final already. */
  if (!q->final_done && srv_infer_state_only_held(q->state, 2)) {
    q->final_done = true;
    if (!q->exhausted) {
      char why[256];
      snprintf(why, sizeof why,
               "model '%s' released request '%s' without sending its final response",
               srv_model_name(q->state->model), r->id);
      SRV_WARN("%s", why);
      write_push(s, q, srv_stream_response_fail(q->state->model, r, why));
    }
  }
  srv_infer_state_unref(r->state); /* the request's reference */
  req_maybe_free(s, q);
}

static void on_cancel_done(stream_t *s, act_msg_t *msg) {
  TRITONBACKEND_Request *r = srv_request_cancel_back(msg);
  stream_req_t *q = r->state->owner_data; /* alive: the record holds the state */
  req_maybe_free(s, q);
}

/* ---- the actor ---- */

static void stream_start(stream_t *s) {
  SRV_VERBOSE(2, "ModelStreamInfer: stream %p opened", (void *)s);
  srv_frontend_call_begin(s->fe);
  s->counted = true;
  srv_frontend_request(s->fe, s->rpc, s->cq); /* the next stream */
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &s->cancelled;
  batch_start(s, &op, 1, &s->tag_closed);
  srv_status_t *refused =
      srv_health_port_refuse(srv_frontend_health_port(s->fe), s->call, s->rpc);
  /* A restricted stream without its header ends the same way. */
  const srv_restriction_t *rule = srv_frontend_restriction(s->fe, s->rpc);
  if (refused == NULL && rule != NULL)
    refused = srv_grpc_restrict_check(rule, &s->request_md);
  if (refused != NULL) { /* refused: nothing is received */
    SRV_VERBOSE(1, "ModelStreamInfer failed: %s", srv_status_message(refused));
    s->read_done = true;
    grpc_slice_unref(s->status_details);
    s->status_details = grpc_slice_from_copied_string(srv_status_message(refused));
    status_send(s, srv_status_code(refused));
    srv_status_free(refused);
    return;
  }
  recv_post(s);
}

static void stream_release(stream_t *s) {
  SRV_VERBOSE(2, "ModelStreamInfer: stream %p freed", (void *)s);
  if (s->counted) srv_frontend_call_end(s->fe);
  writes_drop(s); /* none left: the call closed, which muted the stream */
  srv_write_queue_free(&s->writes);
  srv_stream_sequences_free(&s->seqs);
  while (s->spare != NULL) {
    stream_req_t *q = s->spare;
    s->spare = q->next;
    srv_block_pool_free(&record_pool, q);
  }
  grpc_slice_unref(s->status_details);
  grpc_metadata_array_destroy(&s->request_md);
  if (s->call != NULL) grpc_call_unref(s->call);
  free(s);
}

static void stream_behaviour(act_actor_t *self, act_msg_t *msg) {
  stream_t *s = act_actor_state(self);
  switch (msg->kind) {
    case STREAM_NEW:
      if (!s->tag_new.success) {
        stream_stop_self(s); /* shutting down: never got a call */
        return;
      }
      stream_start(s);
      return;
    case STREAM_RECEIVED:
      on_received(s);
      break;
    case STREAM_SENT:
      s->send_busy = false;
      grpc_byte_buffer_destroy(s->sending);
      s->sending = NULL;
      if (s->sending_trace != NULL) {
        if (s->tag_sent.success) srv_trace_later_stamp(s->sending_trace, "GRPC_SEND_END");
        srv_trace_later_done(s->sending_trace);
        s->sending_trace = NULL;
      }
      if (!s->tag_sent.success) {
        s->mute = true; /* the call is gone; its close tells the rest */
        writes_drop(s);
      }
      break;
    case STREAM_STATUS_SENT:
      s->status_busy = false;
      break;
    case STREAM_CLOSED:
      s->closed = true;
      if (!s->status_sent) stream_abort(s);
      /* Its client is gone: so are the sequences it left open (beyond
       * Triton, which keeps their slots until the idle timeout). */
      srv_stream_sequences_end_all(&s->seqs, srv_frontend_server(s->fe));
      break;
    case SRV_MSG_INFER_RESPONSE:
      on_response(s, (TRITONBACKEND_Response *)msg);
      break;
    case SRV_MSG_INFER_FINAL_FLAGS:
      on_final_flags(s, (srv_final_msg_t *)msg);
      break;
    case SRV_MSG_INFER_RELEASED:
      on_released(s, (TRITONBACKEND_Request *)msg);
      break;
    case SRV_MSG_INFER_CANCEL_DONE:
      on_cancel_done(s, msg);
      break;
    case STREAM_STOP:
      stream_release(s);
      return;
    default:
      SRV_FATAL("ModelStreamInfer: unexpected message kind %u", msg->kind);
  }
  stream_progress(s);
}
