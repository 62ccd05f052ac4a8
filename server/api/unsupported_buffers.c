/* The functions of Triton's C API on buffer attributes, raw and host-policy inputs, memory usage reports, classification labels, the API version that Nereid does not
 * implement yet. Each answers UNSUPPORTED with its own name, so that a
 * backend using it loads (dlopen with RTLD_NOW needs every symbol) and fails
 * clearly if it calls one. Any thread. Functions leave this file as they are
 * implemented elsewhere; the file goes when it is empty. */
#include "server/api/error.h"
#include "triton/core/tritonbackend.h"

#define UNSUPPORTED(name) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, "%s is not supported by Nereid yet", name)

TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddRawInput(
    TRITONSERVER_InferenceRequest *inference_request, const char *name) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestAddRawInput");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    TRITONSERVER_InferenceRequest *inference_request, const char *name, const void *base,
    TRITONSERVER_BufferAttributes *buffer_attributes) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes");
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
    TRITONSERVER_InferenceRequest *inference_request, const char *name, const void *base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id,
    const char *host_policy_name) {
  return UNSUPPORTED("TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy");
}

