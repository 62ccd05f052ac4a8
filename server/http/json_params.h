/* The request-level `parameters` object of the HTTP frontend's JSON
 * requests (infer and generate): sequence_id (integer or string),
 * sequence_start, sequence_end, priority, timeout, binary_data_output, and
 * the parameters the server hands on to the backend.
 * Pure functions: any thread. */
#ifndef NEREID_SERVER_HTTP_JSON_PARAMS_H
#define NEREID_SERVER_HTTP_JSON_PARAMS_H

#include <jansson.h>
#include <stdbool.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** Reads `params` (NULL: none given) into r (whose model is m): the
 *  correlation ID, a string one copied into `arena`; the sequence flags;
 *  priority (clamped to UINT32_MAX) and timeout in microseconds, as the
 *  gRPC frontend reads them; *binary_data_output when given (may be NULL
 *  where the protocol has no such option). Every other key goes to the
 *  backend as a request parameter (request_params.h), typed as Triton's
 *  HTTP frontend types it; `triton_` keys are refused. Texts are Triton's
 *  HTTP ones, and the core's for bounds. */
srv_status_t *srv_json_params_read(const srv_model_t *m, const json_t *params,
                                   upb_Arena *arena, TRITONBACKEND_Request *r,
                                   bool *binary_data_output);

#endif
