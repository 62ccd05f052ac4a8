/* A unary call: an actor embedded in the call object. It alone starts
 * batches on its grpc_call; handlers run inside it and end the call with
 * srv_call_reply or srv_call_fail. Also serves unimplemented and unknown
 * methods. */
#ifndef NEREID_SERVER_GRPC_CALL_H
#define NEREID_SERVER_GRPC_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "actors/actor.h"
#include "server/common/log.h"
#include "server/common/status.h"
#include "server/grpc/frontend.h"
#include "upb/mini_table.h"
#include "upb/msg.h"
#include "upb/upb.h"

/** Allocates a call for srv_rpcs[rpc] (srv_rpc_count: unregistered) and
 *  requests it from gRPC on queue cq. Any thread. */
void srv_call_request(srv_frontend_t *fe, size_t rpc, unsigned cq);

/** The call's arena, freed when the call ends: decode requests and build
 *  replies in it. The call's actor only. */
upb_Arena *srv_call_arena(srv_call_t *call);

srv_server_t *srv_call_server(const srv_call_t *call);

/** Ends the call with OK and the serialized reply (copied). The call's
 *  actor only; at most one of reply/fail per call. */
void srv_call_reply(srv_call_t *call, const char *bytes, size_t len);

/** Like srv_call_reply, with a byte buffer the call takes over (its slices
 *  may reference memory that they keep alive themselves). */
void srv_call_reply_buffer(srv_call_t *call, grpc_byte_buffer *reply);

/** Ends the call with st's code and message; takes ownership of st. */
void srv_call_fail(srv_call_t *call, srv_status_t *st);

/** Messages to the call that are not its own (responses, released requests)
 *  go to fn with ctx. Set by a handler that waits for other actors. */
typedef void srv_call_msg_fn(srv_call_t *call, void *ctx, act_msg_t *msg);
void srv_call_on_message(srv_call_t *call, srv_call_msg_fn *fn, void *ctx);

/** fn(ctx, sent) runs once on the call's actor when its reply batch is
 *  over (`sent`: gRPC reported it sent), or when the call ends without one
 *  (sent false): a traced request's GRPC_SEND_END. Set at most once, before
 *  the reply. */
typedef void srv_call_sent_fn(void *ctx, bool sent);
void srv_call_on_sent(srv_call_t *call, srv_call_sent_fn *fn, void *ctx);

/** Message kind that the on_message handler gets when the client cancels
 *  the call, or its deadline passes, before the call ended. */
enum { SRV_CALL_CANCELLED = 0x80 };

/** Watches the call for a client cancel or an expired deadline from now
 *  on, by receiving its close at once instead of with the reply. Set
 *  on_message first. The call's actor; once per call. */
void srv_call_watch_cancel(srv_call_t *call);

/** Whether the client gave the call a deadline (grpc-timeout). The call's
 *  actor. */
bool srv_call_has_deadline(const srv_call_t *call);

/** The call's actor: where other actors send messages for it. */
act_actor_t *srv_call_actor(srv_call_t *call);

/** A hold keeps the call's memory (its request bytes, its arena) alive after
 *  the reply went out, until the matching unhold: e.g. while a backend still
 *  owns a request that points into it. The call's actor only. */
void srv_call_hold(srv_call_t *call);
void srv_call_unhold(srv_call_t *call);

/** Parses the request with upb, its strings and bytes aliasing the received
 *  message (no copy): valid until the call is freed. NULL when malformed. */
upb_Message *srv_call_parse(srv_call_t *call, const upb_MiniTable *layout,
                            const char *request, size_t len);

/* In a handler: parses the request as `type` into a new `const type *var`
 * (aliasing the received bytes), or ends the call with INVALID_ARGUMENT
 * naming `rpc` and returns from the handler. */
#define SRV_CALL_PARSE_OR_RETURN(var, call, type, rpc, request, len)                   \
  const type *var = (const type *)srv_call_parse(call, &type##_msginit, request, len); \
  if (var == NULL) {                                                                   \
    srv_call_fail(call, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,                   \
                                       rpc ": malformed request message"));            \
    return;                                                                            \
  }

/* Serializes `msg` (of `type`, built in the call's arena) and ends the call
 * with it. */
#define SRV_CALL_REPLY(call, type, msg)                                \
  do {                                                                 \
    size_t len_;                                                       \
    char *bytes_ = type##_serialize(msg, srv_call_arena(call), &len_); \
    if (bytes_ == NULL) SRV_FATAL("out of memory serializing " #type); \
    srv_call_reply(call, bytes_, len_);                                \
  } while (0)

#endif
