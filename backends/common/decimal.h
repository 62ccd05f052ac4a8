/* Decimal integer text <-> int32, for BYTES elements that carry numbers
 * (simple_string). Any thread; pure functions. */
#ifndef NEREID_BACKENDS_COMMON_DECIMAL_H
#define NEREID_BACKENDS_COMMON_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest text bk_decimal_format writes: "-2147483648". */
#define BK_DECIMAL_INT32_MAX_LEN 11

/** Parses `len` bytes (not NUL-terminated) as a base-10 int32: optional
 * ASCII spaces/tabs around, an optional '+' or '-', then at least one digit.
 * False on anything else, including values outside int32. */
bool bk_decimal_parse_int32(const char *s, size_t len, int32_t *out);

/** Writes v in base 10 (no terminator) into buf, which has room for
 * BK_DECIMAL_INT32_MAX_LEN bytes; returns the length. */
size_t bk_decimal_format_int32(int32_t v, char *buf);

#endif
