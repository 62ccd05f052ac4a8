/* The recorder test backend: the lines it records for a whole lifecycle,
 * failures at each kind of stage, delays, relative paths, backend config,
 * batch sizes and request ids, delays read from inputs, and requests
 * cancelled while Execute sleeps. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/common/clock.h"
#include "test/backends/testing.h"
#include "test/unit/unit.h"

#define PAIR_TENSORS                                                              \
  "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]," \
  "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]"

/* A config with this max_batch_size and extra parameters (a JSON fragment). */
static char *config_batching(int max_batch_size, const char *params) {
  static char buf[1024];
  snprintf(
      buf, sizeof buf,
      "{\"name\":\"rec\",\"backend\":\"recorder\",\"max_batch_size\":%d," PAIR_TENSORS
      ",\"parameters\":{%s}}",
      max_batch_size, params);
  return buf;
}

/* The usual config: max_batch_size 4. */
static char *config(const char *params) { return config_batching(4, params); }

/* A fresh record file path under the test's temporary directory. */
static const char *record_path(const char *name) {
  static char path[512];
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(path, sizeof path, "%s/%s", dir ? dir : "/tmp", name);
  unlink(path);
  return path;
}

/* Loads a recorder model (max_batch_size `max_batch`) whose record file is
 * record_path(file), which *path receives. */
static bool load_recording(mock_loaded_t *m, const char *file, int max_batch,
                           const char **path) {
  *path = record_path(file);
  char params[512];
  snprintf(params, sizeof params, "\"record_file\":{\"string_value\":\"%s\"}", *path);
  return bt_load(m, LIB_RECORDER, "recorder", "rec", config_batching(max_batch, params));
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
  mock_loaded_t m;
  const char *path;
  REQUIRE(load_recording(&m, "lifecycle.log", 4, &path));
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
  err = mock_load(&m, LIB_RECORDER, "recorder", NULL, "rec",
                  config("\"delay_from_input\":{\"string_value\":\"yes\"}"));
  CHECK(strstr(mock_take_error(err), "delay_from_input must be true or false") != NULL);
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

/* ---- batches, input delays, cancellation ---------------------------------- */

/* A request for `call` with an INT32 INPUT0 (data not copied), asking for
 * OUTPUT0; id NULL: the request has none. */
static TRITONBACKEND_Request *request_with(mock_call_t *call, const char *id,
                                           const int64_t *shape, uint32_t dims,
                                           const int32_t *data, size_t count) {
  TRITONBACKEND_Request *r = mock_request_new(call);
  if (id != NULL) mock_request_id(r, id);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, dims, data,
                     count * sizeof *data, 1);
  mock_request_output(r, "OUTPUT0");
  return r;
}

/* The line of `text` whose event is `event`, copied into buf ("" if none). */
static const char *line_of(const char *text, const char *event, char *buf, size_t len) {
  size_t n = strlen(event);
  buf[0] = '\0';
  for (const char *p = text; p != NULL && *p != '\0';) {
    const char *eol = strchr(p, '\n');
    size_t l = eol != NULL ? (size_t)(eol - p) : strlen(p);
    if (l > n && strncmp(p, event, n) == 0 && p[n] == ' ') {
      snprintf(buf, len, "%.*s", (int)l, p);
      break;
    }
    p = eol != NULL ? eol + 1 : NULL;
  }
  return buf;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  if (n >= k && strcmp(s + n - k, tail) == 0) return true;
  fprintf(stderr, "  expected '%s' to end with '%s'\n", s, tail);
  return false;
}

/* Whether the call got exactly one successful response whose OUTPUT0 is
 * these ints. */
static bool answered_with(mock_call_t *call, const int32_t *data, size_t count) {
  if (!mock_call_wait_done(call, 0) || mock_call_sent_count(call) != 1) return false;
  mock_sent_t s = mock_call_sent(call, 0);
  const struct TRITONBACKEND_Output *out = mock_sent_output(&s, "OUTPUT0");
  return s.error == NULL && out != NULL && out->size == count * sizeof *data &&
         memcmp(out->data, data, out->size) == 0;
}

/* execute_start ends with the batch's total batch size (leading dims of
 * INPUT0) and the request ids in Execute's order, "-" for an empty one. */
static void execute_start_names_batch_and_ids(void) {
  mock_loaded_t m;
  const char *path;
  REQUIRE(load_recording(&m, "batch.log", 4, &path));
  static const int32_t two[6] = {1, 2, 3, 4, 5, 6}, one[3] = {7, 8, 9}, single[1] = {10};
  const int64_t s23[2] = {2, 3}, s13[2] = {1, 3}, s11[2] = {1, 1};
  mock_call_t *calls[3] = {mock_call_new(), mock_call_new(), mock_call_new()};
  TRITONBACKEND_Request *rs[3] = {request_with(calls[0], "b-first", s23, 2, two, 6),
                                  request_with(calls[1], "", s13, 2, one, 3),
                                  request_with(calls[2], "a-last", s11, 2, single, 1)};
  CHECK(bt_execute(&m, rs, 3));
  CHECK(answered_with(calls[0], two, 6) && answered_with(calls[1], one, 3) &&
        answered_with(calls[2], single, 1));
  CHECK_EQ_U64(atomic_load(&m.instance.stats.success), 3);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.batches), 1);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.batch_total), 4);
  for (int i = 0; i < 3; i++) mock_call_free(calls[i]);
  /* A request without an id prints "-" too. */
  mock_call_t *call = mock_call_new();
  CHECK(run_one(&m, call));
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  char line[1024];
  line_of(text, "execute_start", line, sizeof line);
  CHECK(strncmp(line, "execute_start model=rec version=1 instance=rec_0 requests=3 t_ns=",
                65) == 0);
  CHECK(ends_with(line, " batch=4 ids=b-first,-,a-last"));
  CHECK(strstr(text, "requests=1 t_ns=") != NULL &&
        strstr(text, " batch=1 ids=-\n") != NULL);
  free(text);
}

/* Without batching (max_batch_size 0) each request counts 1, whatever its
 * shape. */
static void unbatched_requests_count_one(void) {
  mock_loaded_t m;
  const char *path;
  REQUIRE(load_recording(&m, "unbatched.log", 0, &path));
  static const int32_t data[3] = {1, 2, 3};
  const int64_t shape[1] = {3};
  mock_call_t *calls[2] = {mock_call_new(), mock_call_new()};
  TRITONBACKEND_Request *rs[2] = {request_with(calls[0], "x", shape, 1, data, 3),
                                  request_with(calls[1], "y", shape, 1, data, 3)};
  CHECK(bt_execute(&m, rs, 2));
  CHECK(answered_with(calls[0], data, 3) && answered_with(calls[1], data, 3));
  CHECK_EQ_U64(atomic_load(&m.instance.stats.batch_total), 2);
  for (int i = 0; i < 2; i++) mock_call_free(calls[i]);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  char line[1024];
  CHECK(ends_with(line_of(text, "execute_start", line, sizeof line), " batch=2 ids=x,y"));
  free(text);
}

/* delay_from_input: Execute sleeps the largest INPUT0[0] of the batch on
 * top of execute_delay_ms: 30 + max(100, 90) ms, well short of the sum. */
static void delay_from_input_adds_the_max(void) {
  const char *path = record_path("input_delay.log");
  char params[512];
  snprintf(params, sizeof params,
           "\"record_file\":{\"string_value\":\"%s\"},"
           "\"execute_delay_ms\":{\"string_value\":\"30\"},"
           "\"delay_from_input\":{\"string_value\":\"true\"}",
           path);
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec", config(params)));
  static const int32_t slow[2] = {100, 1}, slower_not[1] = {90};
  const int64_t s12[2] = {1, 2}, s11[2] = {1, 1};
  mock_call_t *calls[2] = {mock_call_new(), mock_call_new()};
  TRITONBACKEND_Request *rs[2] = {request_with(calls[0], "p", s12, 2, slow, 2),
                                  request_with(calls[1], "q", s11, 2, slower_not, 1)};
  CHECK(bt_execute(&m, rs, 2));
  CHECK(answered_with(calls[0], slow, 2) && answered_with(calls[1], slower_not, 1));
  for (int i = 0; i < 2; i++) mock_call_free(calls[i]);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  unsigned long long start = t_ns_of(text, "execute_start"),
                     end = t_ns_of(text, "execute_end");
  CHECK(start != 0 && end >= start + 130000000ull);
  CHECK(end < start + 220000000ull); /* max, not sum (30 + 100 + 90) */
  free(text);
}

typedef struct {
  mock_call_t *call;
  int after_ms;
} canceller_t;

/* Cancels c->call after c->after_ms, as a client would mid-Execute. */
static void *cancel_later(void *arg) {
  const canceller_t *c = arg;
  struct timespec ts = {c->after_ms / 1000, (long)(c->after_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  mock_call_cancel(c->call);
  return NULL;
}

/* A request cancelled while Execute sleeps is answered CANCELLED at once
 * and recorded; the others are answered after the delay, and only they
 * count in the batch statistics. */
static void cancelled_during_the_delay(void) {
  const char *path = record_path("cancel.log");
  int delay = bt_ms(400);
  char params[512];
  snprintf(params, sizeof params,
           "\"record_file\":{\"string_value\":\"%s\"},"
           "\"execute_delay_ms\":{\"string_value\":\"%d\"}",
           path, delay);
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec", config(params)));
  static const int32_t a[4] = {1, 2, 3, 4}, d[2] = {5, 6}, c[2] = {7, 8};
  const int64_t s22[2] = {2, 2}, s12[2] = {1, 2};
  mock_call_t *calls[3] = {mock_call_new(), mock_call_new(), mock_call_new()};
  TRITONBACKEND_Request *rs[3] = {request_with(calls[0], "a", s22, 2, a, 4),
                                  request_with(calls[1], "drop", s12, 2, d, 2),
                                  request_with(calls[2], "c", s12, 2, c, 2)};
  canceller_t canceller = {calls[1], 50};
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, cancel_later, &canceller) == 0);
  CHECK(bt_execute(&m, rs, 3));
  pthread_join(t, NULL);
  CHECK(answered_with(calls[0], a, 4) && answered_with(calls[2], c, 2));
  CHECK(mock_call_wait_done(calls[1], 0) && mock_call_sent_count(calls[1]) == 1);
  mock_sent_t dropped = mock_call_sent(calls[1], 0), kept = mock_call_sent(calls[0], 0);
  CHECK(dropped.code == TRITONSERVER_ERROR_CANCELLED);
  CHECK_STREQ(dropped.error, "recorder: request 'drop' cancelled during execute");
  CHECK(dropped.seq < kept.seq);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.success), 2);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.fail), 1);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.batches), 1);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.batch_total), 3);
  for (int i = 0; i < 3; i++) mock_call_free(calls[i]);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  static const char *const events[] = {
      "initialize", "model_initialize", "model_instance_initialize", "execute_start",
      "cancelled",  "execute_end",      "model_instance_finalize",   "model_finalize",
      "finalize"};
  CHECK(has_events(text, events, 9));
  char line[1024];
  CHECK(ends_with(line_of(text, "execute_start", line, sizeof line),
                  " batch=4 ids=a,drop,c"));
  CHECK(strstr(text, "\ncancelled model=rec version=1 instance=rec_0 id=drop t_ns=") !=
        NULL);
  unsigned long long start = t_ns_of(text, "execute_start"),
                     cancelled = t_ns_of(text, "cancelled"),
                     end = t_ns_of(text, "execute_end");
  unsigned long long delay_ns = (unsigned long long)delay * 1000000ull;
  CHECK(start != 0 && start <= cancelled && cancelled < end);
  CHECK(end >= start + delay_ns);
  CHECK(end - cancelled >= delay_ns / 2); /* answered at once, not after the delay */
  free(text);
}

/* With every request cancelled there is nothing to wait for: a batch
 * cancelled before Execute ends long before its 10 s delay. */
static void all_cancelled_ends_the_delay(void) {
  const char *path = record_path("all_cancelled.log");
  char params[512];
  snprintf(params, sizeof params,
           "\"record_file\":{\"string_value\":\"%s\"},"
           "\"execute_delay_ms\":{\"string_value\":\"10000\"}",
           path);
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_RECORDER, "recorder", "rec", config(params)));
  static const int32_t data[1] = {1};
  const int64_t shape[2] = {1, 1};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request_with(call, NULL, shape, 2, data, 1);
  mock_call_cancel(call);
  uint64_t t0 = bk_now_ns();
  CHECK(bt_execute(&m, &r, 1));
  CHECK(bk_now_ns() - t0 < 5000000000ull);
  CHECK(mock_call_wait_done(call, 0) && mock_call_sent_count(call) == 1);
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.code == TRITONSERVER_ERROR_CANCELLED);
  CHECK_STREQ(s.error, "recorder: request '-' cancelled during execute");
  CHECK_EQ_U64(atomic_load(&m.instance.stats.fail), 1);
  CHECK_EQ_U64(atomic_load(&m.instance.stats.batches), 0);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
  char *text = bt_read_file(path);
  REQUIRE(text != NULL);
  CHECK(strstr(text, "\ncancelled model=rec version=1 instance=rec_0 id=- t_ns=") !=
        NULL);
  free(text);
}

UNIT_MAIN("recorder", UNIT_CASE(records_the_whole_lifecycle),
          UNIT_CASE(fails_at_model_initialize), UNIT_CASE(fails_at_execute),
          UNIT_CASE(fails_each_request), UNIT_CASE(finalize_failures_are_reported),
          UNIT_CASE(execute_delay_and_relative_path),
          UNIT_CASE(bad_settings_fail_the_load),
          UNIT_CASE(backend_config_controls_initialize),
          UNIT_CASE(execute_start_names_batch_and_ids),
          UNIT_CASE(unbatched_requests_count_one),
          UNIT_CASE(delay_from_input_adds_the_max), UNIT_CASE(cancelled_during_the_delay),
          UNIT_CASE(all_cancelled_ends_the_delay))
