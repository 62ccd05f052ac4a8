/* Decoding of text-format literals: integers with overflow checks, floats
 * in the C locale, string escapes to bytes/UTF-8. Any thread. */
#define _GNU_SOURCE /* strtod_l */
#include "server/config/literal.h"

#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void cfg_lit_buf_free(cfg_lit_buf_t *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool cfg_lit_uint(const char *p, size_t len, uint64_t *out) {
  unsigned base = 10;
  size_t i = 0;
  if (len > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (len > 1 && p[0] == '0') {
    base = 8;
    i = 1;
  }
  uint64_t v = 0;
  for (; i < len; i++) {
    int d = hex_value(p[i]);
    if (d < 0 || (unsigned)d >= base) return false; /* the tokenizer prevents this */
    if (v > (UINT64_MAX - (uint64_t)d) / base) return false;
    v = v * base + (uint64_t)d;
  }
  *out = v;
  return true;
}

/* strtod follows LC_NUMERIC, which an embedding program may have changed;
 * config files always use '.', so parse in a C locale made once. */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

bool cfg_lit_double(const char *p, size_t len, double *out) {
  if (len > 0 && (p[len - 1] == 'f' || p[len - 1] == 'F')) len--;
  char stack[64];
  char *s = len < sizeof stack ? stack : malloc(len + 1);
  if (s == NULL) return false;
  memcpy(s, p, len);
  s[len] = '\0';
  pthread_once(&c_locale_once, c_locale_init);
  *out = c_locale != (locale_t)0 ? strtod_l(s, NULL, c_locale) : strtod(s, NULL);
  if (s != stack) free(s);
  return true;
}

static bool buf_reserve(cfg_lit_buf_t *b, size_t extra) {
  if (b->cap - b->len >= extra) return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap - b->len < extra) {
    if (cap > SIZE_MAX / 2) return false;
    cap *= 2;
  }
  char *data = realloc(b->data, cap);
  if (data == NULL) return false;
  b->data = data;
  b->cap = cap;
  return true;
}

static void put_utf8(cfg_lit_buf_t *b, uint32_t cp) {
  char *o = b->data + b->len;
  if (cp < 0x80) {
    o[0] = (char)cp;
    b->len += 1;
  } else if (cp < 0x800) {
    o[0] = (char)(0xC0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3F));
    b->len += 2;
  } else if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    b->len += 3;
  } else {
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    b->len += 4;
  }
}

/* Reads exactly n hex digits at p[i..] (bounded by end); -1 if missing. */
static int64_t hex_run(const char *p, size_t i, size_t end, size_t n) {
  if (end - i < n) return -1;
  int64_t v = 0;
  for (size_t k = 0; k < n; k++) {
    int d = hex_value(p[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static char simple_escape(char e) {
  switch (e) {
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    case '\\':
      return '\\';
    case '?':
      return '?';
    case '\'':
      return '\'';
    case '"':
      return '"';
    default:
      return 0;
  }
}

/* \u and \U escapes starting at p[i] == '\\'; returns the index after it,
 * or 0 with *what set. A high surrogate must be followed by \u + low. */
static size_t unicode_escape(cfg_lit_buf_t *b, const char *p, size_t i, size_t end,
                             const char **what) {
  bool big = p[i + 1] == 'U';
  int64_t cp = hex_run(p, i + 2, end, big ? 8 : 4);
  if (cp < 0) {
    *what = big ? "\\U must be followed by 8 hex digits"
                : "\\u must be followed by 4 hex digits";
    return 0;
  }
  size_t next = i + (big ? 10 : 6);
  if (!big && cp >= 0xD800 && cp <= 0xDBFF && end - next >= 6 && p[next] == '\\' &&
      p[next + 1] == 'u') {
    int64_t lo = hex_run(p, next + 2, end, 4);
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      next += 6;
    }
  }
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *what = "unicode escape is not a valid code point (lone surrogate or past U+10FFFF)";
    return 0;
  }
  put_utf8(b, (uint32_t)cp);
  return next;
}

/* One escape at p[i] == '\\' (the tokenizer guarantees a character follows
 * before the closing quote at p[end]); returns the index after it, or 0. */
static size_t escape(cfg_lit_buf_t *b, const char *p, size_t i, size_t end,
                     const char **what) {
  char e = p[i + 1];
  char simple = simple_escape(e);
  if (simple) {
    b->data[b->len++] = simple;
    return i + 2;
  }
  if (e >= '0' && e <= '7') {
    unsigned v = 0;
    size_t j = i + 1;
    while (j < end && j < i + 4 && p[j] >= '0' && p[j] <= '7')
      v = v * 8 + (unsigned)(p[j++] - '0');
    if (v > 0377) {
      *what = "octal escape is larger than \\377";
      return 0;
    }
    b->data[b->len++] = (char)v;
    return j;
  }
  if (e == 'x' || e == 'X') {
    size_t j = i + 2;
    int v = 0;
    while (j < end && j < i + 4 && hex_value(p[j]) >= 0) v = v * 16 + hex_value(p[j++]);
    if (j == i + 2) {
      *what = "\\x must be followed by hex digits";
      return 0;
    }
    b->data[b->len++] = (char)v;
    return j;
  }
  if (e == 'u' || e == 'U') return unicode_escape(b, p, i, end, what);
  *what = "invalid escape sequence";
  return 0;
}

bool cfg_lit_string_append(cfg_lit_buf_t *b, const char *p, size_t len, size_t *bad_off,
                           const char **what) {
  /* Decoding never grows: every escape is at least as long as its bytes. */
  if (!buf_reserve(b, len)) {
    *bad_off = 0;
    *what = "out of memory";
    return false;
  }
  size_t end = len - 1; /* index of the closing quote */
  for (size_t i = 1; i < end;) {
    if (p[i] != '\\') {
      b->data[b->len++] = p[i++];
      continue;
    }
    size_t next = escape(b, p, i, end, what);
    if (next == 0) {
      *bad_off = i;
      return false;
    }
    i = next;
  }
  return true;
}

bool cfg_lit_utf8_valid(const char *p, size_t len) {
  const unsigned char *s = (const unsigned char *)p, *end = s + len;
  while (s < end) {
    unsigned c = *s;
    size_t n;
    uint32_t cp, min;
    if (c < 0x80) {
      s++;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if ((size_t)(end - s) <= n) return false;
    for (size_t k = 1; k <= n; k++) {
      if ((s[k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    s += n + 1;
  }
  return true;
}
