/* A ModelInferResponse as the byte buffer gRPC sends, each byte written
 * once (issue 21): the message's other fields (the head, small) are
 * written by hand for a unary reply without parameters, else serialized by
 * upb, and each raw_output_contents entry follows (a field may
 * come anywhere in a protobuf message, and the entries of a repeated field
 * keep their order). The head and small outputs are copied once, straight
 * into one slice allocated at its final size, sent as sub-slices of it; an
 * output of at least SRV_INFER_SLICE_MIN bytes that the response owns
 * alone goes as a slice that takes its buffer over from the response
 * (gRPC frees it once written). Runs on the actor that owns the request. */
#ifndef NEREID_SERVER_GRPC_INFER_SLICES_H
#define NEREID_SERVER_GRPC_INFER_SLICES_H

#include <grpc/byte_buffer.h>
#include <stdbool.h>

#include "grpc_service.upb.h"
#include "server/core/core.h"

/** Outputs this large travel by reference. Below it a copy costs less than
 *  the reference (measured: docs/perf.md, issue 19 follow-up). */
#define SRV_INFER_SLICE_MIN (64 * 1024)

/** Whether r has an output for `request` worth sending by reference (the
 *  stream's choice between this and its own path). */
bool srv_infer_slices_worth(const TRITONBACKEND_Request *request,
                            const TRITONBACKEND_Response *r);

/** The reply to `request` carried by r, as srv_infer_response_encode has
 *  it, in a byte buffer that takes r's large output buffers over (r keeps
 *  their names and shapes, and is freed as usual). a holds the small parts
 *  until this returns. */
grpc_byte_buffer *srv_infer_slices_encode(const srv_model_t *m,
                                          const TRITONBACKEND_Request *request,
                                          TRITONBACKEND_Response *r, upb_Arena *a);

/** The same for a reply already built (srv_infer_response_encode, maybe
 *  with more parameters), nested as length-delimited field `field` of an
 *  outer message whose only field it is (ModelStreamInferResponse's
 *  infer_response, 2), or on its own when field is 0. */
grpc_byte_buffer *srv_infer_slices_encode_message(inference_ModelInferResponse *resp,
                                                  uint32_t field,
                                                  const TRITONBACKEND_Request *request,
                                                  TRITONBACKEND_Response *r, upb_Arena *a);

#endif
