/* Tensor data as JSON arrays (see json_tensor.h). */
#include "server/http/json_tensor.h"

#include <math.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/common/memory.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define INTERNAL(...) srv_status_new(GRPC_STATUS_INTERNAL, __VA_ARGS__)

uint64_t srv_json_tensor_count(const int64_t *shape, uint32_t dims_count) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < dims_count; i++) n *= (uint64_t)shape[i];
  return n;
}

/* Arrays nested exactly as shape[level..]: each level an array of that
 * dimension's size, scalars at the last. */
static bool nested_fits(const json_t *v, const int64_t *shape, uint32_t dims,
                        uint32_t level) {
  if (!json_is_array(v) || json_array_size(v) != (uint64_t)shape[level]) return false;
  bool last = level + 1 == dims;
  for (size_t i = 0; i < json_array_size(v); i++) {
    const json_t *e = json_array_get(v, i);
    if (last ? json_is_array(e) : !nested_fits(e, shape, dims, level + 1)) return false;
  }
  return true;
}

bool srv_json_tensor_fits(const json_t *data, const int64_t *shape, uint32_t dims_count,
                          uint64_t count) {
  if (!json_is_array(data)) return false;
  size_t n = json_array_size(data);
  bool flat = true;
  for (size_t i = 0; i < n && flat; i++) flat = !json_is_array(json_array_get(data, i));
  if (flat) return n == count;
  return dims_count > 0 && nested_fits(data, shape, dims_count, 0);
}

/* Where the leaves go, and how many were written. */
typedef struct {
  TRITONSERVER_DataType type;
  const char *name;
  unsigned char *base;
  uint64_t at; /* elements, or bytes for BYTES */
  uint64_t index;
} sink_t;

static srv_status_t *wrong(const sink_t *s, const char *what) {
  return BAD("Unable to parse 'data': element %llu of input '%s' is not %s",
             (unsigned long long)s->index, s->name, what);
}

static srv_status_t *int_leaf(sink_t *s, const json_t *e, int64_t lo, int64_t hi,
                              size_t width, const char *what) {
  if (!json_is_integer(e)) return wrong(s, what);
  json_int_t v = json_integer_value(e);
  if (v < lo || v > hi) return wrong(s, what);
  uint64_t u = (uint64_t)v; /* two's complement: the low bytes are the value */
  memcpy(s->base + s->at * width, &u, width); /* little-endian hosts only */
  s->at++;
  return NULL;
}

static srv_status_t *leaf(sink_t *s, const json_t *e) {
  switch (s->type) {
    case TRITONSERVER_TYPE_BOOL:
      if (!json_is_boolean(e)) return wrong(s, "a boolean");
      s->base[s->at++] = json_is_true(e) ? 1 : 0;
      return NULL;
    case TRITONSERVER_TYPE_INT8:
      return int_leaf(s, e, INT8_MIN, INT8_MAX, 1, "an INT8 integer");
    case TRITONSERVER_TYPE_INT16:
      return int_leaf(s, e, INT16_MIN, INT16_MAX, 2, "an INT16 integer");
    case TRITONSERVER_TYPE_INT32:
      return int_leaf(s, e, INT32_MIN, INT32_MAX, 4, "an INT32 integer");
    case TRITONSERVER_TYPE_INT64:
      return int_leaf(s, e, INT64_MIN, INT64_MAX, 8, "an INT64 integer");
    case TRITONSERVER_TYPE_UINT8:
      return int_leaf(s, e, 0, UINT8_MAX, 1, "a UINT8 integer");
    case TRITONSERVER_TYPE_UINT16:
      return int_leaf(s, e, 0, UINT16_MAX, 2, "a UINT16 integer");
    case TRITONSERVER_TYPE_UINT32:
      return int_leaf(s, e, 0, UINT32_MAX, 4, "a UINT32 integer");
    case TRITONSERVER_TYPE_UINT64: /* jansson reads integers as int64 */
      return int_leaf(s, e, 0, INT64_MAX, 8, "a UINT64 integer within INT64's range");
    case TRITONSERVER_TYPE_FP32: {
      if (!json_is_number(e)) return wrong(s, "a number");
      float f = (float)json_number_value(e);
      memcpy(s->base + s->at++ * 4, &f, 4);
      return NULL;
    }
    case TRITONSERVER_TYPE_FP64: {
      if (!json_is_number(e)) return wrong(s, "a number");
      double d = json_number_value(e);
      memcpy(s->base + s->at++ * 8, &d, 8);
      return NULL;
    }
    case TRITONSERVER_TYPE_BYTES: {
      if (!json_is_string(e)) return wrong(s, "a string");
      size_t len = json_string_length(e);
      if (len > UINT32_MAX) return wrong(s, "a string below 4 GiB");
      uint32_t len32 = (uint32_t)len;
      memcpy(s->base + s->at, &len32, 4);
      if (len > 0) memcpy(s->base + s->at + 4, json_string_value(e), len);
      s->at += 4 + len;
      return NULL;
    }
    default:
      return BAD("invalid datatype for input %s", s->name);
  }
}

static srv_status_t *walk(sink_t *s, const json_t *v) {
  for (size_t i = 0; i < json_array_size(v); i++) {
    const json_t *e = json_array_get(v, i);
    srv_status_t *st = json_is_array(e) ? walk(s, e) : leaf(s, e);
    if (st != NULL) return st;
    if (!json_is_array(e)) s->index++;
  }
  return NULL;
}

/* Serialized size of the strings among the leaves (each 4 + its length). */
static uint64_t strings_size(const json_t *v) {
  uint64_t n = 0;
  for (size_t i = 0; i < json_array_size(v); i++) {
    const json_t *e = json_array_get(v, i);
    if (json_is_array(e))
      n += strings_size(e);
    else if (json_is_string(e))
      n += 4 + json_string_length(e);
  }
  return n;
}

srv_status_t *srv_json_tensor_read(const json_t *data, TRITONSERVER_DataType type,
                                   uint64_t count, const char *name, upb_Arena *arena,
                                   srv_buffer_t *out) {
  if (type == TRITONSERVER_TYPE_FP16 || type == TRITONSERVER_TYPE_BF16)
    return BAD(
        "receiving %s data via JSON is not supported. Please use the binary data "
        "format for input %s",
        type == TRITONSERVER_TYPE_FP16 ? "FP16" : "BF16", name);
  uint64_t size = type == TRITONSERVER_TYPE_BYTES ? strings_size(data)
                                                  : count * api_datatype_byte_size(type);
  if (type == TRITONSERVER_TYPE_INVALID ||
      (size == 0 && count > 0 && type != TRITONSERVER_TYPE_BYTES))
    return BAD("invalid datatype for input %s", name);
  /* count came from JSON values already counted (srv_json_tensor_fits),
   * so size is bounded by the body: at most 8 bytes per value. */
  sink_t s = {.type = type, .name = name, .base = srv_arena_alloc(arena, size)};
  srv_status_t *st = walk(&s, data);
  if (st != NULL) return st;
  out->base = s.base;
  out->size = size;
  return NULL;
}

static srv_status_t *size_wrong(const char *name) {
  return INTERNAL("output tensor shape does not match size of output for '%s'", name);
}

static srv_status_t *no_json_form(const char *name, uint64_t i) {
  return INTERNAL(
      "output '%s': element %llu has no JSON form (NaN, infinity, or UINT64 above "
      "2^63-1); request it with binary_data",
      name, (unsigned long long)i);
}

srv_json_scalar_t srv_json_scalar_at(TRITONSERVER_DataType type, const void *base,
                                     uint64_t i) {
  srv_json_scalar_t v = {0};
  uint32_t w = api_datatype_byte_size(type);
  if (w <= sizeof v) memcpy(&v, (const unsigned char *)base + i * w, w);
  return v;
}

void srv_json_input_set(struct TRITONBACKEND_Input *out, const srv_tensor_spec_t *spec,
                        TRITONSERVER_DataType type, const int64_t *shape, uint32_t dims,
                        const srv_buffer_t *buf) {
  out->name = spec->name;
  out->datatype = type;
  out->shape = shape;
  out->dims_count = dims;
  out->buffers = buf;
  out->buffer_count = 1;
}

/* One element at p as a JSON value; NULL when it has none. */
static json_t *element_json(TRITONSERVER_DataType type, const unsigned char *p) {
  srv_json_scalar_t v = srv_json_scalar_at(type, p, 0);
  switch (type) {
    case TRITONSERVER_TYPE_BOOL:
      return json_boolean(v.u8 != 0);
    case TRITONSERVER_TYPE_INT8:
      return json_integer(v.i8);
    case TRITONSERVER_TYPE_INT16:
      return json_integer(v.i16);
    case TRITONSERVER_TYPE_INT32:
      return json_integer(v.i32);
    case TRITONSERVER_TYPE_INT64:
      return json_integer(v.i64);
    case TRITONSERVER_TYPE_UINT8:
      return json_integer(v.u8);
    case TRITONSERVER_TYPE_UINT16:
      return json_integer(v.u16);
    case TRITONSERVER_TYPE_UINT32:
      return json_integer(v.u32);
    case TRITONSERVER_TYPE_UINT64:
      return v.u64 > INT64_MAX ? NULL : json_integer((json_int_t)v.u64);
    case TRITONSERVER_TYPE_FP32:
      return isfinite(v.f) ? json_real(v.f) : NULL;
    case TRITONSERVER_TYPE_FP64:
      return isfinite(v.d) ? json_real(v.d) : NULL;
    default:
      return NULL;
  }
}

static srv_status_t *bytes_write(const char *name, const unsigned char *p, uint64_t size,
                                 uint64_t count, json_t *array) {
  uint64_t off = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t len;
    if (size - off < 4) return size_wrong(name);
    memcpy(&len, p + off, 4);
    off += 4;
    if (size - off < len) return size_wrong(name);
    json_t *s = json_stringn((const char *)p + off, len);
    if (s == NULL) /* jansson writes UTF-8 only */
      return INTERNAL(
          "output '%s': element %llu is not UTF-8 text; request it with binary_data",
          name, (unsigned long long)i);
    json_array_append_new(array, s);
    off += len;
  }
  return NULL;
}

srv_status_t *srv_json_tensor_write(const char *name, TRITONSERVER_DataType type,
                                    const void *base, uint64_t byte_size, uint64_t count,
                                    json_t *array) {
  const unsigned char *p = base;
  if (type == TRITONSERVER_TYPE_FP16 || type == TRITONSERVER_TYPE_BF16)
    return BAD(
        "sending %s data via JSON is not supported. Please use the binary data "
        "format for output",
        type == TRITONSERVER_TYPE_FP16 ? "FP16" : "BF16");
  if (type == TRITONSERVER_TYPE_BYTES)
    return bytes_write(name, p, byte_size, count, array);
  uint32_t width = api_datatype_byte_size(type);
  if (width == 0) return BAD("Invalid data type for output tensor");
  if (byte_size / width != count || byte_size % width != 0) return size_wrong(name);
  for (uint64_t i = 0; i < count; i++) {
    json_t *e = element_json(type, p + i * width);
    if (e == NULL) return no_json_form(name, i);
    json_array_append_new(array, e);
  }
  return NULL;
}
