/* Unit tests of cfg_pbtxt_parse on nereid.test.AllTypes (every scalar type,
 * proto2 presence, closed enums, groups, recursion): values, protoc's
 * spellings, exact error text and positions, and hostile inputs. */
#include "server/config/pbtxt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "all_types.upb.h"
#include "all_types.upbdefs.h"
#include "model_config.upbdefs.h"
#include "test/unit/unit.h"
#include "upb/reflection.h"

static upb_DefPool *pool;
static const upb_MessageDef *all_types;
static upb_Arena *arena;
static char err[512];

/* The def pool lives across cases; each parse gets a fresh arena. */
static void setup(void) {
  if (arena) upb_Arena_Free(arena);
  arena = upb_Arena_New();
}

static const upb_MessageDef *defs(void) {
  if (pool == NULL) {
    pool = upb_DefPool_New();
    all_types = nereid_test_AllTypes_getmsgdef(pool);
  }
  return all_types;
}

/* Parses `text` from an exactly-sized heap copy (no NUL after it), so that
 * ASan sees any read past the end. NULL when the parse fails (err set). */
static nereid_test_AllTypes *parse_as(const char *text, size_t len,
                                      const upb_MessageDef *m) {
  setup();
  char *copy = malloc(len ? len : 1);
  memcpy(copy, text, len);
  upb_Message *msg = upb_Message_New(m, arena);
  bool ok = cfg_pbtxt_parse(copy, len, "t.pbtxt", msg, m, arena, err, sizeof err);
  free(copy);
  return ok ? (nereid_test_AllTypes *)msg : NULL;
}

static nereid_test_AllTypes *parse(const char *text) {
  return parse_as(text, strlen(text), defs());
}

static bool sv_is(upb_StringView s, const char *want, size_t len) {
  return s.size == len && memcmp(s.data, want, len) == 0;
}
#define CHECK_BYTES(sv, lit) CHECK(sv_is(sv, lit, sizeof(lit) - 1))

/* The error of parsing `text` is exactly `want`. */
#define CHECK_ERROR(text, want)        \
  do {                                 \
    CHECK(parse(text) == NULL);        \
    CHECK_STREQ(err, "t.pbtxt:" want); \
  } while (0)

static void test_scalars(void) {
  nereid_test_AllTypes *m = parse(
      "i32: -2147483648 i64: -9223372036854775808 u32: 4294967295\n"
      "u64: 18446744073709551615 s32: -7 s64: 0x7fffffffffffffff fx32: 0xFFFFFFFF\n"
      "fx64: 01777777777777777777777 sfx32: -0x80000000 sfx64: -1\n"
      "flt: 1.5e3f dbl: -2.5E-3 b: t str: 'it''s' byt: \"\\0\\377\" color: BLUE");
  REQUIRE(m != NULL);
  CHECK(nereid_test_AllTypes_i32(m) == INT32_MIN);
  CHECK(nereid_test_AllTypes_i64(m) == INT64_MIN);
  CHECK(nereid_test_AllTypes_u32(m) == UINT32_MAX);
  CHECK(nereid_test_AllTypes_u64(m) == UINT64_MAX);
  CHECK(nereid_test_AllTypes_s32(m) == -7);
  CHECK(nereid_test_AllTypes_s64(m) == INT64_MAX);
  CHECK(nereid_test_AllTypes_fx32(m) == UINT32_MAX);
  CHECK(nereid_test_AllTypes_fx64(m) == UINT64_MAX);
  CHECK(nereid_test_AllTypes_sfx32(m) == INT32_MIN);
  CHECK(nereid_test_AllTypes_sfx64(m) == -1);
  CHECK(nereid_test_AllTypes_flt(m) == 1500.0f);
  CHECK(nereid_test_AllTypes_dbl(m) == -2.5e-3);
  CHECK(nereid_test_AllTypes_b(m));
  CHECK_BYTES(nereid_test_AllTypes_str(m), "its");
  CHECK_BYTES(nereid_test_AllTypes_byt(m), "\0\377");
  CHECK(nereid_test_AllTypes_color(m) == nereid_test_BLUE);
  /* proto2 presence: explicit defaults are present, absent fields are not. */
  m = parse("i32: 0 with_default: 7");
  REQUIRE(m != NULL);
  CHECK(nereid_test_AllTypes_has_i32(m));
  CHECK(nereid_test_AllTypes_has_with_default(m));
  CHECK(!nereid_test_AllTypes_has_u32(m));
}

static void test_floats(void) {
  nereid_test_AllTypes *m = parse(
      "r_flt: [3.4028235e38, 3.40282357e38, 1e-46, -0, nan, -inf, .5, 5., 2F]\n"
      "r_dbl: [1e400, -nan, 4.9e-324, 0.1, 123456789012345678901234567890, InFiNiTy]");
  REQUIRE(m != NULL);
  size_t n;
  const float *f = nereid_test_AllTypes_r_flt(m, &n);
  REQUIRE(n == 9);
  CHECK(f[0] == FLT_MAX); /* rounds like protoc: not yet infinity */
  CHECK(isinf(f[1]) && f[1] > 0);
  CHECK(f[2] == 0.0f);
  CHECK(f[3] == 0.0f && signbit(f[3]));
  CHECK(isnan(f[4]) && !signbit(f[4]));
  CHECK(isinf(f[5]) && f[5] < 0);
  CHECK(f[6] == 0.5f && f[7] == 5.0f && f[8] == 2.0f);
  const double *d = nereid_test_AllTypes_r_dbl(m, &n);
  REQUIRE(n == 6);
  CHECK(isinf(d[0]));
  CHECK(isnan(d[1]) && signbit(d[1]));
  CHECK(d[2] == 4.9e-324);
  CHECK(d[3] == 0.1);
  CHECK(d[4] == 123456789012345678901234567890.0);
  CHECK(isinf(d[5]));
  CHECK_ERROR("dbl: 017",
              "1:6: expected a decimal number for double field 'dbl', found '017'");
  CHECK_ERROR("flt: infinit",
              "1:6: expected a decimal number for float field 'flt', found "
              "'infinit'");
}

static void test_integers(void) {
  nereid_test_AllTypes *m = parse("r_i32: [0, -0, 017, -017, 0x1F, 0X1f, - 5, -\n#c\n6]");
  REQUIRE(m != NULL);
  size_t n;
  const int32_t *v = nereid_test_AllTypes_r_i32(m, &n);
  REQUIRE(n == 8);
  CHECK(v[0] == 0 && v[1] == 0 && v[2] == 15 && v[3] == -15);
  CHECK(v[4] == 31 && v[5] == 31 && v[6] == -5 && v[7] == -6);
  m = parse("r_b: [true, false, True, False, t, f, 1, 0, 0x1]");
  REQUIRE(m != NULL);
  const bool *b = nereid_test_AllTypes_r_b(m, &n);
  REQUIRE(n == 9);
  CHECK(b[0] && !b[1] && b[2] && !b[3] && b[4] && !b[5] && b[6] && !b[7] && b[8]);
  CHECK_ERROR("i32: 2147483648",
              "1:6: value 2147483648 out of range for int32 field 'i32'");
  CHECK_ERROR("i32: -2147483649",
              "1:6: value -2147483649 out of range for int32 field 'i32'");
  CHECK_ERROR("u64: 18446744073709551616",
              "1:6: value 18446744073709551616 out of range for uint64 field 'u64'");
  CHECK_ERROR("u32: -0", "1:6: value -0 out of range for uint32 field 'u32'");
  CHECK_ERROR("s64: 0x10000000000000000",
              "1:6: value 0x10000000000000000 out of range for sint64 field 's64'");
  CHECK_ERROR("b: 2", "1:4: expected true or false for bool field 'b', found '2'");
  CHECK_ERROR("b: TRUE", "1:4: expected true or false for bool field 'b', found 'TRUE'");
  CHECK_ERROR("i32: 1.0", "1:6: expected an integer for int32 field 'i32', found '1.0'");
  CHECK_ERROR("i32: --1", "1:7: expected an integer for int32 field 'i32', found '-'");
  /* A number of a thousand digits is cut in the message. */
  char big[1100] = "i64: ";
  memset(big + 5, '9', 1000);
  big[1005] = '\0';
  CHECK(parse(big) == NULL);
  CHECK(strstr(err,
               "t.pbtxt:1:6: value 9999999999999999999999999999999999999999... out of "
               "range for int64 field 'i64'") == err);
}

static void test_strings(void) {
  nereid_test_AllTypes *m = parse(
      "str: \"\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"\\?\" 'x\"y' \"\\101\\x41\\x4\" "
      "\"\\u00e9\\U0001F600\"\n"
      "byt: '\\ud83d\\ude00' \"\\u4e2d\" '\\x'  \"0\"");
  REQUIRE(m == NULL); /* "\x'" has no hex digits */
  CHECK_STREQ(err, "t.pbtxt:2:31: \\x must be followed by hex digits in string literal");
  m = parse(
      "str: \"\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"\\?\" 'x\"y' \"\\101\\x41\\x4\" "
      "\"\\u00e9\\U0001F600\"\nbyt: '\\ud83d\\ude00' \"\\u4e2d\\0010\"");
  REQUIRE(m != NULL);
  CHECK_BYTES(nereid_test_AllTypes_str(m),
              "\a\b\f\n\r\t\v\\'\"?x\"yAA\x04\xc3\xa9\xf0\x9f\x98\x80");
  CHECK_BYTES(nereid_test_AllTypes_byt(m),
              "\xf0\x9f\x98\x80\xe4\xb8\xad\001"
              "0");
  m = parse("r_str: ['', \"\", 'a' \"b\" 'c'] r_byt: \"\\xff\\x80\"");
  REQUIRE(m != NULL);
  size_t n;
  const upb_StringView *s = nereid_test_AllTypes_r_str(m, &n);
  REQUIRE(n == 3);
  CHECK(s[0].size == 0 && s[1].size == 0);
  CHECK_BYTES(s[2], "abc");
  CHECK_ERROR("str: \"\\xff\"", "1:6: string field 'str' is not valid UTF-8");
  CHECK_ERROR("str: \"\\ud800x\"",
              "1:7: unicode escape is not a valid code point (lone "
              "surrogate or past U+10FFFF) in string literal");
  CHECK_ERROR("str: \"ok\" \"\\z\"", "1:12: invalid escape sequence in string literal");
  CHECK_ERROR("str: \"\\400\"",
              "1:7: octal escape is larger than \\377 in string literal");
  CHECK_ERROR("str: \"\\u12x\"",
              "1:7: \\u must be followed by 4 hex digits in string literal");
  CHECK_ERROR("str: 'abc\n'",
              "1:6: string literal is not closed before the end of the line");
  CHECK_ERROR("str: abc",
              "1:6: expected a quoted string for string field 'str', found 'abc'");
}

static void test_enums(void) {
  nereid_test_AllTypes *m =
      parse("r_color: [RED, 1, -1, INFRARED] m_u32_color { value: BLUE }");
  REQUIRE(m != NULL);
  size_t n;
  const int32_t *c = nereid_test_AllTypes_r_color(m, &n);
  REQUIRE(n == 4);
  CHECK(c[0] == 0 && c[1] == 1 && c[2] == -1 && c[3] == -1);
  /* Closed (proto2) enums take declared numbers only; the names are listed. */
  CHECK_ERROR("color: 3",
              "1:8: unknown number 3 for enum nereid.test.Color of field 'color'");
  CHECK_ERROR("color: red",
              "1:8: unknown value 'red' for enum nereid.test.Color of field "
              "'color' (expected one of RED, GREEN, BLUE, INFRARED)");
  /* Open (proto3) enums take any int32, as protoc does. */
  const upb_MessageDef *mc = inference_ModelConfig_getmsgdef(pool);
  const char *text = "input { data_type: 99 } output { data_type: -4 }";
  CHECK(parse_as(text, strlen(text), mc) != NULL);
  text = "input { data_type: TYPE_FOOBAR }";
  CHECK(parse_as(text, strlen(text), mc) == NULL);
  CHECK(strstr(err,
               "t.pbtxt:1:20: unknown value 'TYPE_FOOBAR' for enum inference.DataType") ==
        err);
}

static void test_messages_maps_oneofs(void) {
  nereid_test_AllTypes *m = parse(
      "child { child < i32: 2 > } r_child [{}, <u32: 1>] r_child: {} MyGroup { gval: 3 "
      "}\n"
      "m_str_i32 [{key: 'a' value: 1}, {value: 2}, {key: 'a' value: 3}]\n"
      "m_bool_msg { key: true } m_i64_str: { key: -1 } o_msg { i32: 4 }");
  REQUIRE(m != NULL);
  CHECK(nereid_test_AllTypes_i32(
            nereid_test_AllTypes_child(nereid_test_AllTypes_child(m))) == 2);
  size_t n;
  nereid_test_AllTypes_r_child(m, &n);
  CHECK_EQ_U64(n, 3);
  CHECK(nereid_test_AllTypes_MyGroup_gval(nereid_test_AllTypes_mygroup(m)) == 3);
  int32_t v = 0;
  CHECK_EQ_U64(nereid_test_AllTypes_m_str_i32_size(m), 2);
  CHECK(nereid_test_AllTypes_m_str_i32_get(m, upb_StringView_FromString("a"), &v) &&
        v == 3);
  CHECK(nereid_test_AllTypes_m_str_i32_get(m, upb_StringView_FromString(""), &v) &&
        v == 2);
  nereid_test_AllTypes *val = NULL; /* a missing message value is an empty message */
  CHECK(nereid_test_AllTypes_m_bool_msg_get(m, true, &val) && val != NULL);
  upb_StringView s = {0};
  CHECK(nereid_test_AllTypes_m_i64_str_get(m, -1, &s) && s.size == 0);
  CHECK(nereid_test_AllTypes_choice_case(m) == nereid_test_AllTypes_choice_o_msg);
  CHECK_ERROR("o_msg {} o_str: 'x'",
              "1:10: field 'o_str' conflicts with field 'o_msg': both "
              "are in oneof 'choice' of nereid.test.AllTypes");
  CHECK_ERROR("o_msg {} o_msg {}",
              "1:10: non-repeated field 'o_msg' of nereid.test.AllTypes "
              "is specified more than once");
  CHECK_ERROR("mygroup { }",
              "1:1: unknown field 'mygroup' in message nereid.test.AllTypes");
  CHECK_ERROR("child: 5",
              "1:8: expected '{' or '<' to start message field 'child', found '5'");
  CHECK_ERROR("child { i32: 1 >",
              "1:16: expected '}' to close the message opened at 1:7, "
              "found '>'");
  CHECK_ERROR("r_i32: [1 2]",
              "1:11: expected ',' or ']' in the list of field 'r_i32' opened "
              "at 1:8, found '2'");
  CHECK_ERROR("[ext]: 1", "1:1: extension and Any fields ('[name]') are not supported");
  CHECK_ERROR("i32 5", "1:5: expected ':' after field name 'i32', found '5'");
}

static void test_merge_into_existing(void) {
  nereid_test_AllTypes *m = parse("r_i32: 1 i32: 5");
  REQUIRE(m != NULL);
  const char more[] = "r_i32: [2, 3]";
  REQUIRE(cfg_pbtxt_parse(more, sizeof more - 1, "m", (upb_Message *)m, all_types, arena,
                          err, sizeof err));
  size_t n;
  nereid_test_AllTypes_r_i32(m, &n);
  CHECK_EQ_U64(n, 3);
  const char again[] = "i32: 6";
  CHECK(!cfg_pbtxt_parse(again, sizeof again - 1, "m", (upb_Message *)m, all_types, arena,
                         err, sizeof err));
}

static void test_depth_limit(void) {
  /* Level 1 is the top message; 63 nested bodies reach level 64. */
  char text[2048];
  size_t o = 0;
  for (int i = 0; i < 63; i++) o += (size_t)sprintf(text + o, "child{");
  for (int i = 0; i < 63; i++) text[o++] = '}';
  CHECK(parse_as(text, o, all_types) != NULL);
  o = 0;
  for (int i = 0; i < 64; i++) o += (size_t)sprintf(text + o, "child{");
  CHECK(parse_as(text, o, all_types) == NULL);
  CHECK_STREQ(err, "t.pbtxt:1:384: messages nested more than 64 levels deep");
  /* A megabyte of '{' stops at the limit instead of exhausting the stack. */
  size_t big = 1 << 20;
  char *deep = malloc(big);
  for (size_t i = 0; i < big; i += 6)
    memcpy(deep + i, "child{", big - i < 6 ? big - i : 6);
  CHECK(parse_as(deep, big, all_types) == NULL);
  CHECK(strstr(err, "nested more than 64 levels") != NULL);
  free(deep);
}

/* Every prefix of a valid text either parses or fails with a positioned
 * error; none reads past its end (ASan) or leaves `err` unterminated. */
static void test_truncated_inputs(void) {
  const char text[] =
      "i32: -12 str: \"a\\x41\\u00e9\" dbl: 1.5e-3 child < r_i32: [1, 0x2] > "
      "m_str_i32 { key: 'k' value: 7 } color: BLUE flt: -inf # end";
  for (size_t len = 0; len <= sizeof text - 1; len++) {
    memset(err, 'x', sizeof err);
    if (parse_as(text, len, all_types) == NULL) {
      CHECK(memchr(err, '\0', sizeof err) != NULL);
      CHECK(strncmp(err, "t.pbtxt:1:", 10) == 0);
    }
  }
}

static void test_error_buffer(void) {
  setup();
  upb_Message *msg = upb_Message_New(all_types, arena);
  const char bad[] = "nope: 1";
  /* Small buffers are filled and terminated, never overrun. */
  for (size_t cap = 1; cap < 24; cap++) {
    char buf[32];
    memset(buf, '#', sizeof buf);
    CHECK(!cfg_pbtxt_parse(bad, sizeof bad - 1, "f", msg, all_types, arena, buf, cap));
    CHECK_EQ_U64(strlen(buf), cap - 1 < 22 ? cap - 1 : strlen(buf));
    CHECK(buf[cap] == '#');
  }
  CHECK(!cfg_pbtxt_parse(bad, sizeof bad - 1, NULL, msg, all_types, arena, NULL, 0));
  CHECK(!cfg_pbtxt_parse(bad, sizeof bad - 1, NULL, msg, all_types, arena, err,
                         sizeof err));
  CHECK_STREQ(err, "<text>:1:1: unknown field 'nope' in message nereid.test.AllTypes");
  CHECK(cfg_pbtxt_parse(NULL, 0, "f", msg, all_types, arena, err, sizeof err));
  CHECK_STREQ(err, "");
  /* NUL bytes are input like any other: an error, not the end. */
  const char nul[] = "i32: 1\0i32: 2";
  CHECK(
      !cfg_pbtxt_parse(nul, sizeof nul - 1, "f", msg, all_types, arena, err, sizeof err));
  CHECK_STREQ(err, "f:1:7: control character in text");
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Big inputs of each repetitive shape finish, in time linear in size (the
 * run time is printed, not asserted, to stay robust on slow machines). */
static void test_large_inputs(void) {
  enum { N = 200000 };
  static const char *const shapes[] = {"1, ", "'ab' ", "{key:'k' value:1}, ",
                                       "r_child{} "};
  static const char *const heads[] = {"r_i32: [", "str: ", "m_str_i32 [", ""};
  for (size_t s = 0; s < 4; s++) {
    size_t unit = strlen(shapes[s]), head = strlen(heads[s]);
    char *text = malloc(head + unit * N + 8);
    memcpy(text, heads[s], head);
    size_t o = head;
    for (int i = 0; i < N; i++, o += unit) memcpy(text + o, shapes[s], unit);
    if (s == 0) o += (size_t)sprintf(text + o, "2]");
    if (s == 2) o += (size_t)sprintf(text + o, "{}]");
    double t0 = seconds();
    nereid_test_AllTypes *m = parse_as(text, o, all_types);
    printf("  large input %zu: %zu bytes in %.3fs\n", s, o, seconds() - t0);
    CHECK(m != NULL);
    size_t n = 0;
    if (m && s == 0) {
      nereid_test_AllTypes_r_i32(m, &n);
      CHECK_EQ_U64(n, N + 1);
    }
    if (m && s == 1) CHECK_EQ_U64(nereid_test_AllTypes_str(m).size, 2 * N);
    if (m && s == 2) CHECK_EQ_U64(nereid_test_AllTypes_m_str_i32_size(m), 2);
    if (m && s == 3) {
      nereid_test_AllTypes_r_child(m, &n);
      CHECK_EQ_U64(n, N);
    }
    free(text);
  }
}

static void test_cleanup(void) {
  if (arena) upb_Arena_Free(arena);
  if (pool) upb_DefPool_Free(pool);
  arena = NULL;
  pool = NULL;
}

UNIT_MAIN("pbtxt", UNIT_CASE(test_scalars), UNIT_CASE(test_floats),
          UNIT_CASE(test_integers), UNIT_CASE(test_strings), UNIT_CASE(test_enums),
          UNIT_CASE(test_messages_maps_oneofs), UNIT_CASE(test_merge_into_existing),
          UNIT_CASE(test_depth_limit), UNIT_CASE(test_truncated_inputs),
          UNIT_CASE(test_error_buffer), UNIT_CASE(test_large_inputs),
          UNIT_CASE(test_cleanup))
