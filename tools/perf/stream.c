/* ModelStreamInfer streams of the load (see load_internal.h). A stream
 * keeps a receive outstanding all its life, the status batch from the
 * start, and at most one send (gRPC allows one of each). Requests wait in
 * a FIFO for the send; each carries its id (its index in reqs), appended
 * to the prebuilt bytes as one more protobuf field, so responses find
 * their request whatever order they come in. A send with more queued
 * behind it carries GRPC_WRITE_BUFFER_HINT, so bursts leave in few writes.
 * If the stream ends while requests are in flight, each counts as an
 * error and the stream reopens (unless the load is stopping). Worker
 * thread only. */
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "tools/perf/load_internal.h"
#include "tools/perf/rpc.h"
#include "upb/decode.h"

/* Responses are small except their outputs, which the decoder aliases. */
#define SCRATCH_BYTES 2048

void perf_stream_init(perf_stream_t *s, perf_worker_t *w, unsigned channel,
                      unsigned depth) {
  memset(s, 0, sizeof *s);
  perf_tag_t *tags[] = {&s->tag_start, &s->tag_recv, &s->tag_send, &s->tag_close,
                        &s->tag_status};
  for (int k = 0; k < 5; k++) *tags[k] = (perf_tag_t){TAG_STREAM_START + k, s};
  s->w = w;
  s->channel = channel;
  s->depth = depth;
  s->details = grpc_empty_slice();
  grpc_metadata_array_init(&s->initial_md);
  grpc_metadata_array_init(&s->trailing_md);
  s->free_head = s->pend_head = s->pend_tail = STREAM_NONE;
}

static uint32_t req_alloc(perf_stream_t *s) {
  if (s->free_head == STREAM_NONE) {
    uint32_t cap = s->cap ? s->cap * 2 : (s->depth > 8 ? s->depth : 8);
    s->reqs = perf_realloc(s->reqs, cap * sizeof *s->reqs);
    for (uint32_t id = s->cap; id < cap; id++) {
      s->reqs[id].busy = false;
      s->reqs[id].next = id + 1 < cap ? id + 1 : STREAM_NONE;
    }
    s->free_head = s->cap;
    s->cap = cap;
  }
  uint32_t id = s->free_head;
  s->free_head = s->reqs[id].next;
  s->reqs[id] = (stream_req_t){.busy = true, .next = STREAM_NONE};
  return id;
}

static void req_free(perf_stream_t *s, uint32_t id) {
  s->reqs[id].busy = false;
  s->reqs[id].next = s->free_head;
  s->free_head = id;
}

static void batch(perf_stream_t *s, grpc_op *ops, size_t n, perf_tag_t *tag) {
  grpc_call_error e = grpc_call_start_batch(s->call, ops, n, tag, NULL);
  if (e != GRPC_CALL_OK)
    PERF_FATAL("ModelStreamInfer batch refused (gRPC error %d)", (int)e);
  s->batches++;
}

static void recv_start(perf_stream_t *s, bool with_initial_md) {
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (with_initial_md) {
    ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[n++].data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
  }
  ops[n].op = GRPC_OP_RECV_MESSAGE;
  ops[n++].data.recv_message.recv_message = &s->recv;
  batch(s, ops, n, &s->tag_recv);
}

static void send_next(perf_stream_t *s);

void perf_stream_open(perf_stream_t *s) {
  perf_worker_t *w = s->w;
  perf_load_t *l = w->load;
  s->call = grpc_channel_create_registered_call(
      l->channels[s->channel], NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
      l->stream_method[s->channel], gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  s->send_busy = s->close_sent = s->status_done = false;
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_SEND_INITIAL_METADATA;
  batch(s, &op, 1, &s->tag_start);
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  op.data.recv_status_on_client.trailing_metadata = &s->trailing_md;
  op.data.recv_status_on_client.status = &s->status;
  op.data.recv_status_on_client.status_details = &s->details;
  batch(s, &op, 1, &s->tag_status);
  recv_start(s, true);
  uint64_t now = perf_now_ns();
  /* A reopened stream's lanes begin new sequences: the server ended those
   * that the old stream left open. */
  for (unsigned k = 0; k < s->depth && s->lanes; k++) perf_seq_abandon(&s->lanes[k]);
  for (unsigned k = 0; k < s->depth; k++)
    perf_stream_enqueue(s, now, s->lanes ? &s->lanes[k] : NULL);
  send_next(s); /* open loop: requests that came while the stream reopened */
}

static void send_next(perf_stream_t *s) {
  if (s->send_busy || s->pend_head == STREAM_NONE || s->call == NULL || s->status_done)
    return;
  uint32_t id = s->pend_head;
  s->pend_head = s->reqs[id].next;
  if (s->pend_head == STREAM_NONE) s->pend_tail = STREAM_NONE;
  /* Field 3 (id), length-delimited: tag byte 0x1a, length, digits. */
  char idf[16];
  int digits = snprintf(idf + 2, sizeof idf - 2, "%u", id);
  idf[0] = 0x1a;
  idf[1] = (char)digits;
  grpc_slice parts[2 + PERF_SEQ_SLICES] = {
      perf_worker_next_body(s->w),
      grpc_slice_from_copied_buffer(idf, 2 + (size_t)digits)};
  size_t n = 2;
  perf_seq_t *seq = s->reqs[id].seq;
  if (seq != NULL) n += perf_seq_params(seq, s->w->load->cfg.seq.string_ids, parts + 2);
  s->send = grpc_raw_byte_buffer_create(parts, n);
  for (size_t k = 0; k < n; k++) grpc_slice_unref(parts[k]);
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_SEND_MESSAGE;
  op.flags = s->pend_head != STREAM_NONE ? GRPC_WRITE_BUFFER_HINT : 0;
  op.data.send_message.send_message = s->send;
  batch(s, &op, 1, &s->tag_send);
  s->send_busy = true;
}

void perf_stream_enqueue(perf_stream_t *s, uint64_t start_ns, perf_seq_t *seq) {
  uint32_t id = req_alloc(s);
  s->reqs[id].start_ns = start_ns;
  s->reqs[id].seq = seq;
  if (seq != NULL) perf_worker_seq_step(s->w, seq);
  if (s->pend_tail == STREAM_NONE)
    s->pend_head = id;
  else
    s->reqs[s->pend_tail].next = id;
  s->pend_tail = id;
  s->inflight++;
  s->w->inflight++;
  send_next(s);
}

/* The request's last response came (or the stream ended under it). */
static void request_done(perf_stream_t *s, uint32_t id, uint64_t now) {
  perf_worker_t *w = s->w;
  perf_seq_t *seq = s->reqs[id].seq;
  if (!s->reqs[id].failed)
    perf_worker_ok(w, now - s->reqs[id].start_ns, seq && perf_seq_is_end(seq));
  req_free(s, id);
  s->inflight--;
  w->inflight--;
  bool closed_loop = w->load->cfg.concurrency > 0;
  if (closed_loop && (seq ? perf_worker_seq_goes_on(w, seq) : !w->stopping) &&
      s->call != NULL && !s->status_done)
    perf_stream_enqueue(s, now, seq);
  else if (!closed_loop && seq != NULL)
    perf_worker_lane_done(w, seq, now);
  perf_worker_request_done(w);
  if (w->stopping) perf_stream_wind_down(s);
}

static bool id_parse(upb_StringView v, const perf_stream_t *s, uint32_t *id) {
  if (v.size == 0 || v.size > 10) return false;
  uint64_t n = 0;
  for (size_t i = 0; i < v.size; i++) {
    if (v.data[i] < '0' || v.data[i] > '9') return false;
    n = n * 10 + (uint64_t)(v.data[i] - '0');
  }
  if (n >= s->cap || !s->reqs[n].busy) return false;
  *id = (uint32_t)n;
  return true;
}

/* Whether this response is its request's last: the final flag when there
 * is one; without it, an error in decoupled mode, any response otherwise
 * (a server that marks nothing sends one response per request). */
static bool response_is_last(const perf_stream_t *s,
                             const inference_ModelInferResponse *ir, bool error) {
  inference_InferParameter *p = NULL;
  bool has_final =
      ir != NULL && inference_ModelInferResponse_parameters_get(
                        ir, upb_StringView_FromString("triton_final_response"), &p);
  if (has_final) return inference_InferParameter_bool_param(p);
  return s->w->load->cfg.mode != PERF_DECOUPLED || error;
}

static void response(perf_stream_t *s, const char *bytes, size_t len) {
  perf_worker_t *w = s->w;
  char scratch[SCRATCH_BYTES];
  upb_Arena *a = upb_Arena_Init(scratch, sizeof scratch, &upb_alloc_global);
  if (a == NULL) PERF_FATAL("out of memory");
  inference_ModelStreamInferResponse *msg = inference_ModelStreamInferResponse_parse_ex(
      bytes, len, NULL, kUpb_DecodeOption_AliasString, a);
  upb_StringView err = msg ? inference_ModelStreamInferResponse_error_message(msg)
                           : upb_StringView_FromString("");
  const inference_ModelInferResponse *ir =
      msg ? inference_ModelStreamInferResponse_infer_response(msg) : NULL;
  uint32_t id;
  if (msg == NULL) {
    static const char bad[] = "ModelStreamInfer: a response that does not parse";
    perf_worker_error(w, bad, sizeof bad - 1);
  } else if (!id_parse(
                 ir ? inference_ModelInferResponse_id(ir) : upb_StringView_FromString(""),
                 s, &id)) {
    char text[600];
    int n =
        snprintf(text, sizeof text,
                 "ModelStreamInfer: a response for no request in "
                 "flight%s%.*s",
                 err.size ? ": " : "", (int)(err.size < 500 ? err.size : 500), err.data);
    perf_worker_error(w, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
  } else {
    if (err.size > 0) {
      perf_worker_error(w, err.data, err.size);
      s->reqs[id].failed = true;
    } else {
      size_t outputs = 0;
      inference_ModelInferResponse_outputs(ir, &outputs);
      if (outputs > 0) perf_worker_responses(w, 1);
    }
    if (response_is_last(s, ir, err.size > 0)) request_done(s, id, perf_now_ns());
  }
  upb_Arena_Free(a);
}

/* The stream ended: every request still in flight (sent or waiting) is an
 * error, with the status as its message. */
static void fail_in_flight(perf_stream_t *s) {
  perf_worker_t *w = s->w;
  if (s->inflight == 0) return;
  char text[600];
  int n;
  if (s->status != GRPC_STATUS_OK)
    n = snprintf(
        text, sizeof text, "ModelStreamInfer: %s: %.*s", perf_status_name(s->status),
        (int)(GRPC_SLICE_LENGTH(s->details) < 500 ? GRPC_SLICE_LENGTH(s->details) : 500),
        (const char *)GRPC_SLICE_START_PTR(s->details));
  else
    n = snprintf(text, sizeof text,
                 "ModelStreamInfer: the stream ended (OK) with requests "
                 "in flight");
  size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
  for (uint32_t id = 0; id < s->cap; id++) {
    if (!s->reqs[id].busy) continue;
    perf_worker_error(w, text, len);
    perf_seq_t *seq = s->reqs[id].seq;
    req_free(s, id);
    w->inflight--;
    if (seq != NULL) perf_seq_abandon(seq); /* the server ended it with the stream */
    if (seq != NULL && w->load->cfg.concurrency == 0) perf_worker_lane_idle(w, seq);
  }
  s->inflight = 0;
  s->pend_head = s->pend_tail = STREAM_NONE;
}

/* Once the status is in and no batch is outstanding, the call goes; the
 * stream reopens unless the load is stopping. */
static void maybe_finish(perf_stream_t *s) {
  if (!s->status_done || s->batches > 0) return;
  fail_in_flight(s);
  grpc_call_unref(s->call);
  s->call = NULL;
  s->initial_md.count = s->trailing_md.count = 0;
  grpc_slice_unref(s->details);
  s->details = grpc_empty_slice();
  perf_worker_request_done(s->w);
  if (!s->w->stopping) perf_stream_open(s);
}

static void on_recv(perf_stream_t *s, bool ok) {
  if (s->recv == NULL) return; /* the server's half-close (or a failure) */
  grpc_slice flat = perf_byte_buffer_flat(s->recv);
  grpc_byte_buffer_destroy(s->recv);
  s->recv = NULL;
  response(s, (const char *)GRPC_SLICE_START_PTR(flat), GRPC_SLICE_LENGTH(flat));
  grpc_slice_unref(flat);
  if (ok && !s->status_done) recv_start(s, false);
}

void perf_stream_event(perf_stream_t *s, perf_tag_t *tag, bool ok) {
  s->batches--;
  switch (tag->kind) {
    case TAG_STREAM_RECV:
      on_recv(s, ok);
      break;
    case TAG_STREAM_SEND:
      grpc_byte_buffer_destroy(s->send);
      s->send = NULL;
      s->send_busy = false;
      if (ok) send_next(s);
      if (s->w->stopping) perf_stream_wind_down(s);
      break;
    case TAG_STREAM_STATUS:
      s->status_done = true;
      break;
    default:
      break; /* the initial metadata or the half-close went out */
  }
  maybe_finish(s);
}

void perf_stream_wind_down(perf_stream_t *s) {
  if (s->call == NULL || s->close_sent || s->status_done || s->inflight > 0 ||
      s->send_busy)
    return;
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  batch(s, &op, 1, &s->tag_close);
  s->close_sent = true;
}

bool perf_stream_closed(const perf_stream_t *s) { return s->call == NULL; }

void perf_stream_cancel(perf_stream_t *s) {
  if (s->call != NULL) grpc_call_cancel(s->call, NULL);
}

void perf_stream_destroy(perf_stream_t *s) {
  if (s->call != NULL) PERF_FATAL("destroying a stream that is open");
  free(s->reqs);
  grpc_slice_unref(s->details);
  grpc_metadata_array_destroy(&s->initial_md);
  grpc_metadata_array_destroy(&s->trailing_md);
}
