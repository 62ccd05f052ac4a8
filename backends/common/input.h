/* Reading a request's input as one contiguous CPU buffer: gathers inputs
 * that arrive in several buffers and checks the data against the shape.
 * Called on the thread that owns the request (the instance's execute
 * thread); different requests may be read in parallel. */
#ifndef NEREID_BACKENDS_COMMON_INPUT_H
#define NEREID_BACKENDS_COMMON_INPUT_H

#include <stdint.h>

#include "triton/core/tritonbackend.h"

typedef struct {
  const char *name; /* owned by the request */
  TRITONSERVER_DataType datatype;
  const int64_t *shape; /* owned by the request */
  uint32_t dims_count;
  uint64_t element_count; /* product of the shape */
  uint64_t byte_size;
  const void *data; /* byte_size bytes, CPU; NULL when byte_size is 0 */
  void *gathered;   /* our copy when the input came in several buffers */
} bk_input_t;

/** Reads input `name`. Data stays valid until bk_input_release or the
 * request's release, whichever comes first. Errors name the tensor:
 * NOT_FOUND (no such input), UNSUPPORTED (data in GPU memory), INVALID_ARG
 * (byte size does not fit the shape, malformed BYTES). On error there is
 * nothing to release. */
TRITONSERVER_Error *bk_input_read(TRITONBACKEND_Request *request, const char *name,
                                  bk_input_t *in);

/** The request's batch size: 1 when max_batch_size is 0, else the leading
 * dim of its first input. */
TRITONSERVER_Error *bk_request_batch_size(TRITONBACKEND_Request *request,
                                          int64_t max_batch_size, uint64_t *batch_size);

/** Frees the gathered copy, if any. Call before releasing the request. */
void bk_input_release(bk_input_t *in);

#endif
