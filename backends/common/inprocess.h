/* What a backend that sends in-process (BLS) requests needs of its own: a
 * response allocator in host memory, and a response's output as one
 * struct (the ten out-parameters of TRITONSERVER_InferenceResponseOutput).
 * The allocator's callbacks run on server threads; the rest on the
 * response's holder's thread. */
#ifndef NEREID_BACKENDS_COMMON_INPROCESS_H
#define NEREID_BACKENDS_COMMON_INPROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/** A response allocator whose buffers are malloc'd host memory (none for
 *  an empty output), freed when the response is deleted. The caller
 *  deletes it (TRITONSERVER_ResponseAllocatorDelete). */
TRITONSERVER_Error *bk_host_allocator_new(TRITONSERVER_ResponseAllocator **allocator);

typedef struct {
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *shape;
  uint64_t dims_count;
  const void *base;
  size_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  void *userp; /* the allocator's buffer_userp */
} bk_response_output_t;

/** Output `index` of `response` into *out (valid while the response is);
 *  the API's error, if any. */
TRITONSERVER_Error *bk_response_output(TRITONSERVER_InferenceResponse *response,
                                       uint32_t index, bk_response_output_t *out);

#endif
