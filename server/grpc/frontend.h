/* The gRPC frontend: one grpc_server, one completion queue per worker, a
 * thread per queue that only turns (tag, success) into actor messages, and
 * the calls that those messages drive. Started and shut down by the main
 * thread; the accessors are safe from any thread while it runs. */
#ifndef NEREID_SERVER_GRPC_FRONTEND_H
#define NEREID_SERVER_GRPC_FRONTEND_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/common/restricted.h"
#include "server/common/status.h"
#include "server/core/core.h"
#include "server/grpc/rpc.h"

typedef struct srv_frontend srv_frontend_t;
typedef struct srv_health srv_health_t;

/** Starts the health actor, builds the grpc_server, registers every method
 *  of srv_rpcs, binds --grpc-address:--grpc-port, starts the queue threads
 *  and requests calls. On error nothing is left running. */
srv_status_t *srv_frontend_start(srv_server_t *srv, srv_frontend_t **out);

/** The bound port (useful with --grpc-port=0). */
int srv_frontend_port(const srv_frontend_t *fe);
/** The restriction of srv_rpcs[rpc] (rpc == srv_rpc_count: unregistered
 *  methods), NULL when open (restrict.h). Any thread. */
const srv_restriction_t *srv_frontend_restriction(const srv_frontend_t *fe, size_t rpc);
/** --grpc-infer-response-compression-level. Any thread. */
grpc_compression_level srv_frontend_infer_compression(const srv_frontend_t *fe);
/** The plaintext health port (--grpc-health-port), 0 if none. */
int srv_frontend_health_port(const srv_frontend_t *fe);
/** Completion queues, each with its thread (--grpc-threads). */
unsigned srv_frontend_cq_count(const srv_frontend_t *fe);

/** Requests one more call of srv_rpcs[rpc] (rpc == srv_rpc_count: any
 *  unregistered method) on queue cq. Any thread. */
void srv_frontend_request(srv_frontend_t *fe, size_t rpc, unsigned cq);

/** A call reached its handler / its object is about to be freed, having
 *  started its last batch. Shutdown waits for these calls and only for
 *  these: see srv_frontend_wait. Any thread. */
void srv_frontend_call_begin(srv_frontend_t *fe);
void srv_frontend_call_end(srv_frontend_t *fe);

srv_server_t *srv_frontend_server(const srv_frontend_t *fe);
srv_health_t *srv_frontend_health(const srv_frontend_t *fe);

/** The core's state changed (ready, exiting): health watches learn it.
 *  Any thread. */
void srv_frontend_state_changed(srv_frontend_t *fe);
grpc_server *srv_frontend_grpc(const srv_frontend_t *fe);
grpc_completion_queue *srv_frontend_cq(const srv_frontend_t *fe, unsigned cq);
void *srv_frontend_method(const srv_frontend_t *fe, size_t rpc);

/* Shutdown, main thread: srv_frontend_shutdown, then srv_frontend_wait
 * (and srv_frontend_cancel if it times out, then srv_frontend_wait
 * again), then srv_frontend_close once a wait returned true. */

/** Stops accepting calls; calls in flight go on. */
void srv_frontend_shutdown(srv_frontend_t *fe);

/** Waits until gRPC has finished shutting down and no call object is left
 *  (srv_frontend_call_end of every call), or the deadline
 *  (common/deadline.h); true when done. Calls that gRPC accepted but never
 *  matched to a handler are cancelled as soon as no handled call is left
 *  (they would otherwise wait for their own deadline). May be called
 *  again. */
bool srv_frontend_wait(srv_frontend_t *fe, uint64_t deadline_ns);

/** Cancels every call in flight (the exit timeout expired). Each call's
 *  handler learns it as a client cancel and cancels its requests. */
void srv_frontend_cancel(srv_frontend_t *fe);

/** Calls whose objects are still alive (from their arrival to their end).
 *  Any thread; the count can change at once. */
long srv_frontend_calls(srv_frontend_t *fe);

/** After srv_frontend_wait returned true: shuts the completion queues
 *  down, joins their threads, and stops the control and health actors. */
void srv_frontend_close(srv_frontend_t *fe);

/** Frees the frontend after srv_frontend_close and the runtime's quiesce. */
void srv_frontend_free(srv_frontend_t *fe);

#endif
