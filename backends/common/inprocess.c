/* A host-memory response allocator and a response's output as one struct
 * (see inprocess.h). Callbacks on server threads. */
#include "backends/common/inprocess.h"

#include <stdlib.h>

static TRITONSERVER_Error *host_alloc(TRITONSERVER_ResponseAllocator *a, const char *name,
                                      size_t size, TRITONSERVER_MemoryType mt, int64_t id,
                                      void *userp, void **buffer, void **buffer_userp,
                                      TRITONSERVER_MemoryType *actual,
                                      int64_t *actual_id) {
  *actual = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  *buffer_userp = NULL;
  *buffer = size > 0 ? malloc(size) : NULL;
  if (size > 0 && *buffer == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE,
                                 "no host memory for an in-process response's output");
  return NULL;
}

static TRITONSERVER_Error *host_release(TRITONSERVER_ResponseAllocator *a, void *buffer,
                                        void *buffer_userp, size_t size,
                                        TRITONSERVER_MemoryType mt, int64_t id) {
  free(buffer);
  return NULL;
}

TRITONSERVER_Error *bk_host_allocator_new(TRITONSERVER_ResponseAllocator **allocator) {
  return TRITONSERVER_ResponseAllocatorNew(allocator, host_alloc, host_release, NULL);
}

TRITONSERVER_Error *bk_response_output(TRITONSERVER_InferenceResponse *response,
                                       uint32_t index, bk_response_output_t *out) {
  return TRITONSERVER_InferenceResponseOutput(
      response, index, &out->name, &out->datatype, &out->shape, &out->dims_count,
      &out->base, &out->byte_size, &out->memory_type, &out->memory_type_id, &out->userp);
}
