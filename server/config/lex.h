/* Tokenizer of protobuf text format (config.pbtxt): turns bytes into tokens
 * with 1-based line/column positions. Used by one parse on one thread. */
#ifndef NEREID_SERVER_CONFIG_LEX_H
#define NEREID_SERVER_CONFIG_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  CFG_TOK_END,    /* end of input */
  CFG_TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
  CFG_TOK_INT,    /* decimal, 0x hex or 0 octal integer, without sign */
  CFG_TOK_FLOAT,  /* decimal with '.', exponent or f suffix, without sign */
  CFG_TOK_STRING, /* quoted, quotes included, escapes not yet decoded */
  CFG_TOK_SYMBOL, /* one printable ASCII character, e.g. { } < > [ ] : , ; - */
  CFG_TOK_ERROR,  /* malformed input; `what` says why */
} cfg_tok_kind_t;

/** One token; `p` points into the caller's text (not NUL-terminated). */
typedef struct {
  cfg_tok_kind_t kind;
  const char *p;
  size_t len;
  uint32_t line; /* 1-based */
  uint32_t col;  /* 1-based byte column */
  /** For CFG_TOK_ERROR: a static description; `line`/`col` locate it. */
  const char *what;
} cfg_tok_t;

/** Tokenizer state over text[0, len). The text must outlive the tokenizer. */
typedef struct {
  const char *cur;
  const char *end;
  const char *line_start;
  uint32_t line;
  cfg_tok_t tok; /* the current token (one token of lookahead) */
} cfg_lex_t;

/** Starts tokenizing and reads the first token into lx->tok. */
void cfg_lex_init(cfg_lex_t *lx, const char *text, size_t len);

/** Replaces lx->tok with the next token. After CFG_TOK_END or CFG_TOK_ERROR
 *  the token stays the same (the parser stops at either). */
void cfg_lex_next(cfg_lex_t *lx);

/** True when the current token is the one-character symbol `c`. */
static inline bool cfg_lex_is(const cfg_lex_t *lx, char c) {
  return lx->tok.kind == CFG_TOK_SYMBOL && lx->tok.p[0] == c;
}

#endif
