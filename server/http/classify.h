/* Triton's classification extension for the HTTP frontend: an output's
 * top-k entries per batch entry as BYTES strings "score:index", or
 * "score:index:label" where the output's labels name the class (Triton's
 * format). Pure functions: any thread. */
#ifndef NEREID_SERVER_HTTP_CLASSIFY_H
#define NEREID_SERVER_HTTP_CLASSIFY_H

#include <stdint.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** The classified tensor: BYTES in the backends' layout (4-byte lengths),
 *  `count` strings, shape [batch, k] (or [k] without batching). */
typedef struct {
  srv_buffer_t bytes;
  uint64_t count;
  int64_t shape[2];
  uint32_t dims_count;
} srv_classes_t;

/** The top `k` of output o (numeric) for each of `batch` entries (1 and
 *  batched false for a model that does not batch), highest first, ties by
 *  lower index. k is clamped to the entry's element count. In arena a. */
srv_status_t *srv_classify(const struct TRITONBACKEND_Output *o, bool batched, uint32_t k,
                           const srv_tensor_spec_t *spec, upb_Arena *a,
                           srv_classes_t *out);

#endif
