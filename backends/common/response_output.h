/* An output of an in-process (BLS) response, as one struct: the ten
 * out-parameters of TRITONSERVER_InferenceResponseOutput, for backends that
 * read the answers of requests they sent. The response's thread (its
 * callback, or whoever holds it); valid while the response is. */
#ifndef NEREID_BACKENDS_COMMON_RESPONSE_OUTPUT_H
#define NEREID_BACKENDS_COMMON_RESPONSE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

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

/** Output `index` of `response` into *out; the API's error, if any. */
TRITONSERVER_Error *bk_response_output(TRITONSERVER_InferenceResponse *response,
                                       uint32_t index, bk_response_output_t *out);

#endif
