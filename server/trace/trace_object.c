/* Traces as objects (see trace.h) and Triton's C API on them:
 * TRITONSERVER_InferenceTrace*, TRITONBACKEND_RequestTrace. Any thread;
 * a trace's fields are set before its request is enqueued, then read. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/api/error.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/model/request.h"
#include "server/trace/trace.h"
#include "server/trace/trace_frontend.h"
#include "server/trace/trace_record.h"

/* Triton's ids: one counter for the process, from 1. Relaxed: only
 * uniqueness matters, and only sampled requests take one. */
static _Atomic uint64_t next_id = 1;

srv_trace_t *srv_trace_alloc(uint32_t level, uint64_t parent_id) {
  srv_trace_t *t = calloc(1, sizeof *t);
  if (t == NULL) SRV_FATAL("out of memory");
  t->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
  t->parent_id = parent_id;
  t->level = level;
  return t;
}

void srv_trace_free(srv_trace_t *t) {
  free(t->model_name);
  free(t->request_id);
  free(t->context);
  free(t);
}

srv_trace_t *srv_trace_child(srv_trace_t *t) {
  if (t == NULL) return NULL;
  srv_trace_t *c = srv_trace_alloc(t->level, t->id);
  c->activity_fn = t->activity_fn;
  c->tensor_fn = t->tensor_fn;
  c->release_fn = t->release_fn;
  c->userp = t->userp;
  c->record = t->record;
  if (c->record != NULL) srv_trace_record_share(c->record);
  return c;
}

void srv_trace_set_request(srv_trace_t *t, const char *model_name, int64_t version,
                           const char *request_id) {
  free(t->model_name);
  free(t->request_id);
  t->model_name = srv_strdup(model_name);
  t->model_version = version;
  t->request_id = srv_strdup(request_id != NULL ? request_id : "");
}

void srv_trace_report(srv_trace_t *t, TRITONSERVER_InferenceTraceActivity activity,
                      uint64_t ns, const char *name) {
  if (!(t->level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS)) return;
  if (t->record == NULL) {
    if (t->activity_fn != NULL) t->activity_fn(t, activity, ns, t->userp);
    return;
  }
  /* Triton's first entry of a trace comes with its REQUEST_START. */
  if (activity == TRITONSERVER_TRACE_REQUEST_START)
    srv_trace_record_info(t->record, t->id, t->model_name, t->model_version,
                          t->request_id, t->parent_id);
  const char *label = activity == TRITONSERVER_TRACE_CUSTOM_ACTIVITY
                          ? name
                          : TRITONSERVER_InferenceTraceActivityString(activity);
  srv_trace_record_stamp(t->record, t->id, label, ns);
}

void srv_trace_report_tensor(srv_trace_t *t, TRITONSERVER_InferenceTraceActivity activity,
                             const char *name, TRITONSERVER_DataType datatype,
                             const void *base, size_t byte_size, const int64_t *shape,
                             uint64_t dims, TRITONSERVER_MemoryType memory_type,
                             int64_t memory_type_id) {
  if (!(t->level & TRITONSERVER_TRACE_LEVEL_TENSORS)) return;
  if (t->record == NULL) {
    if (t->tensor_fn != NULL)
      t->tensor_fn(t, activity, name, datatype, base, byte_size, shape, dims, memory_type,
                   memory_type_id, t->userp);
    return;
  }
  if (memory_type == TRITONSERVER_MEMORY_GPU) {
    SRV_VERBOSE(1, "trace %llu: tensor '%s' is in GPU memory, not traced",
                (unsigned long long)t->id, name);
    return;
  }
  srv_trace_record_tensor(t->record, t->id,
                          TRITONSERVER_InferenceTraceActivityString(activity), name,
                          datatype, base, byte_size, shape, dims);
}

void srv_trace_release(srv_trace_t *t) {
  if (t->record != NULL) {
    srv_trace_record_t *r = t->record;
    srv_trace_free(t);
    srv_trace_record_drop(r);
    return;
  }
  /* A user's trace: the callback owns it now (and deletes it). */
  if (t->release_fn != NULL)
    t->release_fn(t, t->userp);
  else
    srv_trace_free(t);
}

/* ---- a frontend's own timestamps (trace_frontend.h) ---- */

struct srv_trace_later {
  srv_trace_record_t *record;
  uint64_t id;
};

void srv_trace_stamp_now(srv_trace_t *t, const char *name) {
  if (t->record != NULL && (t->level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS))
    srv_trace_record_stamp(t->record, t->id, name, act_now_ns());
}

srv_trace_later_t *srv_trace_later(srv_trace_t *t) {
  if (t->record == NULL || !(t->level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS)) return NULL;
  srv_trace_later_t *l = malloc(sizeof *l);
  if (l == NULL) SRV_FATAL("out of memory");
  l->record = t->record;
  l->id = t->id;
  srv_trace_record_share(l->record);
  return l;
}

void srv_trace_later_stamp(srv_trace_later_t *l, const char *name) {
  srv_trace_record_stamp(l->record, l->id, name, act_now_ns());
}

void srv_trace_later_done(srv_trace_later_t *l) {
  srv_trace_record_drop(l->record);
  free(l);
}

/* ---- Triton's C API ---- */

#define NEED(arg, fn)                                                                   \
  do {                                                                                  \
    if ((arg) == NULL)                                                                  \
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: " #arg " is NULL", fn); \
  } while (0)

TRITONSERVER_Error *TRITONSERVER_InferenceTraceTensorNew(
    TRITONSERVER_InferenceTrace **trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void *trace_userp) {
  NEED(trace, "TRITONSERVER_InferenceTraceTensorNew");
  /* MIN and MAX are Triton's deprecated names of TIMESTAMPS. */
  uint32_t l = (uint32_t)level;
  if (l & (TRITONSERVER_TRACE_LEVEL_MIN | TRITONSERVER_TRACE_LEVEL_MAX))
    l = (l & ~3u) | TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
  if (l &
      ~(uint32_t)(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS | TRITONSERVER_TRACE_LEVEL_TENSORS))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "TRITONSERVER_InferenceTraceNew: unknown trace level bits 0x%x",
                         (unsigned)level);
  srv_trace_t *t = srv_trace_alloc(l, parent_id);
  t->activity_fn = activity_fn;
  t->tensor_fn = tensor_activity_fn;
  t->release_fn = release_fn;
  t->userp = trace_userp;
  *trace = t;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceNew(
    TRITONSERVER_InferenceTrace **trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void *trace_userp) {
  return TRITONSERVER_InferenceTraceTensorNew(trace, level, parent_id, activity_fn, NULL,
                                              release_fn, trace_userp);
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceDelete(
    TRITONSERVER_InferenceTrace *trace) {
  NEED(trace, "TRITONSERVER_InferenceTraceDelete");
  /* A child of a server trace that a backend spawned and did not hand to
   * ServerInferAsync (which failed): its share of the record goes too. */
  srv_trace_record_t *r = trace->record;
  srv_trace_free(trace);
  if (r != NULL) srv_trace_record_drop(r);
  return NULL;
}

/* Triton's getters: the trace and the out pointer checked, then one field. */
#define TRACE_GETTER(fn, type, out, value)                                \
  TRITONSERVER_Error *fn(TRITONSERVER_InferenceTrace *trace, type *out) { \
    NEED(trace, #fn);                                                     \
    NEED(out, #fn);                                                       \
    *out = (value);                                                       \
    return NULL;                                                          \
  }

TRACE_GETTER(TRITONSERVER_InferenceTraceId, uint64_t, id, trace->id)
TRACE_GETTER(TRITONSERVER_InferenceTraceParentId, uint64_t, parent_id, trace->parent_id)
TRACE_GETTER(TRITONSERVER_InferenceTraceModelName, const char *, model_name,
             trace->model_name != NULL ? trace->model_name : "")
TRACE_GETTER(TRITONSERVER_InferenceTraceModelVersion, int64_t, model_version,
             trace->model_version)
TRACE_GETTER(TRITONSERVER_InferenceTraceRequestId, const char *, request_id,
             trace->request_id != NULL ? trace->request_id : "")
TRACE_GETTER(TRITONSERVER_InferenceTraceContext, const char *, trace_context,
             trace->context)

TRITONSERVER_Error *TRITONSERVER_InferenceTraceSpawnChildTrace(
    TRITONSERVER_InferenceTrace *trace, TRITONSERVER_InferenceTrace **child_trace) {
  NEED(trace, "TRITONSERVER_InferenceTraceSpawnChildTrace");
  NEED(child_trace, "TRITONSERVER_InferenceTraceSpawnChildTrace");
  *child_trace = srv_trace_child(trace);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceSetContext(
    TRITONSERVER_InferenceTrace *trace, const char *trace_context) {
  NEED(trace, "TRITONSERVER_InferenceTraceSetContext");
  free(trace->context);
  trace->context = trace_context != NULL ? srv_strdup(trace_context) : NULL;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceReportActivity(
    TRITONSERVER_InferenceTrace *trace, uint64_t timestamp, const char *activity_name) {
  NEED(trace, "TRITONSERVER_InferenceTraceReportActivity");
  NEED(activity_name, "TRITONSERVER_InferenceTraceReportActivity");
  srv_trace_report(trace, TRITONSERVER_TRACE_CUSTOM_ACTIVITY, timestamp, activity_name);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestTrace(TRITONBACKEND_Request *request,
                                               TRITONSERVER_InferenceTrace **trace) {
  NEED(request, "TRITONBACKEND_RequestTrace");
  NEED(trace, "TRITONBACKEND_RequestTrace");
  /* A request outside a server (tests) has no state: untraced. */
  *trace = request->state != NULL ? request->state->trace : NULL;
  return NULL;
}
