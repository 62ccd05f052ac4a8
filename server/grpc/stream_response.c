/* ModelStreamInferResponse encoding (see stream_response.h). */
#include "server/grpc/stream_response.h"

#include <grpc/slice.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/grpc/infer_response.h"
#include "server/grpc/infer_slices.h"

/* Most responses are small: the scratch arena starts on the stack, so
 * encoding them allocates nothing on the heap but the slice itself. */
#define SCRATCH_BYTES 2048

/* ModelStreamInferResponse.infer_response. */
#define STREAM_INFER_RESPONSE_FIELD 2

/* Copied into a slice that gRPC owns: the write may finish after the
 * scratch arena is gone, and gRPC frees the slice on its own thread. */
static grpc_byte_buffer *serialize(const inference_ModelStreamInferResponse *msg,
                                   upb_Arena *a) {
  size_t len;
  char *bytes = inference_ModelStreamInferResponse_serialize(msg, a, &len);
  if (bytes == NULL) SRV_FATAL("out of memory serializing a stream response");
  grpc_slice slice = grpc_slice_malloc(len);
  if (len > 0) memcpy(GRPC_SLICE_START_PTR(slice), bytes, len);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
  grpc_slice_unref(slice);
  return bb;
}

/* Triton's clients tell a request's last response by this parameter. */
static void final_param_set(inference_ModelInferResponse *resp, bool final,
                            upb_Arena *a) {
  inference_InferParameter *p = inference_InferParameter_new(a);
  if (p == NULL) SRV_FATAL("out of memory");
  inference_InferParameter_set_bool_param(p, final);
  if (!inference_ModelInferResponse_parameters_set(
          resp, upb_StringView_FromString("triton_final_response"), p, a))
    SRV_FATAL("out of memory");
}

/* r: the backend's response; NULL with `error` (or neither, for an empty
 * final) when the server speaks for the model. */
static grpc_byte_buffer *encode(const srv_model_t *m,
                                const TRITONBACKEND_Request *request,
                                const TRITONBACKEND_Response *r, const char *error,
                                bool final) {
  char scratch[SCRATCH_BYTES];
  upb_Arena *a = upb_Arena_Init(scratch, sizeof scratch, &upb_alloc_global);
  if (a == NULL) SRV_FATAL("out of memory");
  inference_ModelStreamInferResponse *msg = inference_ModelStreamInferResponse_new(a);
  if (msg == NULL) SRV_FATAL("out of memory");
  if (r != NULL && r->error != NULL) error = TRITONSERVER_ErrorMessage(r->error);
  inference_ModelInferResponse *resp = r != NULL && r->error == NULL
                                           ? srv_infer_response_encode(m, request, r, a)
                                           : srv_infer_response_header(m, request, a);
  if (error != NULL)
    inference_ModelStreamInferResponse_set_error_message(
        msg, upb_StringView_FromString(error));
  final_param_set(resp, final, a);
  inference_ModelStreamInferResponse_set_infer_response(msg, resp);
  grpc_byte_buffer *bb = serialize(msg, a);
  upb_Arena_Free(a);
  return bb;
}

grpc_byte_buffer *srv_stream_response_encode(const srv_model_t *m,
                                             const TRITONBACKEND_Request *request,
                                             TRITONBACKEND_Response *r, bool final) {
  if (r == NULL || r->error != NULL || !srv_infer_slices_worth(request, r))
    return encode(m, request, r, NULL, final);
  /* Large outputs by reference: the stream message is infer_response
   * (field 2) alone, which the slices wrap themselves. */
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  inference_ModelInferResponse *resp = srv_infer_response_encode(m, request, r, a);
  final_param_set(resp, final, a);
  grpc_byte_buffer *bb = srv_infer_slices_encode_message(
      resp, STREAM_INFER_RESPONSE_FIELD, request, r, a);
  upb_Arena_Free(a);
  return bb;
}

grpc_byte_buffer *srv_stream_response_fail(const srv_model_t *m,
                                           const TRITONBACKEND_Request *request,
                                           const char *message) {
  return encode(m, request, NULL, message, true);
}

grpc_byte_buffer *srv_stream_response_error(upb_StringView id, const char *message) {
  char scratch[SCRATCH_BYTES];
  upb_Arena *a = upb_Arena_Init(scratch, sizeof scratch, &upb_alloc_global);
  if (a == NULL) SRV_FATAL("out of memory");
  inference_ModelStreamInferResponse *msg = inference_ModelStreamInferResponse_new(a);
  if (msg == NULL) SRV_FATAL("out of memory");
  inference_ModelStreamInferResponse_set_error_message(
      msg, upb_StringView_FromString(message));
  /* Echoed so that the client knows which of its requests failed. */
  inference_ModelInferResponse *resp =
      inference_ModelStreamInferResponse_mutable_infer_response(msg, a);
  if (resp == NULL) SRV_FATAL("out of memory");
  inference_ModelInferResponse_set_id(resp, id);
  grpc_byte_buffer *bb = serialize(msg, a);
  upb_Arena_Free(a);
  return bb;
}
