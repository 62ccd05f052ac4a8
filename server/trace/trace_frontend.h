/* What a frontend records in a traced request's trace: its own
 * timestamps, with Triton's names (GRPC_SEND_START, HTTP_SEND_END...).
 * Reached through server/core/core.h. Each reads the clock, and is called
 * only for a request whose state has a trace (one branch otherwise). */
#ifndef NEREID_SERVER_TRACE_TRACE_FRONTEND_H
#define NEREID_SERVER_TRACE_TRACE_FRONTEND_H

#include "triton/core/tritonserver.h"

/** A timestamp `name` at the present time into t, a trace the caller
 *  holds (through the request's state). A user's trace gets nothing: its
 *  callbacks know only Triton's activities. Any thread. */
void srv_trace_stamp_now(TRITONSERVER_InferenceTrace *t, const char *name);

/** A hold on t's record for timestamps that may come after the request
 *  and its trace are released (the gRPC frontend's GRPC_SEND_END, at the
 *  reply batch's end). NULL for a user's trace. The record is written
 *  once every hold is done. */
typedef struct srv_trace_later srv_trace_later_t;
srv_trace_later_t *srv_trace_later(TRITONSERVER_InferenceTrace *t);

/** A timestamp `name` at the present time through l. The holder's thread. */
void srv_trace_later_stamp(srv_trace_later_t *l, const char *name);

/** Lets go of l (freed; the record is written once every hold is done). */
void srv_trace_later_done(srv_trace_later_t *l);

#endif
