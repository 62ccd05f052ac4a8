/* Tensor shape arithmetic and printing. Any thread; pure functions. */
#include "backends/common/shape.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool bk_shape_elements(const int64_t *shape, uint32_t dims_count, uint64_t *count) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < dims_count; i++) {
    if (shape[i] < 0) return false;
    uint64_t d = (uint64_t)shape[i];
    if (d != 0 && n > UINT64_MAX / d) return false;
    n *= d;
  }
  *count = n;
  return true;
}

bool bk_shape_matches(const int64_t *want, uint32_t want_count, const int64_t *shape,
                      uint32_t dims_count) {
  if (want_count != dims_count) return false;
  for (uint32_t i = 0; i < dims_count; i++) {
    if (shape[i] < 0) return false;
    if (want[i] != -1 && want[i] != shape[i]) return false;
  }
  return true;
}

bool bk_shape_equal(const int64_t *a, uint32_t a_count, const int64_t *b,
                    uint32_t b_count) {
  if (a_count != b_count) return false;
  for (uint32_t i = 0; i < a_count; i++) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

/* Appends `part`; false (buf unchanged) when it does not fit. */
static bool append(char *buf, size_t len, size_t *used, const char *part) {
  size_t n = strlen(part);
  if (*used + n + 1 > len) return false;
  memcpy(buf + *used, part, n + 1);
  *used += n;
  return true;
}

const char *bk_shape_format(const int64_t *shape, uint32_t dims_count, char *buf,
                            size_t len) {
  if (len == 0) return buf;
  size_t used = 0;
  buf[0] = '\0';
  bool fits = append(buf, len, &used, "[");
  for (uint32_t i = 0; fits && i < dims_count; i++) {
    char part[24];
    snprintf(part, sizeof part, "%s%" PRId64, i == 0 ? "" : ",", shape[i]);
    fits = append(buf, len, &used, part);
  }
  if (fits) fits = append(buf, len, &used, "]");
  if (!fits && len >= 4) memcpy(buf + (used + 4 <= len ? used : len - 4), "...", 4);
  return buf;
}
