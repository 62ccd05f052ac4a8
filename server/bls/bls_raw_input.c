/* A raw input (TRITONSERVER_InferenceRequestAddRawInput): bytes without a
 * type or shape, which take the model's only input's at
 * TRITONSERVER_ServerInferAsync, with Triton's checks and texts (see
 * bls.h). On the thread that sends the request. */
#include <string.h>

#include "server/bls/bls.h"
#include "server/common/memory.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static uint64_t data_size(const srv_buffer_t *b, uint32_t n) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += b[i].size;
  return total;
}

/* Triton's convention for one BYTES element: its 4-byte length first. The
 * length lives in the arena, the bytes stay the user's. */
static srv_status_t *bytes_prepend(const srv_bls_input_t *raw, upb_Arena *arena,
                                   srv_bls_input_t *out) {
  if (raw->policy_count > 0)
    return BAD("Raw input with data associated with a host policy setting is not "
               "currently supported");
  uint64_t total = data_size(raw->buffers, raw->buffer_count);
  if (total > UINT32_MAX)
    return BAD("raw input '%s' of %llu bytes is too long for one BYTES element",
               raw->name, (unsigned long long)total);
  uint32_t *len = srv_arena_alloc(arena, sizeof *len);
  *len = (uint32_t)total; /* little-endian, as the protocol's lengths */
  srv_buffer_t *b = srv_arena_alloc(arena, (raw->buffer_count + 1) * sizeof *b);
  b[0] = (srv_buffer_t){.base = len, .size = sizeof *len};
  if (raw->buffer_count > 0) memcpy(b + 1, raw->buffers, raw->buffer_count * sizeof *b);
  out->buffers = b;
  out->buffer_count = raw->buffer_count + 1;
  return NULL;
}

srv_status_t *srv_bls_raw_input(const srv_model_t *m, const TRITONSERVER_InferenceRequest *u,
                                upb_Arena *arena, srv_bls_input_t *out) {
  memset(out, 0, sizeof *out);
  const srv_bls_input_t *raw = NULL;
  for (uint32_t i = 0; i < u->input_count; i++)
    if (u->inputs[i].raw) raw = &u->inputs[i];
  if (raw == NULL) return NULL;
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  if (u->input_count != 1 || d.input_count != 1)
    return BAD("Raw request must only have 1 input (found %u) to be deduced but got %u "
               "inputs in '%s' model configuration",
               u->input_count, d.input_count, d.name);
  const srv_tensor_spec_t *spec = &d.inputs[0];
  int64_t *shape = srv_arena_alloc(arena, (spec->dims_count + 1) * sizeof *shape);
  uint32_t n = 0, variable = UINT32_MAX;
  uint64_t elements = 1;
  if (d.max_batch_size != 0) shape[n++] = 1;
  for (uint32_t i = 0; i < spec->dims_count; i++) {
    if (spec->dims[i] == -1) {
      if (variable != UINT32_MAX)
        return BAD("The shape of the raw input '%s' can not be deduced because there are "
                   "more than one variable-sized dimension",
                   spec->name);
      variable = n;
    } else {
      elements *= (uint64_t)spec->dims[i];
    }
    shape[n++] = spec->dims[i];
  }
  *out = *raw; /* buffers and host-policy data as the user gave them */
  out->name = (char *)spec->name;
  out->datatype = spec->datatype;
  out->shape = shape;
  out->dims_count = n;
  out->raw = false;
  if (spec->datatype == TRITONSERVER_TYPE_BYTES) {
    if (variable != UINT32_MAX || elements != 1)
      return BAD("For BYTE datatype raw input '%s', the model must have input shape [1]",
                 spec->name);
    return bytes_prepend(raw, arena, out);
  }
  if (variable != UINT32_MAX) {
    /* Triton divides by zero on a 0 dimension; such a shape holds nothing. */
    uint64_t per = elements * TRITONSERVER_DataTypeByteSize(spec->datatype);
    uint64_t count = per > 0 ? data_size(raw->buffers, raw->buffer_count) / per : 0;
    shape[variable] = count > INT64_MAX ? INT64_MAX : (int64_t)count;
  }
  return NULL;
}
