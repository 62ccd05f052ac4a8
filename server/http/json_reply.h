/* What the HTTP frontend's JSON replies share (infer and generate): the
 * header fields (model_name, model_version, id, the response's
 * parameters) and the dump of a jansson tree into the arena. Pure
 * functions: any thread. */
#ifndef NEREID_SERVER_HTTP_JSON_REPLY_H
#define NEREID_SERVER_HTTP_JSON_REPLY_H

#include <jansson.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** A new object with model_name, model_version, id (when not empty) and
 *  `parameters` (when r has any) of response r (NULL: none). */
json_t *srv_json_reply_header(const srv_model_desc_t *d, const char *id,
                              const TRITONBACKEND_Response *r);

/** `root` as compact JSON, NUL-terminated, in arena a. INTERNAL when
 *  jansson cannot write it. */
srv_status_t *srv_json_reply_dump(const json_t *root, upb_Arena *a, const char **text,
                                  size_t *len);

#endif
