/* Top-k classification strings (see classify.h). */
#include "server/http/classify.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/memory.h"
#include "server/http/json_tensor.h"

/* Element i of a numeric tensor, as a double. */
static double value_at(TRITONSERVER_DataType t, const unsigned char *base, uint64_t i) {
  srv_json_scalar_t v = srv_json_scalar_at(t, base, i);
  switch (t) {
    case TRITONSERVER_TYPE_INT8:
      return v.i8;
    case TRITONSERVER_TYPE_INT16:
      return v.i16;
    case TRITONSERVER_TYPE_INT32:
      return v.i32;
    case TRITONSERVER_TYPE_INT64:
      return (double)v.i64;
    case TRITONSERVER_TYPE_UINT8:
      return v.u8;
    case TRITONSERVER_TYPE_UINT16:
      return v.u16;
    case TRITONSERVER_TYPE_UINT32:
      return v.u32;
    case TRITONSERVER_TYPE_UINT64:
      return (double)v.u64;
    case TRITONSERVER_TYPE_FP32:
      return v.f;
    default:
      return v.d;
  }
}

static bool classifiable(TRITONSERVER_DataType t) {
  return t != TRITONSERVER_TYPE_BYTES && t != TRITONSERVER_TYPE_BOOL &&
         t != TRITONSERVER_TYPE_FP16 && t != TRITONSERVER_TYPE_BF16 &&
         api_datatype_byte_size(t) != 0;
}

/* Index of the best of `n` values at `base` not yet taken (ties: lower
 * index). k passes over the entry: k is small in practice (top 1..10) and
 * the cost is bounded by k x entry's size, which the backend made. */
static uint64_t best_untaken(TRITONSERVER_DataType t, const unsigned char *base,
                             uint64_t n, const unsigned char *taken) {
  uint64_t best = n;
  double bv = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (taken[i]) continue;
    double v = value_at(t, base, i);
    if (best == n || v > bv) {
      best = i;
      bv = v;
    }
  }
  return best;
}

/* Longest "score:index" string: %f below 1e15 (at most 24 characters), %g
 * above (Triton prints %f; past 1e15 the digits only say "huge"), a 64-bit
 * integer (20), a colon and a 64-bit index. */
#define CLASS_STR_MAX 64

/* "score:idx" for element idx, its score as Triton's std::to_string of
 * the element's own type prints it: integers as integers, FP32 and FP64
 * with %f. */
static int score_print(char *s, size_t n, TRITONSERVER_DataType t,
                       const unsigned char *base, uint64_t idx) {
  /* The element's bytes, zero-extended: an unsigned value as it is, a
   * signed one once its sign bit is extended. */
  uint64_t u = srv_json_scalar_at(t, base, idx).u64;
  uint64_t sign = 1ULL << (8 * api_datatype_byte_size(t) - 1);
  unsigned long long ix = (unsigned long long)idx;
  switch (t) {
    case TRITONSERVER_TYPE_INT8:
    case TRITONSERVER_TYPE_INT16:
    case TRITONSERVER_TYPE_INT32:
    case TRITONSERVER_TYPE_INT64:
      return snprintf(s, n, "%lld:%llu", (long long)((u ^ sign) - sign), ix);
    case TRITONSERVER_TYPE_UINT8:
    case TRITONSERVER_TYPE_UINT16:
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_UINT64:
      return snprintf(s, n, "%llu:%llu", (unsigned long long)u, ix);
    default: {
      double d = value_at(t, base, idx);
      return snprintf(s, n, fabs(d) < 1e15 ? "%f:%llu" : "%g:%llu", d, ix);
    }
  }
}

/* One "score:index" string for element idx of the entry at base, or
 * "score:index:label" when the output has a label for idx, appended at *at
 * (room checked by the caller). */
static void class_put(unsigned char *buf, uint64_t *at, TRITONSERVER_DataType t,
                      const unsigned char *base, uint64_t idx, const char *label) {
  char s[CLASS_STR_MAX];
  int len = score_print(s, sizeof s, t, base, idx);
  uint32_t l = len < 0 ? 0 : (uint32_t)len;
  size_t ll = label != NULL ? strlen(label) : 0;
  uint32_t total = l + (label != NULL ? 1 + (uint32_t)ll : 0);
  memcpy(buf + *at, &total, 4);
  memcpy(buf + *at + 4, s, l);
  if (label != NULL) {
    buf[*at + 4 + l] = ':';
    memcpy(buf + *at + 5 + l, label, ll);
  }
  *at += 4 + total;
}

srv_status_t *srv_classify(const struct TRITONBACKEND_Output *o, bool batched, uint32_t k,
                           const srv_tensor_spec_t *spec, upb_Arena *a,
                           srv_classes_t *out) {
  if (!classifiable(o->datatype))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "class result not available for output due to unsupported "
                          "type '%s'",
                          api_datatype_protocol_name(o->datatype));
  uint32_t w = api_datatype_byte_size(o->datatype);
  uint64_t total = o->byte_size / w;
  uint64_t batch = batched && o->dims_count > 0 ? (uint64_t)o->shape[0] : 1;
  if (batch == 0 || total % batch != 0 || o->byte_size % w != 0)
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "output tensor shape does not match size of output for '%s'",
                          o->name);
  uint64_t n = total / batch;
  uint64_t kk = k < n ? k : n;
  /* Room for the longest label with each string. */
  size_t longest = 0;
  for (uint32_t i = 0; spec != NULL && i < spec->label_count; i++) {
    size_t l = strlen(spec->labels[i]);
    if (l > longest) longest = l;
  }
  unsigned char *buf =
      srv_arena_alloc(a, batch * kk * (4 + CLASS_STR_MAX + (longest ? longest + 1 : 0)));
  unsigned char *taken = srv_arena_alloc(a, n ? n : 1);
  uint64_t at = 0;
  for (uint64_t b = 0; b < batch; b++) {
    const unsigned char *base = (const unsigned char *)o->buffer + b * n * w;
    memset(taken, 0, n ? n : 1);
    for (uint64_t j = 0; j < kk; j++) {
      uint64_t idx = best_untaken(o->datatype, base, n, taken);
      taken[idx] = 1;
      const char *label =
          spec != NULL && idx < spec->label_count ? spec->labels[idx] : NULL;
      class_put(buf, &at, o->datatype, base, idx, label);
    }
  }
  out->bytes.base = buf;
  out->bytes.size = at;
  out->count = batch * kk;
  out->dims_count = batched ? 2 : 1;
  out->shape[0] = batched ? (int64_t)batch : (int64_t)kk;
  out->shape[1] = (int64_t)kk;
  return NULL;
}
