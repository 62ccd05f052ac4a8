/* The JSON body of an HTTP request to the repository endpoints (private to
 * views/). Any thread. */
#ifndef NEREID_SERVER_VIEWS_HTTP_BODY_H
#define NEREID_SERVER_VIEWS_HTTP_BODY_H

#include <jansson.h>
#include <stddef.h>

#include "server/common/status.h"

/** *out gets the body's JSON object (the caller drops it), or NULL for an
 *  empty body (every field at its default). INVALID_ARGUMENT, with
 *  jansson's position, when it is not JSON, holds a key twice or is not
 *  an object; *out is NULL then. */
srv_status_t *srv_http_body_parse(const char *body, size_t len, json_t **out);

#endif
