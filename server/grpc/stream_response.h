/* The messages a ModelStreamInfer stream writes (ModelStreamInferResponse),
 * serialized at once into a byte buffer of their own, so that the backend's
 * response can be freed before the write goes out. Runs on the stream's
 * actor. */
#ifndef NEREID_SERVER_GRPC_STREAM_RESPONSE_H
#define NEREID_SERVER_GRPC_STREAM_RESPONSE_H

#include <grpc/byte_buffer.h>
#include <stdbool.h>

#include "server/core/core.h"
#include "upb/upb.h"

/** The streamed answer to `request` of model m. r is the backend's
 *  response, or NULL for the empty response that stands for a flags-only
 *  final. A response with an error carries its message in error_message
 *  and no outputs. Every one carries the request's id and the parameter
 *  triton_final_response = final. Outputs of SRV_INFER_SLICE_MIN bytes
 *  and more are handed over to the buffer (infer_slices.h): r keeps their
 *  names and shapes only. Never NULL. */
grpc_byte_buffer *srv_stream_response_encode(const srv_model_t *m,
                                             const TRITONBACKEND_Request *request,
                                             TRITONBACKEND_Response *r, bool final);

/** A final error response on behalf of the model, for a request that the
 *  backend gave up without its final response. Never NULL. */
grpc_byte_buffer *srv_stream_response_fail(const srv_model_t *m,
                                           const TRITONBACKEND_Request *request,
                                           const char *message);

/** The answer to a request that never reached a model (malformed, unknown
 *  model, invalid input): error_message, and the request's id when it
 *  could be read. Never NULL. */
grpc_byte_buffer *srv_stream_response_error(upb_StringView id, const char *message);

#endif
