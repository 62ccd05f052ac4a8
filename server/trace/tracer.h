/* The server's tracer: the trace settings, global and per model (Triton's
 * semantics: a model's setting that was never set, or was cleared, follows
 * the global one), sampling, and the file writer. Made at start-up from
 * the flags, freed at shutdown after every request is done. Sampling runs
 * on the thread that enqueues a request; updates and reads of the settings
 * on any thread (the TraceSetting endpoints). */
#ifndef NEREID_SERVER_TRACE_TRACER_H
#define NEREID_SERVER_TRACE_TRACER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/trace/trace.h"
#include "server/trace/trace_config.h"
#include "upb/upb.h"

/** Model names with a slot: made by a setting of their own, or by their
 *  first request while tracing is on (their sampling counter). A setting
 *  for one more name is RESOURCE_EXHAUSTED; requests of further names
 *  count on the global counter. */
#define SRV_TRACE_MODELS_MAX 4096

typedef struct srv_tracer srv_tracer_t;

/** Whether any setting may sample: the one branch that an untraced
 *  request pays when tracing is off. Relaxed: a hint; a request that reads
 *  a stale value is sampled, or not, as if it came a moment earlier. */
static inline bool srv_tracer_on(const srv_tracer_t *tr) {
  return tr != NULL && atomic_load_explicit((_Atomic bool *)tr, memory_order_relaxed);
}

/** Takes c's values (c stays the caller's). Starts the writer when c names
 *  a file. Main thread. */
srv_status_t *srv_tracer_new(const srv_trace_config_t *c, srv_tracer_t **out);

/** Writes what is left and frees. Main thread, after every request. */
void srv_tracer_free(srv_tracer_t *tr);

/** A new trace for a request of `model`, or NULL when the model's setting
 *  does not sample this one: exactly every rate-th request of each model
 *  name (its own counter, on a cache line of its own, whichever setting
 *  gives the rate), while trace_count lasts. Any thread. */
srv_trace_t *srv_tracer_sample(srv_tracer_t *tr, const char *model);

/** A TraceSetting request's new values, parsed (srv_trace_update_parse)
 *  before anything changes. */
typedef struct {
  uint32_t given, cleared; /* SRV_TRACE_F_* bits */
  uint32_t level, rate, log_frequency;
  int32_t count;
} srv_trace_update_t;

enum {
  SRV_TRACE_F_LEVEL = 1,
  SRV_TRACE_F_RATE = 2,
  SRV_TRACE_F_COUNT = 4,
  SRV_TRACE_F_LOG_FREQUENCY = 8,
};

/** One setting of a request, as both frontends carry it: a name and its
 *  string values; no value clears the setting (gRPC's empty list, HTTP's
 *  null). INVALID_ARGUMENT with Triton's texts for values that do not
 *  parse or several values where one is expected; UNIMPLEMENTED for
 *  trace_file ("trace file location can not be updated through network
 *  protocol"); INVALID_ARGUMENT for an unknown name. Any thread. */
srv_status_t *srv_trace_update_parse(srv_trace_update_t *u, upb_StringView name,
                                     const upb_StringView *values, size_t count);

/** Applies u to the global setting (model NULL) or to `model`'s; nothing
 *  changes on error (a setting that would trace without a rate or a file:
 *  INVALID_ARGUMENT). Clearing a global value restores its start-up value;
 *  clearing every value of a model makes it follow the global setting. */
srv_status_t *srv_tracer_update(srv_tracer_t *tr, const char *model,
                                const srv_trace_update_t *u);

/** The setting in force for `model` (NULL: the global one). */
typedef struct {
  uint32_t level, rate, log_frequency;
  int32_t count;    /* what is left; -1: no limit */
  const char *file; /* "" when none; the tracer's, lives as long */
} srv_trace_view_t;

void srv_tracer_get(srv_tracer_t *tr, const char *model, srv_trace_view_t *out);

#endif
