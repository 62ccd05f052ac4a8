/* Requested-output lookup and output buffer creation. The thread building
 * the response. */
#include "backends/common/output.h"

#include <string.h>

#include "backends/common/error.h"

TRITONSERVER_Error *bk_output_requested(TRITONBACKEND_Request *request, const char *name,
                                        bool *requested) {
  *requested = false;
  uint32_t count = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(request, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char *out = NULL;
    BK_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(request, i, &out));
    if (out != NULL && strcmp(out, name) == 0) {
      *requested = true;
      break;
    }
  }
  return NULL;
}

TRITONSERVER_Error *bk_outputs_requested(TRITONBACKEND_Request *request,
                                         const char *const *names, uint32_t n,
                                         const char **requested) {
  uint32_t count = 0, found = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(request, &count));
  for (uint32_t i = 0; i < count && found < n; i++) {
    const char *out = NULL;
    BK_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(request, i, &out));
    for (uint32_t k = 0; out != NULL && k < n; k++) {
      if (requested[k] == NULL && strcmp(out, names[k]) == 0) {
        requested[k] = out;
        found++;
        break;
      }
    }
  }
  return NULL;
}

TRITONSERVER_Error *bk_output_new(TRITONBACKEND_Response *response, const char *name,
                                  TRITONSERVER_DataType datatype, const int64_t *shape,
                                  uint32_t dims_count, uint64_t byte_size,
                                  void **buffer) {
  TRITONBACKEND_Output *output = NULL;
  BK_RETURN_IF_ERROR(
      TRITONBACKEND_ResponseOutput(response, &output, name, datatype, shape, dims_count));
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t type_id = 0;
  *buffer = NULL;
  BK_RETURN_IF_ERROR(
      TRITONBACKEND_OutputBuffer(output, buffer, byte_size, &type, &type_id));
  if (type == TRITONSERVER_MEMORY_GPU) {
    return bk_error(TRITONSERVER_ERROR_UNSUPPORTED,
                    "output '%s': the server placed it in GPU memory; this backend "
                    "writes CPU memory only",
                    name);
  }
  return NULL;
}
