/* Tokenizer of protobuf text format, following protoc's tokenizer rules for
 * numbers, strings and comments. One parse, one thread. */
#include "server/config/lex.h"

static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Columns count bytes; a line past 4 GiB (never a real config) saturates
 * instead of wrapping, so positions stay monotonic. */
static uint32_t col_of(const cfg_lex_t *lx, const char *at) {
  size_t col = (size_t)(at - lx->line_start) + 1;
  return col > UINT32_MAX ? UINT32_MAX : (uint32_t)col;
}

static void set_error(cfg_lex_t *lx, const char *at, const char *what) {
  lx->tok.kind = CFG_TOK_ERROR;
  lx->tok.col = col_of(lx, at);
  lx->tok.what = what;
  lx->tok.len = 0;
}

/* Whitespace and '#' comments (to end of line) separate tokens. */
static void skip_space(cfg_lex_t *lx) {
  while (lx->cur < lx->end) {
    char c = *lx->cur;
    if (c == '\n') {
      lx->cur++;
      if (lx->line < UINT32_MAX) lx->line++;
      lx->line_start = lx->cur;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      lx->cur++;
    } else if (c == '#') {
      while (lx->cur < lx->end && *lx->cur != '\n') lx->cur++;
    } else {
      return;
    }
  }
}

static const char *skip_digits(const char *s, const char *end) {
  while (s < end && is_digit(*s)) s++;
  return s;
}

/* Decimal part of a number: digits, optional '.' digits, optional exponent,
 * optional f/F suffix (protoc accepts "1.5f"). Sets *is_float. NULL when the
 * exponent has no digits. */
static const char *scan_decimal(const char *s, const char *end, bool *is_float) {
  if (*s == '.') {
    *is_float = true;
    s = skip_digits(s + 1, end);
  } else {
    s = skip_digits(s, end);
    if (s < end && *s == '.') {
      *is_float = true;
      s = skip_digits(s + 1, end);
    }
  }
  if (s < end && (*s == 'e' || *s == 'E')) {
    *is_float = true;
    s++;
    if (s < end && (*s == '+' || *s == '-')) s++;
    if (s == end || !is_digit(*s)) return NULL;
    s = skip_digits(s, end);
  }
  if (s < end && (*s == 'f' || *s == 'F')) {
    *is_float = true;
    s++;
  }
  return s;
}

static void lex_number(cfg_lex_t *lx) {
  const char *s = lx->cur, *end = lx->end;
  bool is_float = false;
  if (*s == '0' && s + 1 < end && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    if (s == end || !is_hex(*s))
      return set_error(lx, s, "'0x' must be followed by hex digits");
    while (s < end && is_hex(*s)) s++;
  } else if (*s == '0' && s + 1 < end && is_digit(s[1])) {
    s++;
    while (s < end && *s >= '0' && *s <= '7') s++;
    if (s < end && is_digit(*s))
      return set_error(lx, s,
                       "numbers starting with 0 are octal; 8 and 9 are not octal digits");
  } else {
    const char *after = scan_decimal(s, end, &is_float);
    if (after == NULL)
      return set_error(lx, lx->cur, "exponent 'e' must be followed by digits");
    s = after;
  }
  if (s < end && (is_alpha(*s) || is_digit(*s)))
    return set_error(lx, s, "need space between number and identifier");
  if (s < end && *s == '.')
    return set_error(lx, s,
                     is_float ? "unexpected second '.' or '.' after exponent"
                              : "hex and octal numbers must be integers");
  lx->tok.kind = is_float ? CFG_TOK_FLOAT : CFG_TOK_INT;
  lx->tok.len = (size_t)(s - lx->cur);
  lx->cur = s;
}

/* Finds the closing quote; escapes are only skipped here and decoded (and
 * checked) by the literal decoder, which knows the field type. A string
 * may not span lines, as in protoc. */
static void lex_string(cfg_lex_t *lx) {
  const char *s = lx->cur + 1, *end = lx->end;
  char quote = *lx->cur;
  for (;;) {
    if (s == end || *s == '\n')
      return set_error(lx, lx->cur,
                       "string literal is not closed before the end of the line");
    if (*s == quote) break;
    if (*s == '\\') s++; /* the escaped character may be the quote */
    if (s < end && *s != '\n') s++;
  }
  s++;
  lx->tok.kind = CFG_TOK_STRING;
  lx->tok.len = (size_t)(s - lx->cur);
  lx->cur = s;
}

void cfg_lex_next(cfg_lex_t *lx) {
  if (lx->tok.kind == CFG_TOK_END || lx->tok.kind == CFG_TOK_ERROR) return;
  skip_space(lx);
  lx->tok.p = lx->cur;
  lx->tok.line = lx->line;
  lx->tok.col = col_of(lx, lx->cur);
  lx->tok.what = NULL;
  lx->tok.len = 0;
  if (lx->cur == lx->end) {
    lx->tok.kind = CFG_TOK_END;
    return;
  }
  char c = *lx->cur;
  if (is_alpha(c)) {
    const char *s = lx->cur + 1;
    while (s < lx->end && (is_alpha(*s) || is_digit(*s))) s++;
    lx->tok.kind = CFG_TOK_IDENT;
    lx->tok.len = (size_t)(s - lx->cur);
    lx->cur = s;
  } else if (is_digit(c) || (c == '.' && lx->cur + 1 < lx->end && is_digit(lx->cur[1]))) {
    lex_number(lx);
  } else if (c == '"' || c == '\'') {
    lex_string(lx);
  } else if ((unsigned char)c >= 0x80) {
    set_error(lx, lx->cur, "non-ASCII character outside a string literal");
  } else if ((unsigned char)c < 0x20 || c == 0x7f) {
    set_error(lx, lx->cur, "control character in text");
  } else {
    lx->tok.kind = CFG_TOK_SYMBOL;
    lx->tok.len = 1;
    lx->cur++;
  }
}

void cfg_lex_init(cfg_lex_t *lx, const char *text, size_t len) {
  lx->cur = text;
  lx->end = text + len;
  lx->line_start = text;
  lx->line = 1;
  lx->tok.kind = CFG_TOK_SYMBOL; /* anything but END/ERROR, so next() runs */
  cfg_lex_next(lx);
}
