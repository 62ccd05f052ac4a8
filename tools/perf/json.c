/* Recursive-descent JSON reader (see json.h); depth is bounded so a hostile
 * file cannot exhaust the stack. */
#include "tools/perf/json.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
  const char *s, *end, *start;
  perf_err_t *err;
} reader_t;

static bool fail_at(reader_t *r, const char *what) {
  size_t line = 1, col = 1;
  for (const char *p = r->start; p < r->s; p++) {
    if (*p == '\n')
      line++, col = 1;
    else
      col++;
  }
  return perf_fail(r->err, "line %zu, column %zu: %s", line, col, what);
}

static void skip_ws(reader_t *r) {
  while (r->s < r->end &&
         (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r'))
    r->s++;
}

static bool literal(reader_t *r, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n) != 0) return false;
  r->s += n;
  return true;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800)
    return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 63));
    o[2] = (char)(0x80 | (cp & 63));
    return 3;
  }
  o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 63));
  o[2] = (char)(0x80 | ((cp >> 6) & 63)), o[3] = (char)(0x80 | (cp & 63));
  return 4;
}

static bool read_u4(reader_t *r, unsigned *cp) {
  if (r->end - r->s < 4) return false;
  *cp = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(r->s[i]);
    if (d < 0) return false;
    *cp = *cp << 4 | (unsigned)d;
  }
  r->s += 4;
  return true;
}

static bool escape(reader_t *r, char *o, size_t *n) {
  char c = *r->s++;
  const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
  const char *hit = c ? strchr(from, c) : NULL;
  if (hit) return o[(*n)++] = to[hit - from], true;
  unsigned cp;
  if (c != 'u' || !read_u4(r, &cp)) return fail_at(r, "bad escape in a string");
  if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
    unsigned lo;
    if (r->end - r->s < 6 || r->s[0] != '\\' || r->s[1] != 'u')
      return fail_at(r, "lone surrogate");
    r->s += 2;
    if (!read_u4(r, &lo) || lo < 0xdc00 || lo > 0xdfff)
      return fail_at(r, "bad surrogate");
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  }
  *n += put_utf8(o + *n, cp);
  return true;
}

/* At the opening quote; the result is NUL-terminated. */
static bool string(reader_t *r, char **out, size_t *out_len) {
  r->s++;
  const char *close = r->s;
  while (close < r->end && *close != '"') close += *close == '\\' ? 2 : 1;
  if (close >= r->end) return fail_at(r, "unterminated string");
  char *buf = perf_malloc((size_t)(close - r->s) + 1); /* escapes only shrink */
  size_t n = 0;
  while (*r->s != '"') {
    if (*r->s != '\\') {
      buf[n++] = *r->s++;
    } else {
      r->s++;
      if (!escape(r, buf, &n)) return free(buf), false;
    }
  }
  r->s++;
  buf[n] = '\0';
  *out = buf;
  *out_len = n;
  return true;
}

static bool number(reader_t *r, perf_json_t *j) {
  const char *p = r->s;
  if (p < r->end && *p == '-') p++;
  const char *digits = p;
  while (p < r->end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' ||
                        *p == '+' || *p == '-'))
    p++;
  if (p == digits) return fail_at(r, "unexpected character");
  j->type = PERF_JSON_NUMBER;
  j->num = r->s;
  j->num_len = (size_t)(p - r->s);
  r->s = p;
  return true;
}

static bool value(reader_t *r, perf_json_t *j, int depth);

/* Arrays and objects: children are appended to j->items (and j->keys). */
static bool container(reader_t *r, perf_json_t *j, int depth) {
  bool obj = *r->s == '{';
  char close = obj ? '}' : ']';
  j->type = obj ? PERF_JSON_OBJECT : PERF_JSON_ARRAY;
  r->s++;
  skip_ws(r);
  if (r->s < r->end && *r->s == close) return r->s++, true;
  size_t cap = 0;
  for (;;) {
    if (j->n == cap) {
      cap = cap ? cap * 2 : 8;
      j->items = perf_realloc(j->items, cap * sizeof *j->items);
      if (obj) j->keys = perf_realloc(j->keys, cap * sizeof *j->keys);
    }
    perf_json_t *child = &j->items[j->n];
    memset(child, 0, sizeof *child);
    skip_ws(r);
    if (obj) {
      size_t klen;
      if (r->s >= r->end || *r->s != '"') return fail_at(r, "expected a key");
      if (!string(r, &j->keys[j->n], &klen)) return false;
      skip_ws(r);
      if (r->s >= r->end || *r->s != ':')
        return free(j->keys[j->n]), fail_at(r, "expected ':'");
      r->s++;
    }
    j->n++; /* counted now, so that perf_json_free sees a half-read child */
    if (!value(r, child, depth + 1)) return false;
    skip_ws(r);
    if (r->s < r->end && *r->s == ',') {
      r->s++;
      continue;
    }
    if (r->s < r->end && *r->s == close) return r->s++, true;
    return fail_at(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static bool value(reader_t *r, perf_json_t *j, int depth) {
  if (depth > MAX_DEPTH) return fail_at(r, "nested too deeply");
  skip_ws(r);
  if (r->s >= r->end) return fail_at(r, "unexpected end");
  switch (*r->s) {
    case '{':
    case '[':
      return container(r, j, depth);
    case '"':
      j->type = PERF_JSON_STRING;
      return string(r, &j->str, &j->str_len);
    case 't':
    case 'f':
      j->type = PERF_JSON_BOOL;
      j->boolean = *r->s == 't';
      return literal(r, j->boolean ? "true" : "false") || fail_at(r, "bad literal");
    case 'n':
      j->type = PERF_JSON_NULL;
      return literal(r, "null") || fail_at(r, "bad literal");
    default:
      return number(r, j);
  }
}

bool perf_json_parse(const char *text, size_t len, perf_json_t *out, perf_err_t *err) {
  reader_t r = {.s = text, .end = text + len, .start = text, .err = err};
  memset(out, 0, sizeof *out);
  if (!value(&r, out, 0)) {
    perf_json_free(out);
    return false;
  }
  skip_ws(&r);
  if (r.s != r.end) {
    perf_json_free(out);
    return fail_at(&r, "text after the document");
  }
  return true;
}

void perf_json_free(perf_json_t *j) {
  for (size_t i = 0; i < j->n; i++) {
    perf_json_free(&j->items[i]);
    if (j->keys) free(j->keys[i]);
  }
  free(j->items);
  free(j->keys);
  free(j->str);
  memset(j, 0, sizeof *j);
}

const perf_json_t *perf_json_get(const perf_json_t *obj, const char *key) {
  if (obj->type != PERF_JSON_OBJECT) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}
