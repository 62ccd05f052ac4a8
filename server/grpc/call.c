/* Unary call actor (see call.h). Its behaviour runs on actor workers; the
 * completion-queue threads only deliver its two tags. Life: requested ->
 * NEW (request a replacement, run the handler) -> one batch that sends
 * everything and waits for close -> DONE -> stop message -> freed. */
#include "server/grpc/call.h"

#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/block_pool.h"
#include "server/common/log.h"
#include "server/grpc/handoff.h"
#include "server/grpc/health_port.h"
#include "server/grpc/infer_rpc.h"
#include "server/grpc/message_bytes.h"
#include "server/grpc/restrict.h"
#include "server/grpc/tag.h"
#include "upb/decode.h"
#include "upb/msg_internal.h"

enum { CALL_NEW = 1, CALL_DONE, CALL_CLOSED, CALL_STOP };

/* The call's arena starts in the call's own memory: a ModelInfer on a
 * small model (decode, request, reply) fits, where upb_Arena_New's 256
 * bytes grew by three or four mallocs per call. Larger calls grow it. */
enum { CALL_ARENA_BYTES = 4096 };

struct srv_call {
  act_actor_t actor;
  srv_frontend_t *fe;
  size_t rpc; /* index in srv_rpcs; srv_rpc_count: unregistered method */
  unsigned cq;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array request_md;
  grpc_call_details details; /* unregistered methods only */
  grpc_byte_buffer *request;
  grpc_slice request_flat; /* request bytes, copied or inflated once */
  grpc_byte_buffer *reply;
  grpc_slice status_details;
  int cancelled;
  bool ended;    /* reply or fail was called */
  bool done;     /* the reply batch completed */
  bool counted;  /* srv_frontend_call_begin was called */
  bool watching; /* the close is received by its own batch (tag_closed) */
  bool closed;   /* that batch completed */
  bool stopping; /* the stop message is sent */
  unsigned holds;
  srv_call_msg_fn *on_msg;
  void *on_msg_ctx;
  srv_call_sent_fn *on_sent; /* cleared once run */
  void *on_sent_ctx;
  upb_Arena *arena;
  srv_tag_t tag_new;
  srv_tag_t tag_done;
  srv_tag_t tag_closed;
  act_msg_t cancelled_msg; /* SRV_CALL_CANCELLED, to on_msg */
  act_msg_t stop;
  /* Last: not zeroed at allocation (upb_Arena_Init takes it as it is). */
  _Alignas(16) char arena_block[CALL_ARENA_BYTES];
};

/* A call is made when the one before it arrives and freed by its own stop
 * message, on whichever threads ran those turns: a block pool (issue 21)
 * keeps its 4.5 KiB out of malloc. 16 to a batch: a thread keeps at most
 * 32 (about 150 KiB), the depot 8 batches. */
static srv_block_pool_t call_pool = SRV_BLOCK_POOL_INIT(sizeof(srv_call_t), 16, 8);

static void call_behaviour(act_actor_t *self, act_msg_t *msg);

static bool rpc_reads_payload(size_t rpc) {
  return rpc < srv_rpc_count && srv_rpcs[rpc].kind != SRV_RPC_BIDI_STREAM;
}

static void call_stop(srv_call_t *c) {
  if (c->stopping) return;
  c->stopping = true;
  c->stop.kind = CALL_STOP;
  /* From its own turn (the usual end: DONE, CLOSED, an unhold) the stop
   * skips the mailbox and a turn; a request that failed to start is
   * stopped from another call's turn, through the mailbox. */
  act_send_stop_self(&c->actor, &c->stop);
}

void srv_call_request(srv_frontend_t *fe, size_t rpc, unsigned cq) {
  srv_call_t *c = srv_block_pool_alloc(&call_pool);
  memset(c, 0, offsetof(srv_call_t, arena_block));
  srv_server_t *srv = srv_frontend_server(fe);
  act_actor_init(&c->actor, srv->runtime, call_behaviour, c);
  c->fe = fe;
  c->rpc = rpc;
  c->cq = cq;
  /* The memset made request_flat and status_details empty slices (what
   * grpc_empty_slice returns: no refcount, inline length 0) and request_md
   * an empty array (what grpc_metadata_array_init makes): three calls into
   * gRPC fewer per call (issue 21). zeroed_init_test pins both. */
  /* Only an unregistered call fills (and so needs) the details: gRPC's
   * destroy of them costs ~300 instructions (an ExecCtx) per call. */
  if (rpc == srv_rpc_count) grpc_call_details_init(&c->details);
  srv_tag_init(&c->tag_new, &c->actor, CALL_NEW);
  srv_tag_init(&c->tag_done, &c->actor, CALL_DONE);
  srv_tag_init(&c->tag_closed, &c->actor, CALL_CLOSED);

  grpc_completion_queue *q = srv_frontend_cq(fe, cq);
  SRV_HANDOFF_TO_GRPC(&c->tag_new);
  grpc_call_error err;
  if (rpc == srv_rpc_count) {
    err = grpc_server_request_call(srv_frontend_grpc(fe), &c->call, &c->details,
                                   &c->request_md, q, q, &c->tag_new);
  } else {
    err = grpc_server_request_registered_call(
        srv_frontend_grpc(fe), srv_frontend_method(fe, rpc), &c->call, &c->deadline,
        &c->request_md, rpc_reads_payload(rpc) ? &c->request : NULL, q, q, &c->tag_new);
  }
  if (err != GRPC_CALL_OK) {
    SRV_ERROR("requesting a call failed (gRPC error %d)", (int)err);
    call_stop(c);
  }
}

upb_Arena *srv_call_arena(srv_call_t *call) { return call->arena; }

act_actor_t *srv_call_actor(srv_call_t *call) { return &call->actor; }

void srv_call_on_sent(srv_call_t *call, srv_call_sent_fn *fn, void *ctx) {
  call->on_sent = fn;
  call->on_sent_ctx = ctx;
}

static void sent_notify(srv_call_t *c, bool sent) {
  srv_call_sent_fn *fn = c->on_sent;
  c->on_sent = NULL;
  if (fn != NULL) fn(c->on_sent_ctx, sent);
}

void srv_call_on_message(srv_call_t *call, srv_call_msg_fn *fn, void *ctx) {
  call->on_msg = fn;
  call->on_msg_ctx = ctx;
}

void srv_call_hold(srv_call_t *call) { call->holds++; }

/* Nothing is in flight and nobody holds the call: it may go. */
static void call_maybe_stop(srv_call_t *c) {
  if (c->done && c->holds == 0 && (!c->watching || c->closed)) call_stop(c);
}

void srv_call_unhold(srv_call_t *call) {
  if (call->holds == 0) SRV_FATAL("call: unhold without hold");
  call->holds--;
  call_maybe_stop(call);
}

void srv_call_watch_cancel(srv_call_t *call) {
  if (call->watching || call->ended) SRV_FATAL("call: watch_cancel too late or twice");
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &call->cancelled;
  SRV_HANDOFF_TO_GRPC(&call->tag_closed);
  grpc_call_error err =
      grpc_call_start_batch(call->call, &op, 1, &call->tag_closed, NULL);
  if (err != GRPC_CALL_OK) {
    SRV_ERROR("watching a call for cancellation failed (gRPC error %d)", (int)err);
    return; /* the reply batch will receive the close as usual */
  }
  call->watching = true;
}

upb_Message *srv_call_parse(srv_call_t *call, const upb_MiniTable *layout,
                            const char *request, size_t len) {
  upb_Message *msg = _upb_Message_New(layout, call->arena);
  if (msg == NULL) SRV_FATAL("out of memory");
  /* Aliasing: the request buffer lives as long as the call. */
  upb_DecodeStatus st = upb_Decode(request, len, msg, layout, NULL,
                                   kUpb_DecodeOption_AliasString, call->arena);
  return st == kUpb_DecodeStatus_Ok ? msg : NULL;
}

srv_server_t *srv_call_server(const srv_call_t *call) {
  return srv_frontend_server(call->fe);
}

static const char *call_name(const srv_call_t *c) {
  return c->rpc < srv_rpc_count ? srv_rpcs[c->rpc].name : "(unregistered)";
}

/* Nothing was started, so no DONE will come. */
static void call_batch_failed(srv_call_t *c, grpc_call_error err) {
  SRV_ERROR("starting the reply batch failed (gRPC error %d)", (int)err);
  c->done = true;
  call_maybe_stop(c);
}

/* gRPC's infinite deadline is gpr_inf_future: tv_sec INT64_MAX, which
 * gpr_time_cmp finds equal whatever tv_nsec holds. Tested here directly:
 * two calls into libgpr cost ~110 instructions per ModelInfer (issue 21). */
bool srv_call_has_deadline(const srv_call_t *c) {
  gpr_timespec deadline = c->rpc == srv_rpc_count ? c->details.deadline : c->deadline;
  return deadline.tv_sec != INT64_MAX;
}

/* Whether gRPC has ended the call itself: its close came back cancelled
 * (a client's RST_STREAM, an expired deadline, a server-wide cancel), or
 * its deadline has passed, so gRPC's deadline timer ends it now if it has
 * not yet. gRPC C core (1.51) then already wrote the trailers and
 * RST_STREAM; a status batch of ours would fail, and that failure cancels
 * the stream again, which writes them a second time. Without a deadline
 * (most calls) no clock is read: no time is past an infinite one. */
static bool call_ended_by_grpc(const srv_call_t *c) {
  if (c->closed && c->cancelled) return true;
  if (!srv_call_has_deadline(c)) return false;
  gpr_timespec deadline = c->rpc == srv_rpc_count ? c->details.deadline : c->deadline;
  return gpr_time_cmp(gpr_now(deadline.clock_type), deadline) >= 0;
}

/* Sends nothing: only receives the close (unless a batch of its own
 * already does), so that the call ends when gRPC has finished with it. */
static void call_end_silently(srv_call_t *c) {
  SRV_VERBOSE(2, "call %p: %s already ended by gRPC: no status sent", (void *)c,
              call_name(c));
  if (c->watching) {
    c->done = true;
    call_maybe_stop(c);
    return;
  }
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &c->cancelled;
  SRV_HANDOFF_TO_GRPC(&c->tag_done);
  grpc_call_error err = grpc_call_start_batch(c->call, &op, 1, &c->tag_done, NULL);
  if (err != GRPC_CALL_OK) call_batch_failed(c, err);
}

static void call_end(srv_call_t *c, grpc_status_code code, const char *details) {
  SRV_VERBOSE(2, "call %p: %s replies %s", (void *)c, call_name(c),
              srv_status_code_name(code));
  if (c->ended) SRV_FATAL("call ended twice");
  c->ended = true;
  /* An empty text keeps the empty slice the call started with (no copy). */
  if (details[0] != '\0') c->status_details = grpc_slice_from_copied_string(details);
  if (call_ended_by_grpc(c)) {
    call_end_silently(c);
    return;
  }

  grpc_op ops[4];
  size_t n = 0;
  memset(ops, 0, sizeof ops);
  ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
  /* --grpc-infer-response-compression-level, for ModelInfer's reply only
   * (as tritonserver); core picks an algorithm that the client accepts. */
  if (c->reply != NULL && c->rpc < srv_rpc_count &&
      srv_rpcs[c->rpc].unary == srv_rpc_model_infer) {
    grpc_compression_level level = srv_frontend_infer_compression(c->fe);
    ops[n].data.send_initial_metadata.maybe_compression_level.is_set =
        level != GRPC_COMPRESS_LEVEL_NONE;
    ops[n].data.send_initial_metadata.maybe_compression_level.level = level;
  }
  n++;
  if (c->reply != NULL) {
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->reply;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = code;
  ops[n++].data.send_status_from_server.status_details = &c->status_details;
  if (!c->watching) {
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
  }
  SRV_HANDOFF_TO_GRPC(&c->tag_done);
  grpc_call_error err = grpc_call_start_batch(c->call, ops, n, &c->tag_done, NULL);
  if (err != GRPC_CALL_OK) call_batch_failed(c, err);
}

void srv_call_reply(srv_call_t *call, const char *bytes, size_t len) {
  grpc_slice slice = grpc_slice_from_copied_buffer(bytes, len);
  call->reply = grpc_raw_byte_buffer_create(&slice, 1);
  grpc_slice_unref(slice);
  call_end(call, GRPC_STATUS_OK, "");
}

void srv_call_reply_buffer(srv_call_t *call, grpc_byte_buffer *reply) {
  call->reply = reply;
  call_end(call, GRPC_STATUS_OK, "");
}

void srv_call_fail(srv_call_t *call, srv_status_t *st) {
  const char *name = call->rpc < srv_rpc_count ? srv_rpcs[call->rpc].name : "?";
  SRV_VERBOSE(1, "%s failed: %s: %s", name, srv_status_code_name(srv_status_code(st)),
              srv_status_message(st));
  call_end(call, srv_status_code(st), srv_status_message(st));
  srv_status_free(st);
}

static void call_serve(srv_call_t *c) {
  srv_status_t *refused =
      srv_health_port_refuse(srv_frontend_health_port(c->fe), c->call, c->rpc);
  if (refused != NULL) {
    srv_call_fail(c, refused);
    return;
  }
  if (c->rpc == srv_rpc_count) {
    char *method = grpc_slice_to_c_string(c->details.method);
    srv_call_fail(
        c, srv_status_new(GRPC_STATUS_UNIMPLEMENTED, "unknown method '%s'", method));
    gpr_free(method);
    return;
  }
  const srv_rpc_t *rpc = &srv_rpcs[c->rpc];
  /* Before anything else, as tritonserver: a restricted method says so
   * even when it is not implemented. Open methods only test the pointer. */
  const srv_restriction_t *rule = srv_frontend_restriction(c->fe, c->rpc);
  if (rule != NULL) {
    srv_status_t *denied = srv_grpc_restrict_check(rule, &c->request_md);
    if (denied != NULL) {
      srv_call_fail(c, denied);
      return;
    }
  }
  if (c->request == NULL) {
    srv_call_fail(c, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                    "%s: the request message is missing", rpc->name));
    return;
  }
  size_t len;
  const char *data;
  srv_status_t *st = srv_message_bytes(
      c->request, (size_t)srv_call_server(c)->options->grpc_max_receive_message_size,
      rpc->name, &c->request_flat, &data, &len);
  if (st != NULL) {
    srv_call_fail(c, st);
    return;
  }
  rpc->unary(c, data, len);
}

static void call_release(srv_call_t *c) {
  sent_notify(c, false); /* ended without a reply batch */
  if (c->counted) srv_frontend_call_end(c->fe);
  if (c->request != NULL) grpc_byte_buffer_destroy(c->request);
  if (c->reply != NULL) grpc_byte_buffer_destroy(c->reply);
  grpc_slice_unref(c->request_flat);
  grpc_slice_unref(c->status_details);
  grpc_metadata_array_destroy(&c->request_md);
  if (c->rpc == srv_rpc_count) grpc_call_details_destroy(&c->details);
  if (c->call != NULL) grpc_call_unref(c->call);
  if (c->arena != NULL) upb_Arena_Free(c->arena);
  srv_block_pool_free(&call_pool, c);
}

static void call_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_call_t *c = act_actor_state(self);
  switch (msg->kind) {
    case CALL_NEW:
      if (!c->tag_new.success) { /* shutting down: never got a call */
        call_stop(c);
        return;
      }
      SRV_VERBOSE(2, "call %p: %s arrived", (void *)c, call_name(c));
      srv_frontend_call_begin(c->fe);
      c->counted = true;
      /* Ask for the next call first, so accepting never waits for us. */
      srv_frontend_request(c->fe, c->rpc, c->cq);
      c->arena = upb_Arena_Init(c->arena_block, sizeof c->arena_block, &upb_alloc_global);
      if (c->arena == NULL) SRV_FATAL("out of memory");
      call_serve(c);
      return;
    case CALL_DONE:
      SRV_VERBOSE(2, "call %p: %s done (%s)", (void *)c, call_name(c),
                  c->tag_done.success ? "sent" : "not sent");
      c->done = true;
      sent_notify(c, c->tag_done.success);
      call_maybe_stop(c);
      return;
    case CALL_CLOSED:
      c->closed = true;
      if (c->cancelled && !c->ended && c->on_msg != NULL) {
        SRV_VERBOSE(2, "call %p: %s cancelled by the client or its deadline", (void *)c,
                    call_name(c));
        c->cancelled_msg.kind = SRV_CALL_CANCELLED;
        c->on_msg(c, c->on_msg_ctx, &c->cancelled_msg);
      }
      call_maybe_stop(c);
      return;
    case CALL_STOP:
      call_release(c);
      return;
    default:
      if (c->on_msg == NULL) SRV_FATAL("call: unexpected message kind %u", msg->kind);
      c->on_msg(c, c->on_msg_ctx, msg);
      return;
  }
}
