/* Load and unload bodies of the HTTP repository endpoints
 * (srv_http_load_parse, srv_http_unload_parse): what they give
 * srv_load_override_t, and hostile bodies: not JSON, wrong types, keys
 * given twice, bad base64, paths that leave the model folder, too many
 * parameters, too many bytes. One thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/views/http_views.h"
#include "test/unit/unit.h"

static upb_StringView sv(const char *s) { return upb_StringView_FromString(s); }

/* Parses `body` for model "m" and checks the status's text and code. */
static void expect_refused(const char *body, int code, const char *why) {
  upb_Arena *a = upb_Arena_New();
  srv_load_override_t o;
  int http = 0;
  srv_status_t *st = srv_http_load_parse(sv("m"), body, strlen(body), a, &o, &http);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(http, code);
  CHECK_STREQ(srv_status_message(st), why);
  CHECK(o.config_json == NULL && o.files == NULL && o.file_count == 0);
  srv_status_free(st);
  upb_Arena_Free(a);
}

static void load_overrides(void) {
  upb_Arena *a = upb_Arena_New();
  srv_load_override_t o;
  int http = 0;
  CHECK(srv_http_load_parse(sv("m"), "", 0, a, &o, &http) == NULL);
  CHECK(http == 200 && o.config_json == NULL && o.file_count == 0);
  const char *none = "{\"parameters\": {}}";
  CHECK(srv_http_load_parse(sv("m"), none, strlen(none), a, &o, &http) == NULL);
  CHECK(o.config_json == NULL && o.file_count == 0);
  const char *body =
      "{\"parameters\": {\"config\": \"{\\\"backend\\\": \\\"identity\\\"}\","
      " \"file:./1//model.bin\": \"aGVsbG8=\", \"file:0/a\": \"\"}}";
  srv_status_t *st = srv_http_load_parse(sv("m"), body, strlen(body), a, &o, &http);
  REQUIRE(st == NULL);
  CHECK_EQ_U64(http, 200);
  REQUIRE(o.config_json != NULL);
  CHECK(o.config_json_len == 23 &&
        memcmp(o.config_json, "{\"backend\": \"identity\"}", 23) == 0);
  REQUIRE(o.file_count == 2); /* sorted by normalized path */
  CHECK_STREQ(o.files[0].path, "0/a");
  CHECK_EQ_U64(o.files[0].size, 0);
  CHECK_STREQ(o.files[1].path, "1/model.bin");
  CHECK(o.files[1].size == 5 && memcmp(o.files[1].data, "hello", 5) == 0);
  upb_Arena_Free(a);
}

static void load_refusals(void) {
  expect_refused("{\"parameters\": ", 400,
                 "failed to parse the request JSON buffer: unexpected token near end "
                 "of file at line 1 column 15");
  expect_refused("[1]", 400, "the request JSON must be an object");
  expect_refused("{\"parameters\": []}", 400,
                 "failed to load 'm': 'parameters' must be a JSON object");
  expect_refused("{\"parameters\": {\"config\": {\"backend\": \"x\"}}}", 400,
                 "failed to load 'm': load parameter 'config' must be a JSON string");
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"file:1/a\": 12}}", 400,
                 "failed to load 'm': load parameter 'file:1/a' must be a JSON string");
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"file:1/a\": \"a*==\"}}", 400,
                 "failed to load 'm': the value of load parameter 'file:1/a' is not "
                 "valid base64");
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"file:1/a\": \"aGVsbG8\"}}", 400,
                 "failed to load 'm': the value of load parameter 'file:1/a' is not "
                 "valid base64");
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"file:1/a\": \"YQ==YQ==\"}}",
                 400,
                 "failed to load 'm': the value of load parameter 'file:1/a' is not "
                 "valid base64");
  /* Files that cannot make a model folder: Triton's failed poll. */
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"file:../x\": \"\"}}", 500,
                 "failed to load 'm', failed to poll from model repository");
  expect_refused(
      "{\"parameters\": {\"config\": \"{}\", \"file:/etc/passwd\": \"\"}}", 500,
      "failed to load 'm', failed to poll from model repository");
  expect_refused(
      "{\"parameters\": {\"config\": \"{}\", \"file:1/../../x\": \"\"}}", 500,
      "failed to load 'm', failed to poll from model repository");
  expect_refused(
      "{\"parameters\": {\"file:1/a\": \"\"}}", 500,
      "failed to load 'm', failed to poll from model repository");
  expect_refused(
      "{\"parameters\": {\"config\": \"{}\", \"file:1/a\": \"\", \"file:1//a\": "
      "\"\"}}",
      500, "failed to load 'm', failed to poll from model repository");
  expect_refused("{\"parameters\": {\"colour\": \"red\"}}", 400,
                 "failed to load 'm': unrecognized load parameter 'colour'.");
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"config\": \"{}\"}}", 400,
                 "failed to parse the request JSON buffer: duplicate object key near "
                 "'\"config\"' at line 1 column 40");
  expect_refused("{\"parameters\": {\"config\": \"{}\", \"file:a\\u0000b\": \"\"}}", 400,
                 "failed to parse the request JSON buffer: NUL byte in object key not "
                 "supported near '\"file:a\\u0000b\"' at line 1 column 47");
}

static void load_limits(void) {
  /* The whole body first: nothing of it is read past the bound. */
  upb_Arena *a = upb_Arena_New();
  srv_load_override_t o;
  int http;
  srv_status_t *st =
      srv_http_load_parse(sv("m"), "{}", SRV_HTTP_REPOSITORY_BODY_MAX + 1, a, &o, &http);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(http, 400);
  CHECK(strstr(srv_status_message(st), "more than the") != NULL);
  srv_status_free(st);
  /* More parameters than files a load may have, before any is decoded. */
  size_t n = SRV_LOAD_OVERRIDE_FILES_MAX + 2, cap = 64 + n * 32, len = 0;
  char *body = malloc(cap);
  len += (size_t)snprintf(body + len, cap - len, "{\"parameters\": {\"config\": \"{}\"");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(body + len, cap - len, ", \"file:1/f%zu\": \"\"", i);
  len += (size_t)snprintf(body + len, cap - len, "}}");
  st = srv_http_load_parse(sv("m"), body, len, a, &o, &http);
  REQUIRE(st != NULL);
  CHECK_STREQ(
      srv_status_message(st),
      "failed to load 'm': the load parameters give more than 1024 files, the most "
      "one load may have");
  srv_status_free(st);
  free(body);
  /* A path deeper than the limit: load_override.c's text. */
  char deep[512] = "{\"parameters\": {\"config\": \"{}\", \"file:";
  for (int i = 0; i < SRV_LOAD_OVERRIDE_DEPTH_MAX; i++) strcat(deep, "d/");
  strcat(deep, "f\": \"\"}}");
  st = srv_http_load_parse(sv("m"), deep, strlen(deep), a, &o, &http);
  REQUIRE(st != NULL);
  CHECK(strstr(srv_status_message(st), "components, more than the 16 allowed") != NULL);
  srv_status_free(st);
  upb_Arena_Free(a);
}

static void unload_bodies(void) {
  bool ud = true;
  int http = 0;
  CHECK(srv_http_unload_parse(sv("m"), "", 0, &ud, &http) == NULL);
  CHECK(!ud && http == 200);
  const char *yes = "{\"parameters\": {\"unload_dependents\": true}}";
  CHECK(srv_http_unload_parse(sv("m"), yes, strlen(yes), &ud, &http) == NULL);
  CHECK(ud);
  const char *no = "{\"parameters\": {\"unload_dependents\": false, \"other\": 1}}";
  CHECK(srv_http_unload_parse(sv("m"), no, strlen(no), &ud, &http) == NULL);
  CHECK(!ud);
  const char *bad[][2] = {
      {"{\"parameters\": {\"unload_dependents\": \"true\"}}",
       "Unable to parse 'unload_dependents': attempt to access JSON non-boolean as "
       "boolean"},
      {"{\"parameters\": true}",
       "failed to unload 'm': 'parameters' must be a JSON object"},
      {"true", "the request JSON must be an object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ud = true;
    srv_status_t *st =
        srv_http_unload_parse(sv("m"), bad[i][0], strlen(bad[i][0]), &ud, &http);
    REQUIRE(st != NULL);
    CHECK(!ud && http == 400);
    CHECK_STREQ(srv_status_message(st), bad[i][1]);
    srv_status_free(st);
  }
  srv_status_t *st =
      srv_http_unload_parse(sv("m"), "{}", SRV_HTTP_REPOSITORY_BODY_MAX + 1, &ud, &http);
  REQUIRE(st != NULL);
  CHECK(strncmp(srv_status_message(st), "failed to unload 'm': the request body has ",
                43) == 0);
  srv_status_free(st);
  st = srv_http_unload_parse(sv("m"), "{\"a\":", 5, &ud, &http);
  REQUIRE(st != NULL);
  CHECK(strncmp(srv_status_message(st),
                "failed to parse the request JSON buffer: ", 41) == 0);
  srv_status_free(st);
}

UNIT_MAIN("http_repository", UNIT_CASE(load_overrides), UNIT_CASE(load_refusals),
          UNIT_CASE(load_limits), UNIT_CASE(unload_bodies))
