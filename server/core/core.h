/* The core's interface for frontends (gRPC today, HTTP next): the one
 * header a frontend includes to reach the core. Through it a frontend
 *   - starts and stops the core (below), and reads its state (server.h);
 *   - resolves a model name and version to a counted model reference
 *     (registry.h: srv_registry_acquire) and reads its description
 *     (model_view.h: srv_model_describe);
 *   - checks and builds a request (infer_check.h, request.h), submits it
 *     (srv_model_enqueue), cancels it (srv_request_cancel), and receives its
 *     responses, final flags and release as messages to the owner actor it
 *     names (request.h, response.h);
 *   - reads statistics (stats.h, batch_stats.h, response_stats.h: lock-free
 *     counters; memory_usage.h: the backend's reports, under a mutex);
 *   - records its own timestamps in a traced request's trace
 *     (trace_frontend.h), reads and changes the trace settings (tracer.h);
 *   - lists models and their states (registry.h views), scans the
 *     repositories (repo_scan.h) and asks for loads and unloads
 *     (repository.h, load_override.h).
 * The model's own state (scheduler, instances, backend) is not reachable
 * from here: Bazel's visibility keeps model.h to the core's subsystems. */
#ifndef NEREID_SERVER_CORE_CORE_H
#define NEREID_SERVER_CORE_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/core/server.h"
#include "server/model/infer_check.h"
#include "server/model/model_view.h"
#include "server/model/request.h"
#include "server/model/request_params.h"
#include "server/model/response.h"
#include "server/options.h"
#include "server/repository/load_override.h"
#include "server/repository/registry.h"
#include "server/repository/repo_scan.h"
#include "server/repository/repository.h"
#include "server/shm/shm.h"
#include "server/stats/batch_stats.h"
#include "server/stats/memory_usage.h"
#include "server/stats/response_stats.h"
#include "server/stats/stats.h"
#include "server/trace/trace_frontend.h"
#include "server/trace/tracer.h"

/** Starts the core over `opt`: the actor runtime, the repository and its
 *  registry, then loads what the control mode loads at start-up. Sets
 *  *all_loaded to whether every one of those models loaded. The state stays
 *  STARTING: the caller sets READY once its frontends serve. On error
 *  nothing is left running. Main thread. */
srv_status_t *srv_core_start(srv_server_t *srv, const srv_options_t *opt,
                             bool *all_loaded);

/* Shutdown, in steps that each wait up to a deadline (common/deadline.h),
 * so that the process decides what to do when one does not finish: see
 * server/README.md, "Shutdown order". Main thread, all of them. */

/** After the frontends stopped sending requests, or once the exit timeout
 *  expired: refuses new repository work (waiting up to the deadline for a
 *  running load or unload) and sends every model its stop: it answers its
 *  queued requests (UNAVAILABLE, or CANCELLED after srv_core_cancel) and
 *  stops once its instances have finished their batch. False when a load
 *  or unload still ran at the deadline; a later call goes on. */
bool srv_core_stop_until(srv_server_t *srv, uint64_t deadline_ns);

/** Waits up to the deadline for every model to stop; true when all did.
 *  May be called again. */
bool srv_core_wait_until(srv_server_t *srv, uint64_t deadline_ns);

/** Once the exit timeout expired: every request still queued or executing
 *  counts as cancelled. Backends see it through
 *  TRITONBACKEND_RequestIsCancelled and ResponseFactoryIsCancelled;
 *  queued requests are answered CANCELLED when their model stops. */
void srv_core_cancel(srv_server_t *srv);

/** After the frontends closed (their actors sent their stop): waits until
 *  every actor has handled its stop message. */
void srv_core_quiesce(srv_server_t *srv);

/** When models still did not stop after the cancel's grace period: logs
 *  what is abandoned, finalizes the models that stopped and the backends
 *  no abandoned model uses, and frees nothing. The process exits next. */
void srv_core_abandon(srv_server_t *srv);

/** The whole stop without bounds, for start-up failures and tests:
 *  srv_core_stop_until with no deadline, then srv_core_quiesce (the
 *  frontends must have sent their actors' stop). */
void srv_core_stop(srv_server_t *srv);

/** After the stop (srv_core_quiesce or srv_core_stop) and the frontends'
 *  own frees: finalizes the models and backends and frees the runtime.
 *  Main thread. */
void srv_core_free(srv_server_t *srv);

#endif
