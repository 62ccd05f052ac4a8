/* Decimal integer parsing and printing for numeric BYTES elements. Any
 * thread; pure functions, independent of the C locale. */
#include "backends/common/decimal.h"

static bool is_space(char c) { return c == ' ' || c == '\t'; }

bool bk_decimal_parse_int32(const char *s, size_t len, int32_t *out) {
  const char *p = s, *end = s + len;
  while (p < end && is_space(*p)) p++;
  while (end > p && is_space(end[-1])) end--;
  bool neg = false;
  if (p < end && (*p == '+' || *p == '-')) neg = (*p++ == '-');
  if (p == end) return false;
  /* Accumulate the magnitude in 64 bits; int32's extra negative value
   * (-2147483648) is allowed only with a sign. */
  const int64_t limit = neg ? (int64_t)INT32_MAX + 1 : INT32_MAX;
  int64_t v = 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
    if (v > limit) return false;
  }
  *out = (int32_t)(neg ? -v : v);
  return true;
}

size_t bk_decimal_format_int32(int32_t v, char *buf) {
  char tmp[BK_DECIMAL_INT32_MAX_LEN];
  size_t n = 0;
  /* Negate in 64 bits: -INT32_MIN does not fit int32. */
  int64_t m = v < 0 ? -(int64_t)v : v;
  do {
    tmp[n++] = (char)('0' + m % 10);
    m /= 10;
  } while (m != 0);
  size_t len = 0;
  if (v < 0) buf[len++] = '-';
  while (n > 0) buf[len++] = tmp[--n];
  return len;
}
