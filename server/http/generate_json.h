/* Triton's generate extension (POST v2/models/<m>/generate and
 * generate_stream): a flat JSON object whose keys name the model's inputs
 * into a checked TRITONBACKEND_Request, a response into a flat JSON object
 * of its outputs, and one server-sent event around it. Pure functions: the
 * HTTP frontend's actor calls them; what they make lives in its arena. */
#ifndef NEREID_SERVER_HTTP_GENERATE_JSON_H
#define NEREID_SERVER_HTTP_GENERATE_JSON_H

#include <stddef.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** Builds *out from the JSON object in `body` for model m (d its
 *  description). Each key that names an input of the model gives its data:
 *  a scalar or a flat array of the input's type (BYTES as strings), its
 *  shape the config's dims with the one variable dimension (if any) taking
 *  the element count, other variable ones 1, and a batch dimension of 1
 *  for a model that batches. `parameters` is read as for infer
 *  (json_params.h). Other keys are ignored (Triton passes them to the
 *  backend as request parameters, which Nereid's requests do not carry
 *  yet). Every output of the model is requested. Checks are the core's. */
srv_status_t *srv_http_generate_parse(srv_model_t *m, const srv_model_desc_t *d,
                                      const char *body, size_t len, upb_Arena *arena,
                                      TRITONBACKEND_Request **out);

/** The flat reply to `request` carried by r: model_name, model_version, then
 *  each requested output by name, a single element as a scalar and more as
 *  a flat array. NUL-terminated compact JSON in arena a. */
srv_status_t *srv_http_generate_encode(const srv_model_desc_t *d,
                                       const TRITONBACKEND_Request *request,
                                       const TRITONBACKEND_Response *r, upb_Arena *a,
                                       const char **json, size_t *len);

/** One server-sent event, `data: <json>\n\n`, for generate_stream (json
 *  is compact: no newline inside). NUL-terminated, in arena a. */
const char *srv_http_sse_event(const char *json, size_t len, upb_Arena *a,
                               size_t *out_len);

#endif
