/* A backend built outside the tree, as a third party builds one: against the
 * installed headers (PREFIX/include) and linked with -L PREFIX/lib
 * -ltritonserver, so it carries NEEDED libtritonserver.so and no runpath, as
 * Triton's released backends do. install_test loads it into an installed
 * nereid. OUTPUT0 = 2 * INPUT0 + 1 (INT32, one CPU buffer). */
#include <stdint.h>
#include <string.h>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

static TRITONSERVER_Error *respond(TRITONBACKEND_Request *request) {
  TRITONBACKEND_Input *input;
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *shape;
  uint32_t dims, buffers;
  uint64_t bytes;
  TRITONSERVER_Error *err = TRITONBACKEND_RequestInput(request, "INPUT0", &input);
  if (err == NULL)
    err = TRITONBACKEND_InputProperties(input, &name, &datatype, &shape, &dims, &bytes,
                                        &buffers);
  if (err == NULL && (datatype != TRITONSERVER_TYPE_INT32 || buffers != 1))
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                 "install_backend: INPUT0 must be INT32 in one buffer");
  const void *in = NULL;
  uint64_t in_bytes = 0;
  TRITONSERVER_MemoryType in_type = TRITONSERVER_MEMORY_CPU;
  int64_t in_id = 0;
  if (err == NULL) err = TRITONBACKEND_InputBuffer(input, 0, &in, &in_bytes, &in_type, &in_id);
  if (err != NULL) return err;

  TRITONBACKEND_Response *response;
  err = TRITONBACKEND_ResponseNew(&response, request);
  if (err != NULL) return err;
  TRITONBACKEND_Output *output;
  void *out = NULL;
  TRITONSERVER_MemoryType out_type = TRITONSERVER_MEMORY_CPU;
  int64_t out_id = 0;
  err = TRITONBACKEND_ResponseOutput(response, &output, "OUTPUT0", TRITONSERVER_TYPE_INT32,
                                     shape, dims);
  if (err == NULL) err = TRITONBACKEND_OutputBuffer(output, &out, bytes, &out_type, &out_id);
  if (err == NULL) {
    for (uint64_t i = 0; i < bytes / sizeof(int32_t); i++) {
      int32_t v;
      memcpy(&v, (const char *)in + i * sizeof v, sizeof v);
      v = 2 * v + 1;
      memcpy((char *)out + i * sizeof v, &v, sizeof v);
    }
  }
  TRITONSERVER_Error *sent =
      TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  return sent;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance *instance,
                                                       TRITONBACKEND_Request **requests,
                                                       const uint32_t request_count) {
  (void)instance;
  for (uint32_t r = 0; r < request_count; r++) {
    TRITONSERVER_Error *err = respond(requests[r]);
    if (err != NULL) {
      TRITONBACKEND_Response *response;
      if (TRITONBACKEND_ResponseNew(&response, requests[r]) == NULL)
        TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseSend(
            response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err));
      TRITONSERVER_ErrorDelete(err);
    }
    TRITONSERVER_ErrorDelete(
        TRITONBACKEND_RequestRelease(requests[r], TRITONSERVER_REQUEST_RELEASE_ALL));
  }
  return NULL;
}
