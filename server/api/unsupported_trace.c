/* The functions of Triton's C API on inference traces that Nereid does not
 * implement yet. Each answers UNSUPPORTED with its own name, so that a
 * backend using it loads (dlopen with RTLD_NOW needs every symbol) and fails
 * clearly if it calls one. Any thread. Functions leave this file as they are
 * implemented elsewhere; the file goes when it is empty. */
#include "server/api/error.h"
#include "triton/core/tritonbackend.h"

#define UNSUPPORTED(name) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, "%s is not supported by Nereid yet", name)

TRITONSERVER_Error *TRITONSERVER_InferenceTraceContext(TRITONSERVER_InferenceTrace *trace,
                                                       const char **trace_context) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceContext");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceDelete(
    TRITONSERVER_InferenceTrace *trace) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceDelete");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceId(TRITONSERVER_InferenceTrace *trace,
                                                  uint64_t *id) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceId");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceModelName(
    TRITONSERVER_InferenceTrace *trace, const char **model_name) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceModelName");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceModelVersion(
    TRITONSERVER_InferenceTrace *trace, int64_t *model_version) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceModelVersion");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceNew(
    TRITONSERVER_InferenceTrace **trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void *trace_userp) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceNew");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceParentId(
    TRITONSERVER_InferenceTrace *trace, uint64_t *parent_id) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceParentId");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceRequestId(
    TRITONSERVER_InferenceTrace *trace, const char **request_id) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceRequestId");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceSetContext(
    TRITONSERVER_InferenceTrace *trace, const char *trace_context) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceSetContext");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceSpawnChildTrace(
    TRITONSERVER_InferenceTrace *trace, TRITONSERVER_InferenceTrace **child_trace) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceSpawnChildTrace");
}

TRITONSERVER_Error *TRITONSERVER_InferenceTraceTensorNew(
    TRITONSERVER_InferenceTrace **trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void *trace_userp) {
  return UNSUPPORTED("TRITONSERVER_InferenceTraceTensorNew");
}
