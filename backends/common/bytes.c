/* BYTES tensor serialization: reading and writing length-prefixed elements.
 * Any thread; pure functions. */
#include "backends/common/bytes.h"

#include <string.h>

void bk_bytes_reader_init(bk_bytes_reader_t *r, const void *buf, size_t size) {
  r->p = buf;
  r->left = buf != NULL ? size : 0;
}

/* Little-endian on every host: the wire format fixes the byte order. */
static uint32_t read_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

bk_bytes_step_t bk_bytes_next(bk_bytes_reader_t *r, const char **elem, uint32_t *len) {
  if (r->left == 0) return BK_BYTES_END;
  if (r->left < BK_BYTES_HEADER) return BK_BYTES_TRUNCATED;
  uint32_t n = read_le32(r->p);
  if (r->left - BK_BYTES_HEADER < n) return BK_BYTES_TRUNCATED;
  *elem = (const char *)r->p + BK_BYTES_HEADER;
  *len = n;
  r->p += BK_BYTES_HEADER + (size_t)n;
  r->left -= BK_BYTES_HEADER + (size_t)n;
  return BK_BYTES_ELEMENT;
}

bool bk_bytes_count(const void *buf, size_t size, uint64_t *count) {
  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, buf, size);
  uint64_t n = 0;
  const char *elem;
  uint32_t len;
  bk_bytes_step_t step;
  while ((step = bk_bytes_next(&r, &elem, &len)) == BK_BYTES_ELEMENT) n++;
  if (step == BK_BYTES_TRUNCATED) return false;
  *count = n;
  return true;
}

uint8_t *bk_bytes_put(uint8_t *dst, const void *elem, uint32_t len) {
  dst[0] = (uint8_t)len;
  dst[1] = (uint8_t)(len >> 8);
  dst[2] = (uint8_t)(len >> 16);
  dst[3] = (uint8_t)(len >> 24);
  if (len > 0) memcpy(dst + BK_BYTES_HEADER, elem, len);
  return dst + BK_BYTES_HEADER + len;
}
