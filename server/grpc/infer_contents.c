/* Typed tensor contents to a data buffer (see infer_contents.h). */
#include "server/grpc/infer_contents.h"

#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/common/memory.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Narrows 32-bit contents into 8- or 16-bit elements. */
static void narrow(const void *src, size_t n, bool is_signed, size_t width, void *dst) {
  for (size_t i = 0; i < n; i++) {
    uint32_t v =
        is_signed ? (uint32_t)((const int32_t *)src)[i] : ((const uint32_t *)src)[i];
    if (width == 1)
      ((uint8_t *)dst)[i] = (uint8_t)v;
    else
      ((uint16_t *)dst)[i] = (uint16_t)v;
  }
}

static void bytes_serialize(const upb_StringView *v, size_t n, upb_Arena *arena,
                            srv_buffer_t *buf) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += 4 + v[i].size;
  unsigned char *p = srv_arena_alloc(arena, total);
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = (uint32_t)v[i].size;
    p[off] = (unsigned char)len;
    p[off + 1] = (unsigned char)(len >> 8);
    p[off + 2] = (unsigned char)(len >> 16);
    p[off + 3] = (unsigned char)(len >> 24);
    if (v[i].size > 0) memcpy(p + off + 4, v[i].data, v[i].size);
    off += 4 + v[i].size;
  }
  buf->base = p;
  buf->size = total;
}

/* The typed array that carries `type`, its element count and width. */
static const void *contents_array(const inference_InferTensorContents *c,
                                  TRITONSERVER_DataType type, size_t *n, size_t *width) {
  switch (type) {
    case TRITONSERVER_TYPE_BOOL:
      *width = 1;
      return inference_InferTensorContents_bool_contents(c, n);
    case TRITONSERVER_TYPE_INT8:
    case TRITONSERVER_TYPE_INT16:
    case TRITONSERVER_TYPE_INT32:
      *width = 4;
      return inference_InferTensorContents_int_contents(c, n);
    case TRITONSERVER_TYPE_INT64:
      *width = 8;
      return inference_InferTensorContents_int64_contents(c, n);
    case TRITONSERVER_TYPE_UINT8:
    case TRITONSERVER_TYPE_UINT16:
    case TRITONSERVER_TYPE_UINT32:
      *width = 4;
      return inference_InferTensorContents_uint_contents(c, n);
    case TRITONSERVER_TYPE_UINT64:
      *width = 8;
      return inference_InferTensorContents_uint64_contents(c, n);
    case TRITONSERVER_TYPE_FP32:
      *width = 4;
      return inference_InferTensorContents_fp32_contents(c, n);
    case TRITONSERVER_TYPE_FP64:
      *width = 8;
      return inference_InferTensorContents_fp64_contents(c, n);
    default:
      *n = 0;
      *width = 0;
      return NULL;
  }
}

/* The type each non-empty contents field says its elements have, as
 * Triton's gRPC frontend reads them (int_contents carry INT8, INT16 or
 * INT32, as the input is declared; uint_contents likewise). Triton's
 * texts: one field only, of the input's type. */
static srv_status_t *contents_fields_check(const char *model_name,
                                           const srv_tensor_spec_t *spec,
                                           const inference_InferTensorContents *c) {
  TRITONSERVER_DataType t = spec->datatype;
  bool narrow_int = t == TRITONSERVER_TYPE_INT8 || t == TRITONSERVER_TYPE_INT16;
  bool narrow_uint = t == TRITONSERVER_TYPE_UINT8 || t == TRITONSERVER_TYPE_UINT16;
  size_t n[8];
  inference_InferTensorContents_bool_contents(c, &n[0]);
  inference_InferTensorContents_int_contents(c, &n[1]);
  inference_InferTensorContents_int64_contents(c, &n[2]);
  inference_InferTensorContents_uint_contents(c, &n[3]);
  inference_InferTensorContents_uint64_contents(c, &n[4]);
  inference_InferTensorContents_fp32_contents(c, &n[5]);
  inference_InferTensorContents_fp64_contents(c, &n[6]);
  inference_InferTensorContents_bytes_contents(c, &n[7]);
  const TRITONSERVER_DataType field_type[8] = {
      TRITONSERVER_TYPE_BOOL,   narrow_int ? t : TRITONSERVER_TYPE_INT32,
      TRITONSERVER_TYPE_INT64,  narrow_uint ? t : TRITONSERVER_TYPE_UINT32,
      TRITONSERVER_TYPE_UINT64, TRITONSERVER_TYPE_FP32,
      TRITONSERVER_TYPE_FP64,   TRITONSERVER_TYPE_BYTES};
  bool seen = false;
  for (int i = 0; i < 8; i++) {
    if (n[i] == 0) continue;
    if (seen)
      return BAD("unexpected explicit tensor data for input tensor '%s' for model '%s', "
                 "binary data was already supplied.",
                 spec->name, model_name);
    if (field_type[i] != t)
      return BAD("unexpected explicit tensor data for input tensor '%s' for model '%s' "
                 "of type '%s', expected datatype '%s'",
                 spec->name, model_name, api_datatype_protocol_name(field_type[i]),
                 api_datatype_protocol_name(t));
    seen = true;
  }
  return NULL;
}

srv_status_t *srv_infer_contents_to_buffer(const char *model_name,
                                           const srv_tensor_spec_t *spec,
                                           const inference_InferTensorContents *contents,
                                           uint64_t count, upb_Arena *arena,
                                           srv_buffer_t *buf) {
  if (contents == NULL)
    return BAD(
        "input '%s' for model '%s' has no data: neither contents nor "
        "raw_input_contents",
        spec->name, model_name);
  srv_status_t *st = contents_fields_check(model_name, spec, contents);
  if (st != NULL) return st;
  size_t n, width;
  if (spec->datatype == TRITONSERVER_TYPE_BYTES) {
    const upb_StringView *v = inference_InferTensorContents_bytes_contents(contents, &n);
    if (n != count)
      return BAD(
          "input '%s' for model '%s': expected %llu elements in bytes_contents, got %zu",
          spec->name, model_name, (unsigned long long)count, n);
    bytes_serialize(v, n, arena, buf);
    return NULL;
  }
  const void *arr = contents_array(contents, spec->datatype, &n, &width);
  if (width == 0)
    return BAD(
        "input '%s' for model '%s': data type %d cannot be sent as typed contents; "
        "use raw_input_contents",
        spec->name, model_name, (int)spec->datatype);
  if (n != count)
    return BAD("input '%s' for model '%s': expected %llu elements in contents, got %zu",
               spec->name, model_name, (unsigned long long)count, n);
  size_t want = TRITONSERVER_DataTypeByteSize(spec->datatype);
  if (want == width || spec->datatype == TRITONSERVER_TYPE_BOOL) {
    buf->base = arr; /* same layout: no copy */
    buf->size = n * want;
    return NULL;
  }
  void *dst = srv_arena_alloc(arena, n * want);
  bool is_signed = spec->datatype == TRITONSERVER_TYPE_INT8 ||
                   spec->datatype == TRITONSERVER_TYPE_INT16;
  narrow(arr, n, is_signed, want, dst);
  buf->base = dst;
  buf->size = n * want;
  return NULL;
}
