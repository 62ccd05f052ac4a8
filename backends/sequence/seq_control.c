/* Decoding of sequence control tensors (see seq_control.h). Any thread. */
#include "backends/sequence/seq_control.h"

#include <stdio.h>
#include <string.h>

#include "backends/common/bytes.h"
#include "backends/common/decimal.h"

/* Whether the element equals the flag's value i ([false, true]). Exact
 * comparison, also for FP32: the server copies the configured values, it
 * does not compute them. The caller checked the element's size. */
static bool flag_is(const seq_flag_t *flag, int i, const void *data) {
  switch (flag->datatype) {
    case TRITONSERVER_TYPE_INT32: {
      int32_t v;
      memcpy(&v, data, sizeof v);
      return v == flag->values[i].i32;
    }
    case TRITONSERVER_TYPE_FP32: {
      float v;
      memcpy(&v, data, sizeof v);
      return v == flag->values[i].f32;
    }
    default: /* BOOL: any non-zero byte is true, as numpy writes 0/1 */
      return (*(const uint8_t *)data != 0) == flag->values[i].b;
  }
}

bool seq_flag_decode(const seq_flag_t *flag, const void *data, uint64_t size, bool *out) {
  uint64_t want = flag->datatype == TRITONSERVER_TYPE_INT32  ? 4
                  : flag->datatype == TRITONSERVER_TYPE_FP32 ? 4
                  : flag->datatype == TRITONSERVER_TYPE_BOOL ? 1
                                                             : 0;
  if (want == 0 || size != want) return false;
  if (flag_is(flag, 1, data)) {
    *out = true;
    return true;
  }
  if (flag_is(flag, 0, data)) {
    *out = false;
    return true;
  }
  return false;
}

bool seq_corrid_type_ok(TRITONSERVER_DataType datatype) {
  switch (datatype) {
    case TRITONSERVER_TYPE_UINT64:
    case TRITONSERVER_TYPE_INT64:
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_INT32:
    case TRITONSERVER_TYPE_BYTES:
      return true;
    default:
      return false;
  }
}

/* A STRING ID: exactly one BYTES element holding a decimal int32. */
static bool decode_string(const void *data, uint64_t size, uint64_t *key, char *err,
                          size_t err_len) {
  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, data, size);
  const char *s = NULL;
  uint32_t len = 0;
  const char *end_elem = NULL;
  uint32_t end_len = 0;
  if (bk_bytes_next(&r, &s, &len) != BK_BYTES_ELEMENT ||
      bk_bytes_next(&r, &end_elem, &end_len) != BK_BYTES_END) {
    snprintf(err, err_len, "a STRING correlation ID must be exactly one element");
    return false;
  }
  int32_t v = 0;
  if (!bk_decimal_parse_int32(s, len, &v)) {
    snprintf(err, err_len,
             "correlation ID '%.*s' is not a decimal integer in int32 range, which "
             "this model needs",
             len > 64 ? 64 : (int)len, s);
    return false;
  }
  *key = (uint64_t)(int64_t)v;
  return true;
}

bool seq_corrid_decode(TRITONSERVER_DataType datatype, const void *data, uint64_t size,
                       uint64_t *key, char *err, size_t err_len) {
  if (datatype == TRITONSERVER_TYPE_BYTES)
    return decode_string(data, size, key, err, err_len);
  uint64_t want =
      (datatype == TRITONSERVER_TYPE_UINT32 || datatype == TRITONSERVER_TYPE_INT32) ? 4
                                                                                    : 8;
  if (!seq_corrid_type_ok(datatype) || size != want) {
    snprintf(err, err_len, "a correlation ID must be one element (%llu bytes given)",
             (unsigned long long)size);
    return false;
  }
  switch (datatype) {
    case TRITONSERVER_TYPE_UINT32: {
      uint32_t v;
      memcpy(&v, data, sizeof v);
      *key = v;
      break;
    }
    case TRITONSERVER_TYPE_INT32: {
      int32_t v;
      memcpy(&v, data, sizeof v);
      *key = (uint64_t)(int64_t)v;
      break;
    }
    default: /* UINT64, INT64: the same 64-bit pattern */
      memcpy(key, data, sizeof *key);
      break;
  }
  return true;
}
