/* The functions of Triton's C API on request parameters, timeouts, priorities and cancellation that Nereid does not
 * implement yet. Each answers UNSUPPORTED with its own name, so that a
 * backend using it loads (dlopen with RTLD_NOW needs every symbol) and fails
 * clearly if it calls one. Any thread. Functions leave this file as they are
 * implemented elsewhere; the file goes when it is empty. */
#include "server/api/error.h"
#include "triton/core/tritonbackend.h"

#define UNSUPPORTED(name) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, "%s is not supported by Nereid yet", name)

TRITONSERVER_Error *TRITONSERVER_InferenceRequestCancel(
    TRITONSERVER_InferenceRequest *inference_request) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestCancel");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestIsCancelled(
    TRITONSERVER_InferenceRequest *inference_request, _Bool *is_cancelled) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestIsCancelled");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestPriority(
    TRITONSERVER_InferenceRequest *inference_request, uint32_t *priority) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestPriority");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestPriorityUInt64(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t *priority) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestPriorityUInt64");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetBoolParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const _Bool value) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetBoolParameter");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetDoubleParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const double value) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetDoubleParameter");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetIntParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const int64_t value) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetIntParameter");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetPriority(
    TRITONSERVER_InferenceRequest *inference_request, uint32_t priority) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetPriority");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetPriorityUInt64(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t priority) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetPriorityUInt64");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetStringParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const char *value) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetStringParameter");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t timeout_us) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestSetTimeoutMicroseconds");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t *timeout_us) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestTimeoutMicroseconds");
}
