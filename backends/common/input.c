/* Input reading and gathering. The instance's execute thread (or whichever
 * thread owns the request). */
#include "backends/common/input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/bytes.h"
#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/shape.h"

/* Fetches buffer i in CPU memory; GPU data would need a copy engine that
 * these CPU backends do not have. */
static TRITONSERVER_Error *cpu_buffer(TRITONBACKEND_Input *input, const char *name,
                                      uint32_t i, const void **buf, uint64_t *size) {
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t type_id = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(input, i, buf, size, &type, &type_id));
  if (type == TRITONSERVER_MEMORY_GPU) {
    return bk_error(TRITONSERVER_ERROR_UNSUPPORTED,
                    "input '%s': data in GPU memory is not supported by this CPU backend",
                    name);
  }
  return NULL;
}

/* Makes in->data one contiguous block: the buffer itself when there is one
 * (no copy on the common path), a gathered copy otherwise. */
static TRITONSERVER_Error *gather(TRITONBACKEND_Input *input, uint32_t count,
                                  bk_input_t *in) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++) {
    const void *buf = NULL;
    uint64_t size = 0;
    BK_RETURN_IF_ERROR(cpu_buffer(input, in->name, i, &buf, &size));
    if (size > in->byte_size - total) break; /* reported below */
    if (count == 1) {
      in->data = buf;
    } else if (size > 0) {
      if (in->gathered == NULL && (in->gathered = malloc(in->byte_size)) == NULL) {
        return bk_error(TRITONSERVER_ERROR_INTERNAL, "input '%s': out of memory",
                        in->name);
      }
      memcpy((char *)in->gathered + total, buf, size);
      in->data = in->gathered;
    }
    total += size;
  }
  if (total != in->byte_size) {
    return bk_error(TRITONSERVER_ERROR_INTERNAL,
                    "input '%s': buffers do not add up to its byte size %" PRIu64,
                    in->name, in->byte_size);
  }
  if (total == 0) in->data = NULL;
  return NULL;
}

/* Out of line: the shape's text buffer stays off bk_input_read's stack. */
static __attribute__((cold, noinline)) TRITONSERVER_Error *size_mismatch(
    const bk_input_t *in) {
  char shape[96];
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                  "input '%s': %" PRIu64 " bytes do not fit %s shape %s", in->name,
                  in->byte_size, bk_datatype_name(in->datatype),
                  bk_shape_format(in->shape, in->dims_count, shape, sizeof shape));
}

/* The data must be exactly what the shape describes. */
static TRITONSERVER_Error *check_size(const bk_input_t *in) {
  if (in->datatype == TRITONSERVER_TYPE_BYTES) {
    uint64_t n = 0;
    if (!bk_bytes_count(in->data, in->byte_size, &n)) {
      return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                      "input '%s': malformed BYTES data (an element runs past the end)",
                      in->name);
    }
    if (n == in->element_count) return NULL;
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input '%s': %" PRIu64 " BYTES elements but the shape holds %" PRIu64,
                    in->name, n, in->element_count);
  }
  uint64_t size = bk_datatype_size(in->datatype);
  if (size != 0 && in->element_count <= UINT64_MAX / size &&
      in->element_count * size == in->byte_size) {
    return NULL;
  }
  return size_mismatch(in);
}

TRITONSERVER_Error *bk_input_read(TRITONBACKEND_Request *request, const char *name,
                                  bk_input_t *in) {
  memset(in, 0, sizeof *in);
  TRITONBACKEND_Input *input = NULL;
  TRITONSERVER_Error *err = TRITONBACKEND_RequestInput(request, name, &input);
  if (err != NULL || input == NULL) {
    /* The server's own message may not name the tensor; ours does. */
    if (err != NULL) TRITONSERVER_ErrorDelete(err);
    return bk_error(TRITONSERVER_ERROR_NOT_FOUND, "input '%s' is missing", name);
  }
  uint32_t count = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(input, &in->name, &in->datatype,
                                                   &in->shape, &in->dims_count,
                                                   &in->byte_size, &count));
  if (in->name == NULL) in->name = name;
  if (!bk_shape_elements(in->shape, in->dims_count, &in->element_count)) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s': invalid shape", name);
  }
  err = gather(input, count, in);
  if (err == NULL) err = check_size(in);
  if (err != NULL) bk_input_release(in);
  return err;
}

void bk_input_release(bk_input_t *in) {
  if (in->gathered != NULL) { /* one-buffer inputs are read in place */
    free(in->gathered);
    in->gathered = NULL;
  }
  in->data = NULL;
}

TRITONSERVER_Error *bk_request_batch_size(TRITONBACKEND_Request *request,
                                          int64_t max_batch_size, uint64_t *batch_size) {
  *batch_size = 1;
  if (max_batch_size <= 0) return NULL;
  TRITONBACKEND_Input *input = NULL;
  const int64_t *shape = NULL;
  uint32_t dims_count = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_RequestInputByIndex(request, 0, &input));
  BK_RETURN_IF_ERROR(
      TRITONBACKEND_InputProperties(input, NULL, NULL, &shape, &dims_count, NULL, NULL));
  if (dims_count > 0 && shape[0] >= 0) *batch_size = (uint64_t)shape[0];
  return NULL;
}
