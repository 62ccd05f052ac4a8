/* The BYTES tensor wire format: elements laid end to end, each a 4-byte
 * little-endian length followed by that many bytes (no terminator). Any
 * thread; pure functions over caller-owned buffers. */
#ifndef NEREID_BACKENDS_COMMON_BYTES_H
#define NEREID_BACKENDS_COMMON_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BK_BYTES_HEADER 4 /* size of each element's length prefix */

/** Walks a serialized BYTES tensor; the buffer must outlive the reader. */
typedef struct {
  const uint8_t *p;
  size_t left;
} bk_bytes_reader_t;

typedef enum {
  BK_BYTES_END = 0,       /* no bytes left: every element was read */
  BK_BYTES_ELEMENT = 1,   /* *elem, *len describe the next element */
  BK_BYTES_TRUNCATED = -1 /* a length prefix or element runs past the end */
} bk_bytes_step_t;

void bk_bytes_reader_init(bk_bytes_reader_t *r, const void *buf, size_t size);

/** Steps to the next element. *elem points into the buffer and is not
 * NUL-terminated. */
bk_bytes_step_t bk_bytes_next(bk_bytes_reader_t *r, const char **elem, uint32_t *len);

/** Counts the elements of a whole buffer; false when it is malformed. */
bool bk_bytes_count(const void *buf, size_t size, uint64_t *count);

/** Writes one element (prefix + bytes) at dst, which has room for
 * BK_BYTES_HEADER + len bytes; returns the byte after it. */
uint8_t *bk_bytes_put(uint8_t *dst, const void *elem, uint32_t len);

#endif
