/* Text-format parser for any upb message type, driven by reflection:
 * grammar, field lookup, protoc's duplicate and oneof rules, and errors with
 * line:column. Each call owns all its state; any thread. */
#include "server/config/pbtxt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/config/lex.h"
#include "server/config/literal.h"
#include "upb/reflection.h"

typedef struct {
  cfg_lex_t lex;
  upb_Arena *arena;
  const char *filename;
  char *err;
  size_t err_len;
  int depth;
  cfg_lit_buf_t buf; /* decoded string literals, reused for every field */
} parser_t;

/* A printable excerpt of input for messages: long tokens (a megabyte of
 * digits) are cut, and bytes that would garble a terminal become '?'. */
typedef struct {
  char s[56];
} excerpt_t;

static excerpt_t excerpt(const char *p, size_t len) {
  excerpt_t e;
  size_t n = len < 40 ? len : 40, o = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    e.s[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (n < len) {
    memcpy(e.s + o, "...", 3);
    o += 3;
  }
  e.s[o] = '\0';
  return e;
}

static bool vfail(parser_t *p, uint32_t line, uint32_t col, const char *fmt, va_list ap) {
  if (p->err == NULL || p->err_len == 0) return false;
  int n = snprintf(p->err, p->err_len, "%s:%u:%u: ", p->filename, line, col);
  if (n >= 0 && (size_t)n < p->err_len)
    vsnprintf(p->err + n, p->err_len - (size_t)n, fmt, ap);
  return false;
}

__attribute__((format(printf, 4, 5))) static bool fail_pos(parser_t *p, uint32_t line,
                                                           uint32_t col, const char *fmt,
                                                           ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(p, line, col, fmt, ap);
  va_end(ap);
  return false;
}

__attribute__((format(printf, 3, 4))) static bool fail_at(parser_t *p, const cfg_tok_t *t,
                                                          const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(p, t->line, t->col, fmt, ap);
  va_end(ap);
  return false;
}

/* "expected <what>, found <current token>". When the tokenizer stopped on
 * malformed input here, that is the real cause and is reported instead. */
__attribute__((format(printf, 2, 3))) static bool fail_expected(parser_t *p,
                                                                const char *fmt, ...) {
  const cfg_tok_t *t = &p->lex.tok;
  if (t->kind == CFG_TOK_ERROR) return fail_at(p, t, "%s", t->what);
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (t->kind == CFG_TOK_END)
    return fail_at(p, t, "expected %s, found end of input", what);
  excerpt_t found = excerpt(t->p, t->len);
  if (t->kind == CFG_TOK_STRING)
    return fail_at(p, t, "expected %s, found string %s", what, found.s);
  return fail_at(p, t, "expected %s, found '%s'", what, found.s);
}

static bool fail_oom(parser_t *p) { return fail_at(p, &p->lex.tok, "out of memory"); }

static void next(parser_t *p) { cfg_lex_next(&p->lex); }
static bool at(const parser_t *p, char c) { return cfg_lex_is(&p->lex, c); }
static const char *fname(const upb_FieldDef *f) { return upb_FieldDef_Name(f); }

static const char *type_name(const upb_FieldDef *f) {
  switch (upb_FieldDef_Type(f)) {
    case kUpb_FieldType_Double:
      return "double";
    case kUpb_FieldType_Float:
      return "float";
    case kUpb_FieldType_Int64:
      return "int64";
    case kUpb_FieldType_UInt64:
      return "uint64";
    case kUpb_FieldType_Int32:
      return "int32";
    case kUpb_FieldType_Fixed64:
      return "fixed64";
    case kUpb_FieldType_Fixed32:
      return "fixed32";
    case kUpb_FieldType_Bool:
      return "bool";
    case kUpb_FieldType_String:
      return "string";
    case kUpb_FieldType_Group:
      return "group";
    case kUpb_FieldType_Message:
      return "message";
    case kUpb_FieldType_Bytes:
      return "bytes";
    case kUpb_FieldType_UInt32:
      return "uint32";
    case kUpb_FieldType_Enum:
      return "enum";
    case kUpb_FieldType_SFixed32:
      return "sfixed32";
    case kUpb_FieldType_SFixed64:
      return "sfixed64";
    case kUpb_FieldType_SInt32:
      return "sint32";
    case kUpb_FieldType_SInt64:
      return "sint64";
  }
  return "unknown";
}

/* ---- scalar values ---------------------------------------------------- */

/* [-]integer, range-checked for the field's C type (enums are int32). */
static bool parse_int(parser_t *p, const upb_FieldDef *f, upb_MessageValue *out) {
  cfg_tok_t start = p->lex.tok;
  bool neg = at(p, '-');
  if (neg) next(p);
  const cfg_tok_t *t = &p->lex.tok;
  if (t->kind != CFG_TOK_INT)
    return fail_expected(p, "an integer for %s field '%s'", type_name(f), fname(f));
  uint64_t max_pos, max_neg;
  bool is_unsigned = false; /* protoc rejects even "-0" for these */
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_UInt32:
      max_pos = UINT32_MAX, max_neg = 0, is_unsigned = true;
      break;
    case kUpb_CType_Int64:
      max_pos = INT64_MAX, max_neg = (uint64_t)INT64_MAX + 1;
      break;
    case kUpb_CType_UInt64:
      max_pos = UINT64_MAX, max_neg = 0, is_unsigned = true;
      break;
    default:
      max_pos = INT32_MAX, max_neg = (uint64_t)INT32_MAX + 1;
      break;
  }
  uint64_t mag;
  if (!cfg_lit_uint(t->p, t->len, &mag) || mag > (neg ? max_neg : max_pos) ||
      (neg && is_unsigned)) {
    excerpt_t text = excerpt(t->p, t->len);
    return fail_at(p, &start, "value %s%s out of range for %s field '%s'", neg ? "-" : "",
                   text.s, type_name(f), fname(f));
  }
  /* Negation through mag - 1 so that INT64_MIN never overflows. */
  int64_t s = neg && mag ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_UInt32:
      out->uint32_val = (uint32_t)mag;
      break;
    case kUpb_CType_Int64:
      out->int64_val = s;
      break;
    case kUpb_CType_UInt64:
      out->uint64_val = mag;
      break;
    default:
      out->int32_val = (int32_t)s;
      break;
  }
  next(p);
  return true;
}

static bool ident_is(const cfg_tok_t *t, const char *word, bool any_case) {
  size_t n = strlen(word);
  if (t->kind != CFG_TOK_IDENT || t->len != n) return false;
  return any_case ? strncasecmp(t->p, word, n) == 0 : memcmp(t->p, word, n) == 0;
}

/* [-](decimal number | inf | infinity | nan), protoc's spellings. */
static bool parse_float(parser_t *p, const upb_FieldDef *f, upb_MessageValue *out) {
  bool neg = at(p, '-');
  if (neg) next(p);
  const cfg_tok_t *t = &p->lex.tok;
  /* protoc takes no hex or octal here ("017" is neither 15 nor 17). */
  bool radix = t->kind == CFG_TOK_INT && t->len > 1 && t->p[0] == '0';
  double d;
  if ((t->kind == CFG_TOK_INT && !radix) || t->kind == CFG_TOK_FLOAT) {
    if (!cfg_lit_double(t->p, t->len, &d)) return fail_oom(p);
  } else if (ident_is(t, "inf", true) || ident_is(t, "infinity", true)) {
    d = INFINITY;
  } else if (ident_is(t, "nan", true)) {
    d = NAN;
  } else {
    return fail_expected(p, "a decimal number for %s field '%s'", type_name(f), fname(f));
  }
  if (neg) d = -d;
  /* Floats round from the double like protoc and Python do: IEEE
   * rounding, so 3.4028235e38 is FLT_MAX and only values past the
   * half-ulp above it become infinity (never an error). */
  if (upb_FieldDef_CType(f) == kUpb_CType_Double)
    out->double_val = d;
  else
    out->float_val = (float)d;
  next(p);
  return true;
}

static bool parse_bool(parser_t *p, const upb_FieldDef *f, upb_MessageValue *out) {
  const cfg_tok_t *t = &p->lex.tok;
  uint64_t v = 2;
  if (ident_is(t, "true", false) || ident_is(t, "True", false) ||
      ident_is(t, "t", false)) {
    v = 1;
  } else if (ident_is(t, "false", false) || ident_is(t, "False", false) ||
             ident_is(t, "f", false)) {
    v = 0;
  } else if (t->kind == CFG_TOK_INT && !cfg_lit_uint(t->p, t->len, &v)) {
    v = 2;
  }
  if (v > 1) return fail_expected(p, "true or false for bool field '%s'", fname(f));
  out->bool_val = v == 1;
  next(p);
  return true;
}

/* "A, B, C" for an error message, cut to fit `n` bytes. */
static void enum_names(const upb_EnumDef *e, char *s, size_t n) {
  size_t o = 0;
  s[0] = '\0';
  for (int i = 0; i < upb_EnumDef_ValueCount(e); i++) {
    const char *name = upb_EnumValueDef_Name(upb_EnumDef_Value(e, i));
    size_t need = strlen(name) + 2;
    if (o + need + 4 >= n) {
      snprintf(s + o, n - o, "%s...", o ? ", " : "");
      return;
    }
    o += (size_t)snprintf(s + o, n - o, "%s%s", o ? ", " : "", name);
  }
}

/* A value name, or a number: any int32 for open (proto3) enums, a declared
 * one for closed (proto2) enums, as protoc decides. */
static bool parse_enum(parser_t *p, const upb_FieldDef *f, upb_MessageValue *out) {
  const upb_EnumDef *e = upb_FieldDef_EnumSubDef(f);
  cfg_tok_t t = p->lex.tok;
  if (t.kind == CFG_TOK_IDENT) {
    const upb_EnumValueDef *v = upb_EnumDef_FindValueByNameWithSize(e, t.p, t.len);
    if (v == NULL) {
      char names[240];
      enum_names(e, names, sizeof names);
      excerpt_t text = excerpt(t.p, t.len);
      return fail_at(p, &t,
                     "unknown value '%s' for enum %s of field '%s' (expected one of %s)",
                     text.s, upb_EnumDef_FullName(e), fname(f), names);
    }
    out->int32_val = upb_EnumValueDef_Number(v);
    next(p);
    return true;
  }
  if (t.kind != CFG_TOK_INT && !at(p, '-'))
    return fail_expected(p, "a value of enum %s for field '%s'", upb_EnumDef_FullName(e),
                         fname(f));
  if (!parse_int(p, f, out)) return false;
  bool closed = upb_FileDef_Syntax(upb_EnumDef_File(e)) == kUpb_Syntax_Proto2;
  if (closed && upb_EnumDef_FindValueByNumber(e, out->int32_val) == NULL)
    return fail_at(p, &t, "unknown number %d for enum %s of field '%s'",
                   (int)out->int32_val, upb_EnumDef_FullName(e), fname(f));
  return true;
}

/* One or more adjacent quoted literals ("ab" 'cd'), decoded and copied
 * into the arena. String (not bytes) fields must hold valid UTF-8. */
static bool parse_string(parser_t *p, const upb_FieldDef *f, upb_MessageValue *out) {
  cfg_tok_t start = p->lex.tok;
  if (start.kind != CFG_TOK_STRING)
    return fail_expected(p, "a quoted string for %s field '%s'", type_name(f), fname(f));
  p->buf.len = 0;
  while (p->lex.tok.kind == CFG_TOK_STRING) {
    const cfg_tok_t *t = &p->lex.tok;
    size_t bad;
    const char *what;
    if (!cfg_lit_string_append(&p->buf, t->p, t->len, &bad, &what)) {
      uint32_t col = t->col + bad < t->col ? UINT32_MAX : t->col + (uint32_t)bad;
      return fail_pos(p, t->line, col, "%s in string literal", what);
    }
    next(p);
  }
  if (upb_FieldDef_CType(f) == kUpb_CType_String &&
      !cfg_lit_utf8_valid(p->buf.data, p->buf.len))
    return fail_at(p, &start, "string field '%s' is not valid UTF-8", fname(f));
  char *copy = upb_Arena_Malloc(p->arena, p->buf.len ? p->buf.len : 1);
  if (copy == NULL) return fail_oom(p);
  if (p->buf.len) memcpy(copy, p->buf.data, p->buf.len);
  out->str_val = upb_StringView_FromDataAndSize(copy, p->buf.len);
  return true;
}

static bool parse_scalar(parser_t *p, const upb_FieldDef *f, upb_MessageValue *out) {
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool:
      return parse_bool(p, f, out);
    case kUpb_CType_Float:
    case kUpb_CType_Double:
      return parse_float(p, f, out);
    case kUpb_CType_Enum:
      return parse_enum(p, f, out);
    case kUpb_CType_String:
    case kUpb_CType_Bytes:
      return parse_string(p, f, out);
    default:
      return parse_int(p, f, out);
  }
}

/* ---- fields and messages ---------------------------------------------- */

/* Whether a non-repeated field already has a value. Fields without
 * presence (proto3 scalars) count as set when not zero or empty: that is
 * what protoc and Python check, so "x: 0 x: 5" passes there and here. */
static bool nonzero(upb_CType type, upb_MessageValue v) {
  switch (type) {
    case kUpb_CType_Bool:
      return v.bool_val;
    case kUpb_CType_Float:
      return v.float_val != 0 || isnan(v.float_val);
    case kUpb_CType_Double:
      return v.double_val != 0 || isnan(v.double_val);
    case kUpb_CType_Int64:
      return v.int64_val != 0;
    case kUpb_CType_UInt64:
      return v.uint64_val != 0;
    case kUpb_CType_UInt32:
      return v.uint32_val != 0;
    case kUpb_CType_String:
    case kUpb_CType_Bytes:
      return v.str_val.size != 0;
    case kUpb_CType_Message:
      return v.msg_val != NULL;
    default:
      return v.int32_val != 0;
  }
}

static bool is_set(const upb_Message *msg, const upb_FieldDef *f) {
  if (upb_FieldDef_HasPresence(f)) return upb_Message_Has(msg, f);
  return nonzero(upb_FieldDef_CType(f), upb_Message_Get(msg, f));
}

static bool fail_twice(parser_t *p, const cfg_tok_t *name, const upb_FieldDef *f,
                       const upb_MessageDef *m) {
  return fail_at(p, name, "non-repeated field '%s' of %s is specified more than once",
                 fname(f), upb_MessageDef_FullName(m));
}

static bool check_not_set(parser_t *p, const upb_Message *msg, const upb_MessageDef *m,
                          const upb_FieldDef *f, const cfg_tok_t *name) {
  if (upb_FieldDef_IsRepeated(f)) return true;
  const upb_OneofDef *o = upb_FieldDef_RealContainingOneof(f);
  const upb_FieldDef *other = o ? upb_Message_WhichOneof(msg, o) : NULL;
  if (other != NULL && other != f)
    return fail_at(
        p, name, "field '%s' conflicts with field '%s': both are in oneof '%s' of %s",
        fname(f), fname(other), upb_OneofDef_Name(o), upb_MessageDef_FullName(m));
  return is_set(msg, f) ? fail_twice(p, name, f, m) : true;
}

/* Field lookup as protoc does it: by name, except that a group is written
 * with its type name ("MyGroup"), which is its field name capitalized. */
static const upb_FieldDef *find_field(const upb_MessageDef *m, const char *name,
                                      size_t len) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByNameWithSize(m, name, len);
  bool lowered = false;
  if (f == NULL && len < 128) {
    char lower[128];
    for (size_t i = 0; i < len; i++)
      lower[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] + 32) : name[i];
    f = upb_MessageDef_FindFieldByNameWithSize(m, lower, len);
    lowered = true;
  }
  if (f == NULL) return NULL;
  bool group = upb_FieldDef_Type(f) == kUpb_FieldType_Group;
  if (lowered && !group) return NULL;
  if (group) {
    const char *type = upb_MessageDef_Name(upb_FieldDef_MessageSubDef(f));
    if (strlen(type) != len || memcmp(type, name, len) != 0) return NULL;
  }
  return f;
}

/* The field named by the current token (not consumed), or NULL after an
 * error: a name that is not an identifier, or unknown in `m`. */
static const upb_FieldDef *field_name(parser_t *p, const upb_MessageDef *m) {
  const cfg_tok_t *name = &p->lex.tok;
  if (name->kind != CFG_TOK_IDENT) {
    if (at(p, '['))
      fail_at(p, name, "extension and Any fields ('[name]') are not supported");
    else
      fail_expected(p, "a field name of %s", upb_MessageDef_FullName(m));
    return NULL;
  }
  const upb_FieldDef *f = find_field(m, name->p, name->len);
  if (f == NULL) {
    excerpt_t text = excerpt(name->p, name->len);
    fail_at(p, name, "unknown field '%s' in message %s", text.s,
            upb_MessageDef_FullName(m));
  }
  return f;
}

/* Consumes the field name and the ':' after it, which scalars require and
 * messages may omit ("input { }", "input: { }", "input [ {...} ]"). */
static bool field_colon(parser_t *p, const upb_FieldDef *f) {
  next(p);
  if (at(p, ':')) {
    next(p);
    return true;
  }
  if (!upb_FieldDef_IsSubMessage(f))
    return fail_expected(p, "':' after field name '%s'", fname(f));
  if (!at(p, '{') && !at(p, '<') && !(at(p, '[') && upb_FieldDef_IsRepeated(f)))
    return fail_expected(p, "':' or '{' after field name '%s'", fname(f));
  return true;
}

/* After a field, protoc allows one ',' or ';'. */
static void separator(parser_t *p) {
  if (at(p, ',') || at(p, ';')) next(p);
}

/* Opens a message body: '{' (closed by '}') or '<' (closed by '>');
 * returns the closing character, or 0 after an error. */
static char body_open(parser_t *p, const upb_FieldDef *f, cfg_tok_t *open) {
  char close = at(p, '{') ? '}' : at(p, '<') ? '>' : 0;
  if (!close) {
    fail_expected(p, "'{' or '<' to start message field '%s'", fname(f));
    return 0;
  }
  *open = p->lex.tok;
  /* p->depth counts open bodies below the top level, which is level 1. */
  if (p->depth + 2 > CFG_PBTXT_MAX_DEPTH) {
    fail_at(p, open, "messages nested more than %d levels deep", CFG_PBTXT_MAX_DEPTH);
    return 0;
  }
  p->depth++;
  next(p);
  return close;
}

/* Before each field of a body: 1 when a field follows, 0 when the body
 * ended (its closer consumed; at the top level, `close` is 0 and the end
 * of input ends it), -1 after an error. */
static int body_more(parser_t *p, char close, const cfg_tok_t *open) {
  const cfg_tok_t *t = &p->lex.tok;
  bool closer = at(p, '}') || at(p, '>');
  if (t->kind == CFG_TOK_END && close == 0) return 0;
  if (closer && t->p[0] == close) {
    next(p);
    p->depth--;
    return 0;
  }
  if (closer && close == 0) {
    fail_at(p, t, "unexpected '%c': no message is open here", t->p[0]);
    return -1;
  }
  if (closer || t->kind == CFG_TOK_END) {
    fail_expected(p, "'%c' to close the message opened at %u:%u", close, open->line,
                  open->col);
    return -1;
  }
  return 1;
}

static bool parse_field(parser_t *p, upb_Message *msg, const upb_MessageDef *m);

/* '{' fields '}' or '<' fields '>' into `sub`. */
static bool parse_body(parser_t *p, upb_Message *sub, const upb_MessageDef *sm,
                       const upb_FieldDef *f) {
  cfg_tok_t open;
  char close = body_open(p, f, &open);
  if (!close) return false;
  int more;
  while ((more = body_more(p, close, &open)) > 0)
    if (!parse_field(p, sub, sm)) return false;
  return more == 0;
}

/* One key or value of a map entry, kept in `slot` (no entry message is
 * built: upb's map entries carry no presence bits to read back). Set twice
 * is an error when the first value was not zero (proto3 entries, as protoc)
 * or at all (proto2 entries, which have presence). */
typedef struct {
  const upb_FieldDef *f;
  upb_MessageValue v;
  bool seen;
} slot_t;

static bool parse_entry_field(parser_t *p, const upb_MessageDef *em, slot_t slot[2]) {
  cfg_tok_t name = p->lex.tok;
  const upb_FieldDef *f = field_name(p, em);
  if (f == NULL) return false;
  slot_t *s = f == slot[0].f ? &slot[0] : &slot[1];
  bool proto2 = upb_MessageDef_Syntax(em) == kUpb_Syntax_Proto2;
  if (s->seen && (proto2 || nonzero(upb_FieldDef_CType(f), s->v)))
    return fail_twice(p, &name, f, em);
  if (!field_colon(p, f)) return false;
  s->seen = true;
  if (!upb_FieldDef_IsSubMessage(f)) return parse_scalar(p, f, &s->v);
  const upb_MessageDef *vm = upb_FieldDef_MessageSubDef(f);
  upb_Message *sub = upb_Message_New(vm, p->arena);
  if (sub == NULL) return fail_oom(p);
  s->v.msg_val = sub;
  return parse_body(p, sub, vm, f);
}

/* A map entry { key: K value: V }; a later entry with the same key
 * replaces the earlier one, and a missing key or value is its default. */
static bool parse_map_entry(parser_t *p, upb_Message *msg, const upb_FieldDef *f) {
  const upb_MessageDef *em = upb_FieldDef_MessageSubDef(f);
  slot_t slot[2] = {{upb_MessageDef_FindFieldByNumber(em, 1), {0}, false},
                    {upb_MessageDef_FindFieldByNumber(em, 2), {0}, false}};
  cfg_tok_t open;
  char close = body_open(p, f, &open);
  if (!close) return false;
  int more;
  while ((more = body_more(p, close, &open)) > 0) {
    if (!parse_entry_field(p, em, slot)) return false;
    separator(p);
  }
  if (more < 0) return false;
  for (int i = 0; i < 2; i++) {
    if (slot[i].seen) continue;
    if (upb_FieldDef_IsSubMessage(slot[i].f)) {
      slot[i].v.msg_val =
          upb_Message_New(upb_FieldDef_MessageSubDef(slot[i].f), p->arena);
      if (slot[i].v.msg_val == NULL) return fail_oom(p);
    } else {
      slot[i].v = upb_FieldDef_Default(slot[i].f);
    }
    /* The map copies string keys and values with memcpy: no NULL data. */
    if (upb_FieldDef_IsString(slot[i].f) && slot[i].v.str_val.data == NULL)
      slot[i].v.str_val.data = "";
  }
  upb_Map *map = upb_Message_Mutable(msg, f, p->arena).map;
  if (map == NULL || !upb_Map_Set(map, slot[0].v, slot[1].v, p->arena))
    return fail_oom(p);
  return true;
}

/* One value of field `f`: a message body or a scalar, appended when the
 * field is repeated. */
static bool parse_element(parser_t *p, upb_Message *msg, const upb_FieldDef *f) {
  bool repeated = upb_FieldDef_IsRepeated(f);
  if (upb_FieldDef_IsMap(f)) return parse_map_entry(p, msg, f);
  upb_MessageValue v;
  if (upb_FieldDef_IsSubMessage(f)) {
    const upb_MessageDef *sm = upb_FieldDef_MessageSubDef(f);
    upb_Message *sub = repeated ? upb_Message_New(sm, p->arena)
                                : upb_Message_Mutable(msg, f, p->arena).msg;
    if (sub == NULL) return fail_oom(p);
    if (!parse_body(p, sub, sm, f)) return false;
    if (!repeated) return true;
    v.msg_val = sub;
  } else if (!parse_scalar(p, f, &v)) {
    return false;
  }
  if (repeated) {
    upb_Array *arr = upb_Message_Mutable(msg, f, p->arena).array;
    if (arr == NULL || !upb_Array_Append(arr, v, p->arena)) return fail_oom(p);
  } else if (!upb_Message_Set(msg, f, v, p->arena)) {
    return fail_oom(p);
  }
  return true;
}

/* '[' ']' or '[' element (',' element)* ']' */
static bool parse_list(parser_t *p, upb_Message *msg, const upb_FieldDef *f) {
  cfg_tok_t open = p->lex.tok;
  next(p);
  if (at(p, ']')) {
    next(p);
    return true;
  }
  for (;;) {
    if (!parse_element(p, msg, f)) return false;
    if (at(p, ']')) break;
    if (!at(p, ','))
      return fail_expected(p, "',' or ']' in the list of field '%s' opened at %u:%u",
                           fname(f), open.line, open.col);
    next(p);
  }
  next(p);
  return true;
}

/* name ':' value | name [':'] message | name ':' '[' list ']' (repeated;
 * the ':' is optional before a list of messages), then a separator. */
static bool parse_field(parser_t *p, upb_Message *msg, const upb_MessageDef *m) {
  cfg_tok_t name = p->lex.tok;
  const upb_FieldDef *f = field_name(p, m);
  if (f == NULL || !check_not_set(p, msg, m, f, &name) || !field_colon(p, f))
    return false;
  bool ok = upb_FieldDef_IsRepeated(f) && at(p, '[') ? parse_list(p, msg, f)
                                                     : parse_element(p, msg, f);
  if (ok) separator(p);
  return ok;
}

bool cfg_pbtxt_parse(const char *text, size_t len, const char *filename, upb_Message *msg,
                     const upb_MessageDef *m, upb_Arena *arena, char *err,
                     size_t err_len) {
  parser_t p;
  memset(&p, 0, sizeof p);
  p.arena = arena;
  p.filename = filename ? filename : "<text>";
  p.err = err;
  p.err_len = err_len;
  if (err && err_len) err[0] = '\0';
  if (text == NULL) len = 0;
  cfg_lex_init(&p.lex, text ? text : "", len);
  int more;
  while ((more = body_more(&p, 0, NULL)) > 0)
    if (!parse_field(&p, msg, m)) break;
  cfg_lit_buf_free(&p.buf);
  return more == 0;
}
