/* An inference trace (TRITONSERVER_InferenceTrace): one request's trace, a
 * child of another when an ensemble step or a BLS call made the request.
 * Either the server's own (sampled by the tracer, its activities written
 * as Triton's JSON, `record` set) or a user's (TRITONSERVER_InferenceTrace
 * New: its callbacks get the activities). Reported from whichever thread
 * holds the request at that point (frontend, model actor, instance, the
 * backend's own threads); the record serializes them. */
#ifndef NEREID_SERVER_TRACE_TRACE_H
#define NEREID_SERVER_TRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

struct srv_trace_record;

struct TRITONSERVER_InferenceTrace {
  uint64_t id, parent_id;
  uint32_t level; /* TRITONSERVER_InferenceTraceLevel bits */
  /* A user's trace: the callbacks and their argument. */
  TRITONSERVER_InferenceTraceActivityFn_t activity_fn;
  TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_fn;
  TRITONSERVER_InferenceTraceReleaseFn_t release_fn;
  void *userp;
  /* The server's trace: the JSON text it shares with its children. */
  struct srv_trace_record *record;
  /* Set once when the request is enqueued (srv_trace_request_start);
   * read by the getters, by the backend's threads, after that. */
  char *model_name;
  int64_t model_version;
  char *request_id;
  char *context; /* TRITONSERVER_InferenceTraceSetContext */
};

typedef struct TRITONSERVER_InferenceTrace srv_trace_t;

/** A new trace, id from a process-wide counter (ids start at 1; 0 means
 *  "no parent"). Any thread. */
srv_trace_t *srv_trace_alloc(uint32_t level, uint64_t parent_id);

/** Frees t and what it owns; neither callback is called. */
void srv_trace_free(srv_trace_t *t);

/** A child of t: same level, callbacks, argument and record; parent_id is
 *  t's id. NULL when t is NULL. Any thread that holds t. */
srv_trace_t *srv_trace_child(srv_trace_t *t);

/** Records a timestamp activity (TIMESTAMPS level), `name` only for
 *  TRITONSERVER_TRACE_CUSTOM_ACTIVITY. Any thread holding the request. */
void srv_trace_report(srv_trace_t *t, TRITONSERVER_InferenceTraceActivity activity,
                      uint64_t ns, const char *name);

/** Records a tensor activity (TENSORS level). Host memory only: a tensor
 *  elsewhere is skipped, as Triton does without GPU support. */
void srv_trace_report_tensor(srv_trace_t *t, TRITONSERVER_InferenceTraceActivity activity,
                             const char *name, TRITONSERVER_DataType datatype,
                             const void *base, size_t byte_size, const int64_t *shape,
                             uint64_t dims, TRITONSERVER_MemoryType memory_type,
                             int64_t memory_type_id);

/** Sets what the trace's first entry names (copies the strings). Called
 *  once, before the request is visible to any other thread. */
void srv_trace_set_request(srv_trace_t *t, const char *model_name, int64_t version,
                           const char *request_id);

/** The request is done with t: a server trace drops its share of the
 *  record (the last share hands the record to the writer) and is freed; a
 *  user's trace goes to its release callback, which owns it from then. */
void srv_trace_release(srv_trace_t *t);

#endif
