/* What the JSON bodies of HTTP requests to the non-inference endpoints
 * (repository, shared memory) share; private to views/. Any thread. */
#ifndef NEREID_SERVER_VIEWS_HTTP_BODY_H
#define NEREID_SERVER_VIEWS_HTTP_BODY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"
#include "upb/upb.h"

/** *out gets the body's JSON object (the caller drops it), or NULL for an
 *  empty body (every field at its default). INVALID_ARGUMENT, with
 *  jansson's position, when it is not JSON, holds a key twice or is not
 *  an object; *out is NULL then. */
srv_status_t *srv_http_body_parse(const char *body, size_t len, json_t **out);

/** The bytes that the base64 text s[0..n) encodes, in `a` (at most
 *  n / 4 * 3 + 3 bytes); false when it is not base64 (whitespace between
 *  groups is allowed, padding is not optional). OpenSSL's decoder. */
bool srv_http_base64_decode(const char *s, size_t n, upb_Arena *a, upb_StringView *out);

#endif
