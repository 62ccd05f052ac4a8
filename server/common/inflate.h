/* gzip and deflate bodies: bounded inflating of requests (both frontends:
 * never past a limit, a gzip body refused before inflating when its
 * trailer says it is too large), and compressing of answers. Any thread. */
#ifndef NEREID_SERVER_COMMON_INFLATE_H
#define NEREID_SERVER_COMMON_INFLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"

/** A piece of the compressed input. */
typedef struct {
  const void *base;
  size_t len;
} srv_piece_t;

/** Inflates the `count` pieces (one gzip or zlib/deflate stream, nothing
 *  after it) into one malloc'd buffer (*out, *out_len; the caller frees
 *  it). Past `max_len` bytes: RESOURCE_EXHAUSTED naming `limit_flag`;
 *  malformed or truncated: INVALID_ARGUMENT. Messages start with `what`. */
srv_status_t *srv_inflate(const srv_piece_t *in, size_t count, bool gzip, size_t max_len,
                          const char *what, const char *limit_flag, char **out,
                          size_t *out_len);

/** Compresses the `count` pieces into one malloc'd gzip (or zlib deflate)
 *  stream, *out and *out_len, at zlib's default level. */
void srv_deflate(const srv_piece_t *in, size_t count, bool gzip, char **out,
                 size_t *out_len);

#endif
