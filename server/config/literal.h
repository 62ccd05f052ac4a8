/* Decoding of text-format literals (integers, floats, quoted strings with C
 * escapes) into values. Pure functions; any thread. */
#ifndef NEREID_SERVER_CONFIG_LITERAL_H
#define NEREID_SERVER_CONFIG_LITERAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Growable byte buffer for decoded strings, reused across the literals of
 *  one parse (malloc'd; free with cfg_lit_buf_free). */
typedef struct {
  char *data;
  size_t len;
  size_t cap;
} cfg_lit_buf_t;

/** Frees the buffer's memory and empties it (it may be reused). */
void cfg_lit_buf_free(cfg_lit_buf_t *b);

/** Value of an integer token (decimal, 0x hex, or 0-led octal; no sign).
 *  False when it does not fit in 64 bits. */
bool cfg_lit_uint(const char *p, size_t len, uint64_t *out);

/** Value of a decimal number token (a decimal integer or float token, with
 *  an optional f/F suffix; never hex), in the C locale whatever the process locale is.
 *  Too large a magnitude gives infinity, as in protoc. False only on
 *  out-of-memory (tokens longer than a small stack buffer are copied). */
bool cfg_lit_double(const char *p, size_t len, double *out);

/** Appends the decoded bytes of a string token (quotes included) to `b`:
 *  \a \b \f \n \r \t \v \\ \? \' \", \NNN octal (at most \377), \xH or \xHH,
 *  \uHHHH (surrogate pairs combine) and \UHHHHHHHH as UTF-8. On a bad escape
 *  returns false with *bad_off = its offset in the token and *what = why. */
bool cfg_lit_string_append(cfg_lit_buf_t *b, const char *p, size_t len, size_t *bad_off,
                           const char **what);

/** True when p[0, len) is well-formed UTF-8 (no overlongs, surrogates or
 *  code points past U+10FFFF). */
bool cfg_lit_utf8_valid(const char *p, size_t len);

#endif
