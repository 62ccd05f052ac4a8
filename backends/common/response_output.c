/* An in-process response's output as one struct (see response_output.h).
 * The response's thread. */
#include "backends/common/response_output.h"

TRITONSERVER_Error *bk_response_output(TRITONSERVER_InferenceResponse *response,
                                       uint32_t index, bk_response_output_t *out) {
  return TRITONSERVER_InferenceResponseOutput(
      response, index, &out->name, &out->datatype, &out->shape, &out->dims_count,
      &out->base, &out->byte_size, &out->memory_type, &out->memory_type_id, &out->userp);
}
