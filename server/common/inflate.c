/* Bounded inflating (see inflate.h). */
#include "server/common/inflate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "server/common/log.h"

/* A deflate stream says nothing of its size: its buffer starts at this many
 * times the compressed bytes and doubles up to the limit. */
#define DEFLATE_FIRST_RATIO 8
#define DEFLATE_FIRST_MIN (64u << 10)

/* gzip's trailer ends with the inflated size (mod 2^32, little-endian). */
static uint32_t gzip_trailer_size(const srv_piece_t *in, size_t count) {
  uint8_t b[4];
  size_t want = 4;
  for (size_t i = count; i-- > 0 && want > 0;) {
    const uint8_t *p = in[i].base;
    size_t n = in[i].len;
    while (n > 0 && want > 0) b[--want] = p[--n];
  }
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
         (uint32_t)b[3] << 24;
}

typedef struct {
  z_stream zs;
  uint8_t *buf;
  size_t cap;   /* bytes of buf; the stream may fill at most cap - 1 */
  size_t limit; /* what the message may inflate to */
} inflater_t;

/* Room for more output: false once the output reached the limit. The spare
 * byte tells "exactly the limit" from "past it". */
static bool room(inflater_t *f) {
  size_t used = f->cap - f->zs.avail_out;
  if (f->zs.avail_out > 0) return true;
  if (f->cap > f->limit) return false;
  size_t cap = f->cap * 2 > f->limit + 1 ? f->limit + 1 : f->cap * 2;
  uint8_t *grown = realloc(f->buf, cap);
  if (grown == NULL) return false;
  f->buf = grown;
  f->cap = cap;
  f->zs.next_out = grown + used;
  f->zs.avail_out = (uInt)(cap - used);
  return true;
}

/* Inflates every slice of `in`; Z_STREAM_END once it all inflated, Z_MEM_ERROR
 * past the limit, another zlib code when malformed or truncated. */
static int inflate_all(inflater_t *f, const srv_piece_t *in, size_t count) {
  int r = Z_OK;
  size_t next = 0;
  while (r != Z_STREAM_END) {
    if (f->zs.avail_in == 0 && next < count) {
      f->zs.next_in = (Bytef *)in[next].base;
      f->zs.avail_in = (uInt)in[next].len;
      next++;
      continue;
    }
    if (!room(f)) return Z_MEM_ERROR;
    r = inflate(&f->zs, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) return r;
    /* No progress with output room left: the input ran out early. */
    if (r == Z_BUF_ERROR && f->zs.avail_in == 0 && next == count && f->zs.avail_out > 0)
      return Z_DATA_ERROR;
  }
  /* One stream per message: nothing may follow. */
  bool trailing = f->zs.avail_in > 0;
  for (; next < count; next++) trailing |= in[next].len > 0;
  return trailing ? Z_DATA_ERROR : Z_STREAM_END;
}

srv_status_t *srv_inflate(const srv_piece_t *in, size_t count, bool gzip, size_t max_len,
                          const char *what, const char *limit_flag, char **out,
                          size_t *out_len) {
  size_t length = 0;
  for (size_t i = 0; i < count; i++) length += in[i].len;
  inflater_t f;
  memset(&f, 0, sizeof f);
  f.limit = max_len;
  if (gzip && length >= 18) {
    /* An honest trailer: refused before inflating a byte, or the exact
     * buffer at once. A lying one is caught by zlib's own check. */
    uint32_t said = gzip_trailer_size(in, count);
    if (said > max_len)
      return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                            "%s inflates to %u bytes, more than %s=%zu", what, said,
                            limit_flag, max_len);
    f.limit = said;
    f.cap = (size_t)said + 1;
  } else {
    size_t first = length * DEFLATE_FIRST_RATIO;
    if (first < DEFLATE_FIRST_MIN) first = DEFLATE_FIRST_MIN;
    f.cap = first > max_len ? max_len + 1 : first;
  }
  f.buf = malloc(f.cap);
  if (f.buf == NULL || inflateInit2(&f.zs, gzip ? 15 + 16 : 15) != Z_OK) {
    free(f.buf);
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED, "%s: no memory to inflate it",
                          what);
  }
  f.zs.next_out = f.buf;
  f.zs.avail_out = (uInt)f.cap;
  int r = inflate_all(&f, in, count);
  size_t used = f.cap - f.zs.avail_out;
  inflateEnd(&f.zs);
  if (r == Z_STREAM_END) {
    /* A deflate buffer may be up to twice what it holds: give the rest
     * back (in place for large blocks, so no copy). */
    if (f.cap - used > DEFLATE_FIRST_MIN) {
      uint8_t *fit = realloc(f.buf, used ? used : 1);
      if (fit != NULL) f.buf = fit;
    }
    *out = (char *)f.buf;
    *out_len = used;
    return NULL;
  }
  free(f.buf);
  if (r == Z_MEM_ERROR && !gzip)
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "%s inflates to more than %s=%zu bytes", what, limit_flag,
                          max_len);
  return srv_status_new(
      GRPC_STATUS_INVALID_ARGUMENT, "%s could not be decompressed (%s)", what,
      r == Z_MEM_ERROR ? "it inflates past the size its gzip trailer gives"
                       : "malformed or truncated data");
}

void srv_deflate(const srv_piece_t *in, size_t count, bool gzip, char **out,
                 size_t *out_len) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzip ? 15 + 16 : 15, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    SRV_FATAL("zlib: deflateInit2 failed");
  size_t total = 0;
  for (size_t i = 0; i < count; i++) total += in[i].len;
  size_t cap = deflateBound(&zs, total) + 32;
  uint8_t *buf = malloc(cap);
  if (buf == NULL) SRV_FATAL("out of memory");
  zs.next_out = buf;
  zs.avail_out = (uInt)cap;
  for (size_t i = 0; i < count; i++) {
    zs.next_in = (Bytef *)in[i].base;
    zs.avail_in = (uInt)in[i].len;
    int r = deflate(&zs, i + 1 == count ? Z_FINISH : Z_NO_FLUSH);
    if (r == Z_STREAM_ERROR) SRV_FATAL("zlib: deflate failed");
  }
  if (count == 0) deflate(&zs, Z_FINISH);
  *out = (char *)buf;
  *out_len = cap - zs.avail_out;
  deflateEnd(&zs);
}
