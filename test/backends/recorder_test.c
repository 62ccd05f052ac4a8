/* The recorder test backend: the lines it records for a whole lifecycle,
 * failures at each kind of stage, delays, relative paths, backend config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/backends/testing.h"
#include "test/unit/unit.h"

#define PAIR_TENSORS                                                              \
  "\"max_batch_size\":4,"                                                         \
  "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]," \
  "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]"

/* A config with the given extra parameters (a JSON fragment). */
static char *config(const char *params) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"name\":\"rec\",\"backend\":\"recorder\"," PAIR_TENSORS
           ",\"parameters\":{%s}}",
           params);
  return buf;
}

/* A fresh record file path under the test's temporary directory. */
static const char *record_path(const char *name) {
  static char path[512];
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(path, sizeof path, "%s/%s", dir ? dir : "/tmp", name);
  unlink(path);
  return path;
}

static bool run_one(mock_loaded_t *m, mock_call_t *call) {
  int32_t data[3] = {1, 2, 3};
  int64_t shape[2] = {1, 3};
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, data, sizeof data,
                     2);
  mock_request_output(r, "OUTPUT0");
  return bt_execute(m, &r, 1);
}

/* Whether the lines of `text` start with these events, in order. */
static bool has_events(const char *text, const char *const *events, size_t count) {
  const char *p = text;
  for (size_t i = 0; i < count; i++) {
    size_t n = strlen(events[i]);
    if (p == NULL || strncmp(p, events[i], n) != 0 || p[n] != ' ') {
      fprintf(stderr, "  expected line %zu to start with '%s' in:\n%s", i, events[i],
              text);
      return false;
    }
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return p != NULL && *p == '\0';
}

static void records_the_whole_lifecycle(void) {
  const char *path = record_path("lifecycle.log");
  char params[512];
  snprintf(params, sizeof params, "\"record_file\":{\"string_value\":\"%s\"}", path);
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec", config(params)));
  mock_call_t *call = mock_call_new();
  CHECK(run_one(&m, call));
  mock_sent_t s = mock_call_sent(call, 0);
  const struct TRITONBACKEND_Output *out = mock_sent_output(&s, "OUTPUT0");
  CHECK(out != NULL && out->size == 12 && ((const int32_t *)out->data)[2] == 3);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  static const char *const events[] = {
      "initialize",     "model_initialize", "model_instance_initialize",
      "execute_start",  "execute_end",      "model_instance_finalize",
      "model_finalize", "finalize"};
  CHECK(has_events(text, events, 8));
  CHECK(strstr(text,
               "model_instance_initialize model=rec version=1 instance=rec_0 "
               "kind=CPU device=0") != NULL);
  CHECK(
      strstr(text, "execute_start model=rec version=1 instance=rec_0 requests=1 t_ns=") !=
      NULL);
  CHECK(strstr(text, "initialize backend=recorder tid=") == text);
  free(text);
}

static void fails_at_model_initialize(void) {
  const char *path = record_path("fail_model.log");
  char params[512];
  snprintf(params, sizeof params,
           "\"record_file\":{\"string_value\":\"%s\"},"
           "\"fail_at\":{\"string_value\":\"model_initialize\"}",
           path);
  mock_loaded_t m;
  TRITONSERVER_Error *err =
      mock_load(&m, LIB_RECORDER, "recorder", NULL, "rec", config(params));
  CHECK(err != NULL && err->code == TRITONSERVER_ERROR_INTERNAL);
  CHECK(strstr(
      mock_take_error(err),
      "recorder: failing at model_initialize as configured (model=rec version=1)"));
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  static const char *const events[] = {"initialize", "model_initialize", "finalize"};
  CHECK(has_events(text, events, 3));
  CHECK(strstr(text, "model_initialize model=rec version=1 tid=") != NULL);
  CHECK(strstr(text, " fail=1\n") != NULL);
  free(text);
}

/* fail_at execute: Execute returns an error and leaves the requests to the
 * server, which here is the test. */
static void fails_at_execute(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec",
                  config("\"fail_at\":{\"string_value\":\"execute\"}")));
  mock_call_t *call = mock_call_new();
  int64_t shape[2] = {1, 0};
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, NULL, 0, 1);
  TRITONSERVER_Error *err = m.lib.execute(&m.instance, &r, 1);
  CHECK(strstr(mock_take_error(err), "failing at execute") != NULL);
  CHECK(!call->released && mock_call_sent_count(call) == 0);
  CHECK(TRITONBACKEND_RequestRelease(r, TRITONSERVER_REQUEST_RELEASE_ALL) == NULL);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void fails_each_request(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec",
                  config("\"fail_at\":{\"string_value\":\"request\"}")));
  mock_call_t *call = mock_call_new();
  CHECK(run_one(&m, call));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error != NULL && strstr(s.error, "failing at request") != NULL);
  CHECK(call->released && atomic_load(&m.instance.stats.fail) == 1);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void finalize_failures_are_reported(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec",
                  config("\"fail_at\":{\"string_value\":\"model_instance_finalize\"}")));
  CHECK(mock_unload(&m) == 1);
}

/* The t_ns of the first line starting with `event`; 0 when missing. */
static unsigned long long t_ns_of(const char *text, const char *event) {
  const char *line = strstr(text, event);
  const char *t = line ? strstr(line, "t_ns=") : NULL;
  return t ? strtoull(t + 5, NULL, 10) : 0;
}

/* A relative record_file lands under $TEST_TMPDIR; execute_delay_ms shows
 * between execute_start and execute_end. */
static void execute_delay_and_relative_path(void) {
  char path[512];
  snprintf(path, sizeof path, "%s", record_path("relative.log"));
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec",
                  config("\"record_file\":{\"string_value\":\"relative.log\"},"
                         "\"execute_delay_ms\":{\"string_value\":\"50\"}")));
  mock_call_t *call = mock_call_new();
  CHECK(run_one(&m, call));
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  unsigned long long start = t_ns_of(text, "execute_start"),
                     end = t_ns_of(text, "execute_end");
  CHECK(start != 0 && end >= start + 50000000ull);
  free(text);
}

static void bad_settings_fail_the_load(void) {
  mock_loaded_t m;
  TRITONSERVER_Error *err = mock_load(&m, LIB_RECORDER, "recorder", NULL, "rec",
                                      config("\"fail_at\":{\"string_value\":\"nope\"}"));
  CHECK(strstr(mock_take_error(err), "unknown fail_at stage 'nope'") != NULL);
  CHECK(mock_unload(&m) == 0);
  err = mock_load(&m, LIB_RECORDER, "recorder", NULL, "rec",
                  config("\"execute_delay_ms\":{\"string_value\":\"soon\"}"));
  CHECK(strstr(mock_take_error(err), "execute_delay_ms must be a number") != NULL);
  CHECK(mock_unload(&m) == 0);
}

/* --backend-config=recorder,fail_at=initialize,record_file=... */
static void backend_config_controls_initialize(void) {
  const char *path = record_path("backend.log");
  char backend_config[512];
  snprintf(backend_config, sizeof backend_config,
           "{\"cmdline\":{\"fail_at\":\"initialize\",\"record_file\":\"%s\"}}", path);
  mock_loaded_t m;
  TRITONSERVER_Error *err =
      mock_load(&m, LIB_RECORDER, "recorder", backend_config, "rec", config(""));
  CHECK(strstr(mock_take_error(err), "failing at initialize as configured (backend)"));
  CHECK(!m.backend_up);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  CHECK(text != NULL && strncmp(text, "initialize backend=recorder", 27) == 0 &&
        strstr(text, "fail=1\n") != NULL);
  free(text);
}

UNIT_MAIN("recorder", UNIT_CASE(records_the_whole_lifecycle),
          UNIT_CASE(fails_at_model_initialize), UNIT_CASE(fails_at_execute),
          UNIT_CASE(fails_each_request), UNIT_CASE(finalize_failures_are_reported),
          UNIT_CASE(execute_delay_and_relative_path),
          UNIT_CASE(bad_settings_fail_the_load),
          UNIT_CASE(backend_config_controls_initialize))
