/* A small JSON reader: recursive descent into a tree allocated from one
 * arena per document. Any thread; a document is never changed after parsing.
 * Strict RFC 8259 syntax; numbers keep an exact int64 when they have one. */
#include "backends/common/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bk_json {
  bk_json_type_t type;
  const char *key; /* member name when the value sits in an object */
  union {
    bool b;
    struct {
      const char *s;
      size_t len;
    } str;
    struct {
      double d;
      int64_t i;
      bool is_int;
    } num;
    struct {
      bk_json_t **items;
      size_t count;
    } kids;
  } u;
  bk_json_t *next; /* sibling link, used only while the container is parsed */
};

/* Arena blocks: everything of a document is freed at once, so values never
 * need their own free and parsing does a handful of mallocs, not one per
 * value. */
typedef struct block {
  struct block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} block_t;

#define BLOCK_MIN 4096

struct bk_json_doc {
  block_t *blocks;
  bk_json_t *root;
};

typedef struct {
  const char *start, *p, *end;
  bk_json_doc_t *doc;
  char *err;
  size_t err_len;
} parser_t;

static void *arena_alloc(bk_json_doc_t *doc, size_t size) {
  size = (size + 15) & ~(size_t)15;
  block_t *b = doc->blocks;
  if (b == NULL || b->cap - b->used < size) {
    size_t cap = size > BLOCK_MIN ? size : BLOCK_MIN;
    b = malloc(sizeof *b + cap);
    if (b == NULL) return NULL;
    b->next = doc->blocks;
    b->used = 0;
    b->cap = cap;
    doc->blocks = b;
  }
  void *mem = b->data + b->used;
  b->used += size;
  return mem;
}

/* Reports the first error only; the position becomes line and column so a
 * config author can find it. Always returns NULL for the caller to pass up. */
static void *fail(parser_t *ps, const char *at, const char *fmt, ...) {
  if (ps->err == NULL || ps->err_len == 0) return NULL;
  unsigned line = 1, col = 1;
  for (const char *c = ps->start; c < at && c < ps->end; c++) {
    if (*c == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  int n = snprintf(ps->err, ps->err_len, "line %u column %u: ", line, col);
  if (n >= 0 && (size_t)n < ps->err_len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->err_len - (size_t)n, fmt, ap);
    va_end(ap);
  }
  ps->err = NULL; /* keep the innermost (first) message */
  return NULL;
}

static void skip_ws(parser_t *ps) {
  while (ps->p < ps->end &&
         (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) {
    ps->p++;
  }
}

static bk_json_t *new_value(parser_t *ps, bk_json_type_t type) {
  bk_json_t *v = arena_alloc(ps->doc, sizeof *v);
  if (v == NULL) return fail(ps, ps->p, "out of memory");
  memset(v, 0, sizeof *v);
  v->type = type;
  return v;
}

static bk_json_t *parse_value(parser_t *ps, int depth);

/* ---- strings ------------------------------------------------------------ */

static int hex4(const char *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static char *put_utf8(char *o, uint32_t cp) {
  if (cp < 0x80) {
    *o++ = (char)cp;
  } else if (cp < 0x800) {
    *o++ = (char)(0xC0 | (cp >> 6));
    *o++ = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *o++ = (char)(0xE0 | (cp >> 12));
    *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *o++ = (char)(0x80 | (cp & 0x3F));
  } else {
    *o++ = (char)(0xF0 | (cp >> 18));
    *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
    *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *o++ = (char)(0x80 | (cp & 0x3F));
  }
  return o;
}

/* Decodes \uXXXX (and a following low surrogate) at *pp, which points at the
 * 'u'. Returns the code point or -1. */
static int32_t unicode_escape(parser_t *ps, const char **pp) {
  const char *p = *pp;
  if (ps->end - p < 5 || hex4(p + 1) < 0) return -1;
  int32_t cp = hex4(p + 1);
  p += 5;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return -1; /* lone low surrogate */
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (ps->end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
    int lo = hex4(p + 2);
    if (lo < 0xDC00 || lo > 0xDFFF) return -1;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    p += 6;
  }
  *pp = p - 1; /* the caller steps past the last consumed character */
  return cp;
}

static char escape_char(char c) {
  switch (c) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case '/':
      return '/';
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
    default:
      return 0;
  }
}

/* Parses the string at ps->p (a '"'). Decoding never grows the text, so the
 * raw length bounds the copy. */
static bool parse_string(parser_t *ps, const char **out, size_t *out_len) {
  const char *q = ps->p + 1;
  while (q < ps->end && *q != '"') q += (*q == '\\') ? 2 : 1;
  if (q >= ps->end) return fail(ps, ps->p, "unterminated string"), false;
  char *buf = arena_alloc(ps->doc, (size_t)(q - ps->p));
  if (buf == NULL) return fail(ps, ps->p, "out of memory"), false;
  char *o = buf;
  for (const char *p = ps->p + 1; p < q; p++) {
    unsigned char c = (unsigned char)*p;
    if (c < 0x20) return fail(ps, p, "control character in string"), false;
    if (c != '\\') {
      *o++ = (char)c;
      continue;
    }
    p++;
    if (*p == 'u') {
      int32_t cp = unicode_escape(ps, &p);
      if (cp < 0) return fail(ps, p - 1, "bad \\u escape"), false;
      o = put_utf8(o, (uint32_t)cp);
    } else if (escape_char(*p) != 0) {
      *o++ = escape_char(*p);
    } else {
      return fail(ps, p - 1, "bad escape '\\%c'", *p), false;
    }
  }
  *o = '\0';
  *out = buf;
  *out_len = (size_t)(o - buf);
  ps->p = q + 1;
  return true;
}

/* ---- numbers ------------------------------------------------------------ */

/* Exact int64 of an optional '-' and decimal digits; false on overflow or on
 * anything else in [s, e). */
static bool parse_int64(const char *s, const char *e, int64_t *out) {
  bool neg = s < e && *s == '-';
  if (neg) s++;
  if (s == e) return false;
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  uint64_t v = 0;
  for (; s < e; s++) {
    if (*s < '0' || *s > '9') return false;
    unsigned d = (unsigned)(*s - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

static const char *digits(const char *p, const char *end) {
  while (p < end && *p >= '0' && *p <= '9') p++;
  return p;
}

static bk_json_t *parse_number(parser_t *ps) {
  const char *s = ps->p, *p = s, *end = ps->end;
  if (p < end && *p == '-') p++;
  if (p >= end || *p < '0' || *p > '9') return fail(ps, s, "bad number");
  p = (*p == '0') ? p + 1 : digits(p, end);
  bool integral = true;
  if (p < end && *p == '.') {
    const char *f = digits(p + 1, end);
    if (f == p + 1) return fail(ps, p, "digits expected after '.'");
    p = f;
    integral = false;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    const char *x = p + 1;
    if (x < end && (*x == '+' || *x == '-')) x++;
    const char *f = digits(x, end);
    if (f == x) return fail(ps, p, "digits expected in exponent");
    p = f;
    integral = false;
  }
  bk_json_t *v = new_value(ps, BK_JSON_NUMBER);
  if (v == NULL) return NULL;
  v->u.num.is_int = integral && parse_int64(s, p, &v->u.num.i);
  if (v->u.num.is_int) {
    v->u.num.d = (double)v->u.num.i;
  } else {
    /* strtod needs a terminated copy; the grammar is already checked. It
     * follows LC_NUMERIC, which a C server leaves at "C". */
    size_t n = (size_t)(p - s);
    char small[64], *tmp = n < sizeof small ? small : arena_alloc(ps->doc, n + 1);
    if (tmp == NULL) return fail(ps, s, "out of memory");
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    v->u.num.d = strtod(tmp, NULL);
  }
  ps->p = p;
  return v;
}

/* ---- containers --------------------------------------------------------- */

/* Turns the sibling list into an array so bk_json_at is O(1). */
static bool collect(parser_t *ps, bk_json_t *c, bk_json_t *first, size_t count) {
  c->u.kids.count = count;
  if (count == 0) return true;
  c->u.kids.items = arena_alloc(ps->doc, count * sizeof(bk_json_t *));
  if (c->u.kids.items == NULL) return fail(ps, ps->p, "out of memory"), false;
  size_t i = 0;
  for (bk_json_t *k = first; k != NULL; k = k->next) c->u.kids.items[i++] = k;
  return true;
}

/* Shared loop of arrays and objects: elements separated by ',' up to
 * `close`; objects read a "key": before each value. */
static bk_json_t *parse_container(parser_t *ps, int depth, bool object) {
  const char close = object ? '}' : ']';
  if (depth >= BK_JSON_MAX_DEPTH) return fail(ps, ps->p, "nesting too deep");
  bk_json_t *c = new_value(ps, object ? BK_JSON_OBJECT : BK_JSON_ARRAY);
  if (c == NULL) return NULL;
  ps->p++;
  skip_ws(ps);
  bk_json_t *first = NULL, *last = NULL;
  size_t count = 0;
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    return c;
  }
  for (;;) {
    const char *key = NULL;
    size_t key_len;
    if (object) {
      if (ps->p >= ps->end || *ps->p != '"')
        return fail(ps, ps->p, "member name expected");
      if (!parse_string(ps, &key, &key_len)) return NULL;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') return fail(ps, ps->p, "':' expected");
      ps->p++;
    }
    bk_json_t *v = parse_value(ps, depth + 1);
    if (v == NULL) return NULL;
    v->key = key;
    if (last)
      last->next = v;
    else
      first = v;
    last = v;
    count++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      skip_ws(ps);
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) break;
    return fail(ps, ps->p, "',' or '%c' expected", close);
  }
  ps->p++;
  return collect(ps, c, first, count) ? c : NULL;
}

static bk_json_t *parse_literal(parser_t *ps, const char *word, bk_json_type_t t,
                                bool b) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) {
    return fail(ps, ps->p, "unexpected character");
  }
  bk_json_t *v = new_value(ps, t);
  if (v == NULL) return NULL;
  v->u.b = b;
  ps->p += n;
  return v;
}

static bk_json_t *parse_value(parser_t *ps, int depth) {
  skip_ws(ps);
  if (ps->p >= ps->end) return fail(ps, ps->p, "value expected");
  switch (*ps->p) {
    case '{':
      return parse_container(ps, depth, true);
    case '[':
      return parse_container(ps, depth, false);
    case 't':
      return parse_literal(ps, "true", BK_JSON_BOOL, true);
    case 'f':
      return parse_literal(ps, "false", BK_JSON_BOOL, false);
    case 'n':
      return parse_literal(ps, "null", BK_JSON_NULL, false);
    case '"': {
      bk_json_t *v = new_value(ps, BK_JSON_STRING);
      if (v == NULL || !parse_string(ps, &v->u.str.s, &v->u.str.len)) return NULL;
      return v;
    }
    default:
      if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) return parse_number(ps);
      return fail(ps, ps->p, "unexpected character");
  }
}

bk_json_doc_t *bk_json_parse(const char *text, size_t len, char *err, size_t err_len) {
  if (err != NULL && err_len > 0) err[0] = '\0';
  bk_json_doc_t *doc = calloc(1, sizeof *doc);
  if (doc == NULL) {
    if (err != NULL && err_len > 0) snprintf(err, err_len, "out of memory");
    return NULL;
  }
  parser_t ps = {text, text, text + len, doc, err, err_len};
  doc->root = (text == NULL) ? fail(&ps, text, "no text") : parse_value(&ps, 0);
  if (doc->root != NULL) {
    skip_ws(&ps);
    if (ps.p != ps.end) doc->root = fail(&ps, ps.p, "unexpected text after the value");
  }
  if (doc->root == NULL) {
    bk_json_doc_free(doc);
    return NULL;
  }
  return doc;
}

void bk_json_doc_free(bk_json_doc_t *doc) {
  if (doc == NULL) return;
  for (block_t *b = doc->blocks, *next; b != NULL; b = next) {
    next = b->next;
    free(b);
  }
  free(doc);
}

/* ---- accessors ---------------------------------------------------------- */

const bk_json_t *bk_json_root(const bk_json_doc_t *doc) { return doc ? doc->root : NULL; }

bk_json_type_t bk_json_type(const bk_json_t *v) { return v ? v->type : BK_JSON_ABSENT; }

const bk_json_t *bk_json_get(const bk_json_t *v, const char *key) {
  if (bk_json_type(v) != BK_JSON_OBJECT || key == NULL) return NULL;
  for (size_t i = 0; i < v->u.kids.count; i++) {
    if (strcmp(v->u.kids.items[i]->key, key) == 0) return v->u.kids.items[i];
  }
  return NULL;
}

size_t bk_json_count(const bk_json_t *v) {
  bk_json_type_t t = bk_json_type(v);
  return (t == BK_JSON_ARRAY || t == BK_JSON_OBJECT) ? v->u.kids.count : 0;
}

const bk_json_t *bk_json_at(const bk_json_t *v, size_t i) {
  return i < bk_json_count(v) ? v->u.kids.items[i] : NULL;
}

const char *bk_json_key_at(const bk_json_t *v, size_t i) {
  if (bk_json_type(v) != BK_JSON_OBJECT || i >= v->u.kids.count) return NULL;
  return v->u.kids.items[i]->key;
}

const char *bk_json_str(const bk_json_t *v, size_t *len) {
  if (bk_json_type(v) != BK_JSON_STRING) return NULL;
  if (len != NULL) *len = v->u.str.len;
  return v->u.str.s;
}

bool bk_json_bool(const bk_json_t *v, bool *out) {
  if (bk_json_type(v) != BK_JSON_BOOL) return false;
  *out = v->u.b;
  return true;
}

bool bk_json_int(const bk_json_t *v, int64_t *out) {
  if (bk_json_type(v) == BK_JSON_NUMBER && v->u.num.is_int) {
    *out = v->u.num.i;
    return true;
  }
  if (bk_json_type(v) == BK_JSON_STRING) {
    return parse_int64(v->u.str.s, v->u.str.s + v->u.str.len, out);
  }
  return false;
}

bool bk_json_num(const bk_json_t *v, double *out) {
  if (bk_json_type(v) != BK_JSON_NUMBER) return false;
  *out = v->u.num.d;
  return true;
}
