/* The log settings endpoints as pure functions: GET and POST /v2/logging
 * bodies against golden text, LogSettings requests built with upb, Triton's
 * texts for bad values, and refused updates that change nothing. Main
 * thread. */
#include "server/views/log_view.h"

#include <jansson.h>
#include <string.h>

#include "server/views/http_views.h"
#include "test/unit/unit.h"

static void reset(void) {
  srv_log_set_info(true);
  srv_log_set_warning(true);
  srv_log_set_error(true);
  srv_log_set_verbose(0);
  srv_log_set_format(SRV_LOG_FORMAT_DEFAULT);
}

static void http(bool post, const char *body, int code, const char *golden) {
  srv_http_answer_t a;
  srv_http_logging(post, body, body ? strlen(body) : 0, &a);
  CHECK_EQ_U64(a.code, code);
  REQUIRE(a.body != NULL);
  if (strcmp(a.body, golden) != 0) fprintf(stderr, "  got %s\n", a.body);
  CHECK_STREQ(a.body, golden);
  srv_http_answer_free(&a);
}

#define DEFAULTS                                                                \
  "{\"log_file\":\"\",\"log_info\":true,\"log_warning\":true,\"log_error\":true," \
  "\"log_verbose_level\":0,\"log_format\":\"default\"}"

static void http_get_and_post(void) {
  reset();
  http(false, NULL, 200, DEFAULTS);
  http(true, "", 200, DEFAULTS);
  http(true,
       "{\"log_info\":false,\"log_warning\":false,\"log_error\":false,"
       "\"log_verbose_level\":3,\"log_format\":\"ISO8601\",\"unknown\":1,"
       "\"log_file\":null}",
       200,
       "{\"log_file\":\"\",\"log_info\":false,\"log_warning\":false,\"log_error\":false,"
       "\"log_verbose_level\":3,\"log_format\":\"ISO8601\"}");
  CHECK(!srv_log_is_on(SRV_LOG_INFO) && !srv_log_is_on(SRV_LOG_ERROR));
  CHECK_EQ_U64(srv_log_verbose_level(), 3);
  CHECK(srv_log_format() == SRV_LOG_FORMAT_ISO8601);
  /* Nulls change nothing, as in Triton. */
  http(true, "{\"log_info\":null}", 200,
       "{\"log_file\":\"\",\"log_info\":false,\"log_warning\":false,\"log_error\":false,"
       "\"log_verbose_level\":3,\"log_format\":\"ISO8601\"}");
  reset();
}

static void http_bad_values_change_nothing(void) {
  reset();
  /* The bad value comes last: what precedes it must not apply either. */
  http(true, "{\"log_verbose_level\":2,\"log_info\":\"false\"}", 400,
       "{\"error\":\"attempt to access JSON non-boolean as boolean\"}");
  http(true, "{\"log_info\":false,\"log_verbose_level\":-1}", 400,
       "{\"error\":\"attempt to access JSON non-unsigned-integer as "
       "unsigned-integer\"}");
  http(true, "{\"log_verbose_level\":1.5}", 400,
       "{\"error\":\"attempt to access JSON non-unsigned-integer as "
       "unsigned-integer\"}");
  http(true, "{\"log_verbose_level\":4294967296}", 400,
       "{\"error\":\"log_verbose_level must be at most 2147483647, got 4294967296\"}");
  http(true, "{\"log_info\":false,\"log_format\":7}", 400,
       "{\"error\":\"attempt to access JSON non-string as string\"}");
  http(true, "{\"log_info\":false,\"log_format\":\"iso8601\"}", 400,
       "{\"error\":\"invalid argument for --log_format, got: iso8601\"}");
  http(true, "{\"log_format\":\"ISO8601\\u0000x\"}", 400,
       "{\"error\":\"failed to parse the request JSON buffer: \\\\u0000 is not allowed "
       "without JSON_ALLOW_NUL near '\\\"ISO8601\\\\u0000x\\\"' at line 1 column 30\"}");
  /* Only the operator chooses where the server writes. */
  http(true, "{\"log_info\":false,\"log_file\":\"/tmp/x.log\"}", 501,
       "{\"error\":\"log file location can not be updated through network "
       "protocol\"}");
  http(true, "{\"log_file\":3}", 400,
       "{\"error\":\"attempt to access JSON non-string as string\"}");
  http(true, "[1]", 400,
       "{\"error\":\"the request JSON must be an object\"}");
  http(false, NULL, 200, DEFAULTS);
  char big[SRV_HTTP_LOGGING_BODY_MAX + 2];
  memset(big, ' ', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  http(true, big, 400, "{\"error\":\"log settings body is 65537 bytes, more than 65536\"}");
}

/* ---- gRPC ---------------------------------------------------------------- */

typedef inference_LogSettingsRequest_SettingValue value_t;

static void put(inference_LogSettingsRequest *req, const char *key, int kind,
                uint32_t n, const char *s, upb_Arena *a) {
  value_t *v = inference_LogSettingsRequest_SettingValue_new(a);
  if (kind == 1) inference_LogSettingsRequest_SettingValue_set_bool_param(v, n != 0);
  if (kind == 2) inference_LogSettingsRequest_SettingValue_set_uint32_param(v, n);
  if (kind == 3)
    inference_LogSettingsRequest_SettingValue_set_string_param(
        v, upb_StringView_FromString(s));
  inference_LogSettingsRequest_settings_set(req, upb_StringView_FromString(key), v, a);
}

static const inference_LogSettingsResponse_SettingValue *got(
    const inference_LogSettingsResponse *r, const char *key) {
  inference_LogSettingsResponse_SettingValue *v = NULL;
  bool found =
      inference_LogSettingsResponse_settings_get(r, upb_StringView_FromString(key), &v);
  CHECK(found && v != NULL);
  if (v == NULL) v = inference_LogSettingsResponse_SettingValue_new(upb_Arena_New());
  return v;
}

static void expect_error(inference_LogSettingsRequest *req, upb_Arena *a,
                         grpc_status_code code, const char *message) {
  inference_LogSettingsResponse *reply;
  srv_status_t *st = srv_view_log_settings(req, a, &reply);
  REQUIRE(st != NULL);
  CHECK(reply == NULL);
  CHECK_EQ_U64(srv_status_code(st), code);
  CHECK_STREQ(srv_status_message(st), message);
  srv_status_free(st);
}

static void grpc_settings(void) {
  reset();
  upb_Arena *a = upb_Arena_New();
  inference_LogSettingsRequest *req = inference_LogSettingsRequest_new(a);
  put(req, "log_warning", 1, 0, NULL, a);
  put(req, "log_verbose_level", 2, 2, NULL, a);
  put(req, "log_format", 3, 0, "ISO8601", a);
  put(req, "not_a_setting", 3, 0, "x", a);
  inference_LogSettingsResponse *reply;
  REQUIRE(srv_view_log_settings(req, a, &reply) == NULL);
  CHECK_EQ_U64(inference_LogSettingsResponse_settings_size(reply), 6);
  CHECK(inference_LogSettingsResponse_SettingValue_bool_param(got(reply, "log_info")));
  CHECK(!inference_LogSettingsResponse_SettingValue_bool_param(got(reply, "log_warning")));
  CHECK(inference_LogSettingsResponse_SettingValue_bool_param(got(reply, "log_error")));
  CHECK_EQ_U64(
      inference_LogSettingsResponse_SettingValue_uint32_param(got(reply, "log_verbose_level")),
      2);
  upb_StringView f =
      inference_LogSettingsResponse_SettingValue_string_param(got(reply, "log_format"));
  CHECK(f.size == 7 && memcmp(f.data, "ISO8601", 7) == 0);
  CHECK_EQ_U64(
      inference_LogSettingsResponse_SettingValue_string_param(got(reply, "log_file")).size,
      0);
  CHECK(!srv_log_is_on(SRV_LOG_WARNING));
  upb_Arena_Free(a);
  reset();
}

static void grpc_bad_values(void) {
  reset();
  const struct {
    const char *key;
    int kind;
    const char *message;
  } cases[] = {
      {"log_info", 3, "expect boolean for 'log_info'"},
      {"log_warning", 0, "expect boolean for 'log_warning'"},
      {"log_error", 2, "expect boolean for 'log_error'"},
      {"log_verbose_level", 1, "expect int32 for 'log_verbose_level'"},
      {"log_format", 1, "expect string for 'log_format'"},
      {"log_file", 1, "expect string for 'log_file'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    upb_Arena *a = upb_Arena_New();
    inference_LogSettingsRequest *req = inference_LogSettingsRequest_new(a);
    put(req, cases[i].key, cases[i].kind, 1, "1", a);
    /* Alongside a good setting that must not apply. */
    if (strcmp(cases[i].key, "log_verbose_level") != 0)
      put(req, "log_verbose_level", 2, 5, NULL, a);
    expect_error(req, a, GRPC_STATUS_INVALID_ARGUMENT, cases[i].message);
    upb_Arena_Free(a);
  }
  upb_Arena *a = upb_Arena_New();
  inference_LogSettingsRequest *req = inference_LogSettingsRequest_new(a);
  put(req, "log_format", 3, 0, "json", a);
  expect_error(req, a, GRPC_STATUS_INVALID_ARGUMENT,
               "invalid argument for log_format, got: json");
  /* A NUL inside the name must not pass for "ISO8601". */
  req = inference_LogSettingsRequest_new(a);
  value_t *v = inference_LogSettingsRequest_SettingValue_new(a);
  inference_LogSettingsRequest_SettingValue_set_string_param(
      v, upb_StringView_FromDataAndSize("ISO8601\0x", 9));
  inference_LogSettingsRequest_settings_set(req, upb_StringView_FromString("log_format"), v,
                                            a);
  expect_error(req, a, GRPC_STATUS_INVALID_ARGUMENT,
               "invalid argument for log_format, got: ISO8601");
  req = inference_LogSettingsRequest_new(a);
  put(req, "log_verbose_level", 2, 4000000000u, NULL, a);
  expect_error(req, a, GRPC_STATUS_INVALID_ARGUMENT,
               "log_verbose_level must be at most 2147483647, got 4000000000");
  req = inference_LogSettingsRequest_new(a);
  put(req, "log_file", 3, 0, "/etc/passwd", a);
  put(req, "log_info", 1, 0, NULL, a);
  expect_error(req, a, GRPC_STATUS_UNIMPLEMENTED,
               "log file location can not be updated through network protocol");
  upb_Arena_Free(a);
  CHECK_EQ_U64(srv_log_verbose_level(), 0);
  CHECK(srv_log_is_on(SRV_LOG_INFO));
}

UNIT_MAIN("log_view", UNIT_CASE(http_get_and_post),
          UNIT_CASE(http_bad_values_change_nothing), UNIT_CASE(grpc_settings),
          UNIT_CASE(grpc_bad_values))
