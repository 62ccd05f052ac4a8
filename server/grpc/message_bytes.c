/* Received message bytes (see message_bytes.h). */
#include "server/grpc/message_bytes.h"

#include <grpc/slice_buffer.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/inflate.h"
#include "server/common/log.h"

#define LIMIT_FLAG "--grpc-max-receive-message-size"

/* The two paths beside one plain slice, out of line: inlined, their
 * buffers gave srv_message_bytes a large frame and a stack-protector
 * canary on every call (issue 21). */
#define RARE __attribute__((noinline))

/* Several slices (a large message as the transport read it): one copy, as
 * upb decodes contiguous bytes only. */
static RARE void flatten(const grpc_slice_buffer *in, grpc_slice *flat) {
  *flat = grpc_slice_malloc(in->length);
  uint8_t *at = GRPC_SLICE_START_PTR(*flat);
  for (size_t i = 0; i < in->count; i++) {
    size_t n = GRPC_SLICE_LENGTH(in->slices[i]);
    if (n > 0) memcpy(at, GRPC_SLICE_START_PTR(in->slices[i]), n);
    at += n;
  }
}

/* Inflated by the common inflater, from the slices as they are. */
static RARE srv_status_t *decompress(const grpc_slice_buffer *in, bool gzip,
                                     size_t max_len, const char *rpc, grpc_slice *flat) {
  srv_piece_t small[8], *pieces = small;
  if (in->count > sizeof small / sizeof small[0]) {
    pieces = malloc(in->count * sizeof *pieces);
    if (pieces == NULL) SRV_FATAL("out of memory");
  }
  for (size_t i = 0; i < in->count; i++)
    pieces[i] = (srv_piece_t){GRPC_SLICE_START_PTR(in->slices[i]),
                              GRPC_SLICE_LENGTH(in->slices[i])};
  char what[128], *out;
  size_t len;
  snprintf(what, sizeof what, "%s: the request message", rpc);
  srv_status_t *st =
      srv_inflate(pieces, in->count, gzip, max_len, what, LIMIT_FLAG, &out, &len);
  if (pieces != small) free(pieces);
  if (st == NULL) *flat = grpc_slice_new(out, len, free);
  return st;
}

srv_status_t *srv_message_bytes(grpc_byte_buffer *bb, size_t max_len, const char *rpc,
                                grpc_slice *flat, const char **data, size_t *len) {
  const grpc_slice_buffer *in = &bb->data.raw.slice_buffer;
  grpc_compression_algorithm algo = bb->data.raw.compression;
  if (algo == GRPC_COMPRESS_NONE && in->count == 1) {
    /* By address: a small slice keeps its bytes inline in the struct, so a
     * copy of it would hand out a pointer into our stack frame. */
    *data = (const char *)GRPC_SLICE_START_PTR(in->slices[0]);
    *len = GRPC_SLICE_LENGTH(in->slices[0]);
    return NULL;
  }
  if (algo == GRPC_COMPRESS_NONE) {
    flatten(in, flat);
  } else if (algo == GRPC_COMPRESS_GZIP || algo == GRPC_COMPRESS_DEFLATE) {
    srv_status_t *st = decompress(in, algo == GRPC_COMPRESS_GZIP, max_len, rpc, flat);
    if (st != NULL) return st;
  } else {
    return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                          "%s: the request message's compression (%d) is not supported",
                          rpc, (int)algo);
  }
  *data = (const char *)GRPC_SLICE_START_PTR(*flat);
  *len = GRPC_SLICE_LENGTH(*flat);
  return NULL;
}
