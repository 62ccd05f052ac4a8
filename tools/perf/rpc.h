/* gRPC plumbing of nereid-perf: channels with their own connection, the
 * blocking control calls (metadata, config, statistics) of the main
 * thread, status names, and flat views of received messages. */
#ifndef NEREID_TOOLS_PERF_RPC_H
#define NEREID_TOOLS_PERF_RPC_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/perf/common.h"

#define PERF_METHOD_PREFIX "/inference.GRPCInferenceService/"

/** An insecure channel to target (HOST:PORT) with a connection of its own
 *  (a local subchannel pool: channels to one target do not share a TCP
 *  connection), unlimited receive size and retries off (a retried call
 *  would buffer every message it sends). Any thread. */
grpc_channel *perf_channel_create(const char *target);

/** One unary call of PERF_METHOD_PREFIX + method, waiting for the channel to
 *  become ready, up to timeout_ms in all. On success, *reply holds the
 *  response bytes (the caller unrefs it). On failure, err says
 *  "<method>: <STATUS>: <details>". Blocks; any thread (its own queue). */
bool perf_rpc_call(grpc_channel *ch, const char *method, const char *req, size_t len,
                   unsigned timeout_ms, grpc_slice *reply, perf_err_t *err);

/** "INVALID_ARGUMENT" and so on. */
const char *perf_status_name(grpc_status_code code);

/** The bytes of a received message as one slice (the caller unrefs it):
 *  the message's own slice when it is one, else a flattened copy. */
grpc_slice perf_byte_buffer_flat(grpc_byte_buffer *bb);

/** A deadline ns nanoseconds from now on gRPC's monotonic clock. */
gpr_timespec perf_deadline_in(int64_t ns);

/** Fills ops[0..5] for a unary call in one batch: send the initial
 *  metadata (with initial_md_flags), `send` and the close; receive the
 *  initial metadata, the reply and the status into the given places. */
void perf_unary_ops(grpc_op ops[6], uint32_t initial_md_flags, grpc_byte_buffer *send,
                    grpc_metadata_array *initial_md, grpc_byte_buffer **recv,
                    grpc_metadata_array *trailing_md, grpc_status_code *status,
                    grpc_slice *details);

#endif
