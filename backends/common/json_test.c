/* The JSON reader: values, escapes, numbers, the model-config shapes our
 * backends read, and rejection (with line/column) of malformed input. */
#include "backends/common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

static bk_json_doc_t *parse(const char *text) {
  char err[128];
  bk_json_doc_t *doc = bk_json_parse(text, strlen(text), err, sizeof err);
  if (doc == NULL) fprintf(stderr, "  parse error: %s\n", err);
  return doc;
}

/* Returns whether `text` is rejected, with the message in err. */
static bool rejects(const char *text, char *err, size_t len) {
  bk_json_doc_t *doc = bk_json_parse(text, strlen(text), err, len);
  bk_json_doc_free(doc);
  return doc == NULL && err[0] != '\0';
}

static void scalars(void) {
  bk_json_doc_t *doc = parse(" {\"t\": true, \"f\": false, \"n\": null, \"s\": \"x\"} ");
  REQUIRE(doc != NULL);
  const bk_json_t *root = bk_json_root(doc);
  bool b = false;
  CHECK(bk_json_type(root) == BK_JSON_OBJECT);
  CHECK(bk_json_bool(bk_json_get(root, "t"), &b) && b);
  CHECK(bk_json_bool(bk_json_get(root, "f"), &b) && !b);
  CHECK(bk_json_type(bk_json_get(root, "n")) == BK_JSON_NULL);
  CHECK_STREQ(bk_json_str(bk_json_get(root, "s"), NULL), "x");
  CHECK(bk_json_get(root, "missing") == NULL);
  CHECK(bk_json_type(bk_json_get(root, "missing")) == BK_JSON_ABSENT);
  CHECK(!bk_json_bool(bk_json_get(root, "s"), &b));
  bk_json_doc_free(doc);
}

static void numbers(void) {
  bk_json_doc_t *doc = parse(
      "[0, -7, 9223372036854775807, -9223372036854775808, 9223372036854775808, 1.5, "
      "-2e3, \"42\", \"-1\", \"4x\"]");
  REQUIRE(doc != NULL);
  const bk_json_t *a = bk_json_root(doc);
  int64_t i = 0;
  double d = 0;
  CHECK(bk_json_count(a) == 10);
  CHECK(bk_json_int(bk_json_at(a, 0), &i) && i == 0);
  CHECK(bk_json_int(bk_json_at(a, 1), &i) && i == -7);
  CHECK(bk_json_int(bk_json_at(a, 2), &i) && i == INT64_MAX);
  CHECK(bk_json_int(bk_json_at(a, 3), &i) && i == INT64_MIN);
  CHECK(!bk_json_int(bk_json_at(a, 4), &i)); /* too big for int64 */
  CHECK(bk_json_num(bk_json_at(a, 4), &d) && d > 9.2e18);
  CHECK(!bk_json_int(bk_json_at(a, 5), &i));
  CHECK(bk_json_num(bk_json_at(a, 5), &d) && d == 1.5);
  CHECK(bk_json_num(bk_json_at(a, 6), &d) && d == -2000.0);
  CHECK(bk_json_int(bk_json_at(a, 7), &i) && i == 42); /* int64 printed as string */
  CHECK(bk_json_int(bk_json_at(a, 8), &i) && i == -1);
  CHECK(!bk_json_int(bk_json_at(a, 9), &i));
  CHECK(!bk_json_num(bk_json_at(a, 7), &d));
  bk_json_doc_free(doc);
}

static void string_escapes(void) {
  bk_json_doc_t *doc = parse(
      "[\"a\\\"b\\\\c\\/d\\n\\t\", \"\\u00e9\\u20ac\", \"\\ud83d\\ude00\", "
      "\"x\\u0000y\"]");
  REQUIRE(doc != NULL);
  const bk_json_t *a = bk_json_root(doc);
  size_t len = 0;
  CHECK_STREQ(bk_json_str(bk_json_at(a, 0), NULL), "a\"b\\c/d\n\t");
  CHECK_STREQ(bk_json_str(bk_json_at(a, 1), NULL), "\xc3\xa9\xe2\x82\xac");
  CHECK_STREQ(bk_json_str(bk_json_at(a, 2), NULL), "\xf0\x9f\x98\x80");
  const char *s = bk_json_str(bk_json_at(a, 3), &len);
  CHECK(s != NULL && len == 3 && memcmp(s, "x\0y", 3) == 0);
  bk_json_doc_free(doc);
}

static void containers(void) {
  bk_json_doc_t *doc = parse("{\"a\": [], \"o\": {}, \"k\": [1, [2, [3]]], \"a\": 5}");
  REQUIRE(doc != NULL);
  const bk_json_t *root = bk_json_root(doc);
  CHECK(bk_json_count(root) == 4);
  CHECK_STREQ(bk_json_key_at(root, 2), "k");
  CHECK(bk_json_type(bk_json_get(root, "a")) == BK_JSON_ARRAY); /* first wins */
  CHECK(bk_json_count(bk_json_get(root, "a")) == 0);
  CHECK(bk_json_count(bk_json_get(root, "o")) == 0);
  int64_t i = 0;
  const bk_json_t *k = bk_json_get(root, "k");
  CHECK(bk_json_int(bk_json_at(bk_json_at(bk_json_at(k, 1), 1), 0), &i) && i == 3);
  CHECK(bk_json_at(k, 2) == NULL);
  CHECK(bk_json_key_at(k, 0) == NULL);
  CHECK(bk_json_count(bk_json_at(k, 0)) == 0);
  bk_json_doc_free(doc);
}

/* The shape of what TRITONBACKEND_ModelConfig returns for `simple`. */
static void model_config_document(void) {
  const char *text =
      "{\"name\":\"simple\",\"platform\":\"\",\"backend\":\"addsub\","
      "\"max_batch_size\":8,\"input\":[{\"name\":\"INPUT0\",\"data_type\":"
      "\"TYPE_INT32\",\"format\":\"FORMAT_NONE\",\"dims\":[16],\"is_shape_tensor\":"
      "false}],\"parameters\":{\"k\":{\"string_value\":\"v\"}}}";
  bk_json_doc_t *doc = parse(text);
  REQUIRE(doc != NULL);
  const bk_json_t *root = bk_json_root(doc);
  const bk_json_t *in0 = bk_json_at(bk_json_get(root, "input"), 0);
  int64_t dim = 0;
  CHECK_STREQ(bk_json_str(bk_json_get(in0, "name"), NULL), "INPUT0");
  CHECK(bk_json_int(bk_json_at(bk_json_get(in0, "dims"), 0), &dim) && dim == 16);
  CHECK_STREQ(bk_json_str(bk_json_get(bk_json_get(bk_json_get(root, "parameters"), "k"),
                                      "string_value"),
                          NULL),
              "v");
  bk_json_doc_free(doc);
}

static void not_terminated_input(void) {
  /* The reader takes a length: text beyond it is not looked at. */
  const char text[] = "[1,2]garbage";
  char err[128];
  bk_json_doc_t *doc = bk_json_parse(text, 5, err, sizeof err);
  CHECK(doc != NULL);
  CHECK(bk_json_count(bk_json_root(doc)) == 2);
  bk_json_doc_free(doc);
}

static void malformed_is_rejected(void) {
  static const char *bad[] = {
      "",         "{",         "[1,]",        "{\"a\":1,}",   "{\"a\" 1}", "[01]",
      "[1.]",     "[-]",       "[1e]",        "tru",          "nul",       "\"abc",
      "\"\\x\"",  "\"\\u12\"", "\"\\udc00\"", "\"\\ud800x\"", "[1] 2",     "{a:1}",
      "\"a\tb\"", "[\"\\",     "'x'",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char err[128];
    bool r = rejects(bad[i], err, sizeof err);
    if (!r) fprintf(stderr, "  accepted: %s\n", bad[i]);
    CHECK(r);
  }
}

static void error_has_position(void) {
  char err[128];
  CHECK(rejects("{\n  \"a\": [1,\n   2 3]\n}", err, sizeof err));
  CHECK(strstr(err, "line 3 column 6") != NULL);
  CHECK(rejects("[1, 2", err, sizeof err));
  CHECK(strstr(err, "line 1 column 6") != NULL);
}

static void depth_is_limited(void) {
  char deep[2 * BK_JSON_MAX_DEPTH + 8], err[128];
  size_t n = 0;
  for (int i = 0; i < BK_JSON_MAX_DEPTH + 1; i++) deep[n++] = '[';
  for (int i = 0; i < BK_JSON_MAX_DEPTH + 1; i++) deep[n++] = ']';
  deep[n] = '\0';
  CHECK(rejects(deep, err, sizeof err));
  CHECK(strstr(err, "deep") != NULL);
  /* One level less is fine. */
  bk_json_doc_t *doc = bk_json_parse(deep + 1, n - 2, err, sizeof err);
  CHECK(doc != NULL);
  bk_json_doc_free(doc);
}

/* Arena growth: a document much larger than one arena block. */
static void large_document(void) {
  size_t count = 20000, cap = count * 16 + 16, n = 0;
  char *text = malloc(cap);
  REQUIRE(text != NULL);
  text[n++] = '[';
  for (size_t i = 0; i < count; i++) {
    n += (size_t)snprintf(text + n, cap - n, "%s\"s%zu\"", i ? "," : "", i);
  }
  text[n++] = ']';
  char err[128];
  bk_json_doc_t *doc = bk_json_parse(text, n, err, sizeof err);
  free(text);
  REQUIRE(doc != NULL);
  CHECK(bk_json_count(bk_json_root(doc)) == count);
  CHECK_STREQ(bk_json_str(bk_json_at(bk_json_root(doc), count - 1), NULL), "s19999");
  bk_json_doc_free(doc);
}

static void null_is_safe(void) {
  char err[64];
  CHECK(bk_json_parse(NULL, 0, err, sizeof err) == NULL);
  CHECK(bk_json_root(NULL) == NULL);
  CHECK(bk_json_count(NULL) == 0);
  CHECK(bk_json_str(NULL, NULL) == NULL);
  CHECK(bk_json_get(NULL, "x") == NULL);
  bk_json_doc_free(NULL);
  /* A zero-length error buffer is never written. */
  CHECK(bk_json_parse("[", 1, NULL, 0) == NULL);
}

UNIT_MAIN("json", UNIT_CASE(scalars), UNIT_CASE(numbers), UNIT_CASE(string_escapes),
          UNIT_CASE(containers), UNIT_CASE(model_config_document),
          UNIT_CASE(not_terminated_input), UNIT_CASE(malformed_is_rejected),
          UNIT_CASE(error_has_position), UNIT_CASE(depth_is_limited),
          UNIT_CASE(large_document), UNIT_CASE(null_is_safe))
