/* Decimal int32 parsing and printing for numeric BYTES elements. */
#include "backends/common/decimal.h"

#include <string.h>

#include "test/unit/unit.h"

static bool parses(const char *s, int32_t want) {
  int32_t v = 0;
  return bk_decimal_parse_int32(s, strlen(s), &v) && v == want;
}

static bool rejects(const char *s) {
  int32_t v = 12345;
  return !bk_decimal_parse_int32(s, strlen(s), &v) && v == 12345;
}

static void accepts_integers(void) {
  CHECK(parses("0", 0));
  CHECK(parses("42", 42));
  CHECK(parses("-42", -42));
  CHECK(parses("+7", 7));
  CHECK(parses(" 9\t", 9));
  CHECK(parses("007", 7));
  CHECK(parses("2147483647", INT32_MAX));
  CHECK(parses("-2147483648", INT32_MIN));
}

static void rejects_everything_else(void) {
  CHECK(rejects(""));
  CHECK(rejects(" "));
  CHECK(rejects("-"));
  CHECK(rejects("+"));
  CHECK(rejects("1.5"));
  CHECK(rejects("1e3"));
  CHECK(rejects("0x10"));
  CHECK(rejects("12a"));
  CHECK(rejects("1 2"));
  CHECK(rejects("--1"));
  CHECK(rejects("2147483648"));
  CHECK(rejects("-2147483649"));
  CHECK(rejects("99999999999999999999999"));
}

static void length_bounds_the_text(void) {
  int32_t v = 0;
  CHECK(bk_decimal_parse_int32("123456", 3, &v) && v == 123);
  CHECK(!bk_decimal_parse_int32("1\0002", 3, &v));
}

static void formats(void) {
  char buf[BK_DECIMAL_INT32_MAX_LEN];
  size_t n = bk_decimal_format_int32(0, buf);
  CHECK(n == 1 && memcmp(buf, "0", 1) == 0);
  n = bk_decimal_format_int32(-305, buf);
  CHECK(n == 4 && memcmp(buf, "-305", 4) == 0);
  n = bk_decimal_format_int32(INT32_MIN, buf);
  CHECK(n == 11 && memcmp(buf, "-2147483648", 11) == 0);
  n = bk_decimal_format_int32(INT32_MAX, buf);
  CHECK(n == 10 && memcmp(buf, "2147483647", 10) == 0);
}

UNIT_MAIN("decimal", UNIT_CASE(accepts_integers), UNIT_CASE(rejects_everything_else),
          UNIT_CASE(length_bounds_the_text), UNIT_CASE(formats))
