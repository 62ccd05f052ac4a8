/* The JSON reader: values, escapes, nesting, and errors with positions. */
#include <string.h>

#include "test/unit/unit.h"
#include "tools/perf/json.h"

static bool parse(const char *text, perf_json_t *j, perf_err_t *err) {
  return perf_json_parse(text, strlen(text), j, err);
}

static void values(void) {
  perf_json_t j;
  perf_err_t err;
  REQUIRE(parse(" {\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"x\"}} ", &j,
                &err));
  CHECK(j.type == PERF_JSON_OBJECT && j.n == 2);
  const perf_json_t *a = perf_json_get(&j, "a");
  REQUIRE(a != NULL && a->type == PERF_JSON_ARRAY && a->n == 5);
  CHECK(a->items[0].type == PERF_JSON_NUMBER && a->items[0].num_len == 1);
  CHECK(a->items[1].num_len == 6 && memcmp(a->items[1].num, "-2.5e3", 6) == 0);
  CHECK(a->items[2].type == PERF_JSON_BOOL && a->items[2].boolean);
  CHECK(a->items[3].type == PERF_JSON_BOOL && !a->items[3].boolean);
  CHECK(a->items[4].type == PERF_JSON_NULL);
  const perf_json_t *c = perf_json_get(perf_json_get(&j, "b"), "c");
  REQUIRE(c != NULL);
  CHECK_STREQ(c->str, "x");
  CHECK(perf_json_get(&j, "nope") == NULL);
  perf_json_free(&j);
}

static void string_escapes(void) {
  perf_json_t j;
  perf_err_t err;
  REQUIRE(parse("\"q\\\" b\\\\ s\\/ n\\n u\\u00e9 pair\\ud83d\\ude00 nul\\u0000.\"", &j,
                &err));
  const char want[] = "q\" b\\ s/ n\n u\xc3\xa9 pair\xf0\x9f\x98\x80 nul\0.";
  CHECK_EQ_U64(j.str_len, sizeof want - 1);
  CHECK(memcmp(j.str, want, sizeof want - 1) == 0);
  perf_json_free(&j);
}

static void errors_name_the_position(void) {
  perf_json_t j;
  perf_err_t err;
  CHECK(!parse("{\"a\": [1, 2,\n  }", &j, &err));
  CHECK(strstr(err.msg, "line 2") != NULL);
  CHECK(!parse("[1] x", &j, &err));
  CHECK(strstr(err.msg, "after the document") != NULL);
  CHECK(!parse("\"abc", &j, &err));
  CHECK(!parse("{\"a\" 1}", &j, &err));
  CHECK(!parse("tru", &j, &err));
  CHECK(!parse("\"\\ud800\"", &j, &err));
  CHECK(!parse("", &j, &err));
  char deep[200];
  memset(deep, '[', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  CHECK(!parse(deep, &j, &err));
  CHECK(strstr(err.msg, "deeply") != NULL);
}

UNIT_MAIN("json", UNIT_CASE(values), UNIT_CASE(string_escapes),
          UNIT_CASE(errors_name_the_position))
