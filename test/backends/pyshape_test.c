/* The pyshape test backend (Triton's Python backend's calls, in its order,
 * without Python) in a real server: request parameters and timeouts as the
 * backend reads them, decoupled responses, a BLS call that sets
 * parameters, a timeout and a priority, a BLS call it cancels, loading and
 * unloading a model from a model's code; and the bounds on in-process
 * request parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/clock.h"
#include "test/backends/call.h"
#include "test/unit/unit.h"

#define TENSORS                                                                      \
  "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"    \
  "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]},"   \
  "{\"name\":\"PARAMS\",\"data_type\":\"TYPE_STRING\",\"dims\":[1]}]"

/* A pyshape model config with this mode and more parameters (a fragment
 * that starts with a comma, or ""). */
static const char *config(const char *name, const char *mode, const char *more,
                          bool decoupled) {
  static char buf[4][2048];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof buf[0],
           "{\"name\":\"%s\",\"backend\":\"pyshape\",\"max_batch_size\":0," TENSORS
           ",\"model_transaction_policy\":{\"decoupled\":%s},"
           "\"parameters\":{\"mode\":{\"string_value\":\"%s\"}%s}}",
           name, decoupled ? "true" : "false", mode, more);
  return b;
}

static const int32_t DATA[3] = {4, 5, 6};
static const int64_t SHAPE[1] = {3};

/* The PARAMS text of response i. */
static bool params_of(bt_call_t *c, size_t i, char *buf, size_t len) {
  bt_sent_t sent = bt_call_sent(c, i);
  const bt_tensor_t *t = bt_sent_output(&sent, "PARAMS");
  if (sent.error != NULL) fprintf(stderr, "  response %zu: %s\n", i, sent.error);
  return t != NULL && bt_bytes_at(t, 0, buf, len);
}

/* Sends c, waits until it is done, and reads its first response's PARAMS. */
static bool sent_params(bt_call_t *c, char *text, size_t len) {
  text[0] = '\0';
  return bt_call_send(c) && bt_call_wait_done(c, bt_ms(10000)) &&
         params_of(c, 0, text, len);
}

static bt_call_t *call_new(bt_server_t *s, const char *model) {
  bt_call_t *c = bt_call_new(s, model);
  bt_call_input(c, "INPUT0", TRITONSERVER_TYPE_INT32, SHAPE, 1, DATA, sizeof DATA, 2);
  return c;
}

static void body_echo(bt_server_t *s) {
  bt_call_t *c = call_new(s, "py");
  bt_call_param_string(c, "s", "hello");
  bt_call_param_int(c, "n", -7);
  bt_call_param_bool(c, "f", true);
  bt_call_param_double(c, "x", 2.5);
  bt_call_param_string(c, "s", "again"); /* repeated keys stay, in order */
  bt_call_timeout(c, 1234567);
  char text[512];
  REQUIRE(sent_params(c, text, sizeof text));
  CHECK_STREQ(text, "s=s:hello,n=i:-7,f=b:1,x=d:2.5,s=s:again;timeout=1234567");
  bt_sent_t sent = bt_call_sent(c, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  REQUIRE(out != NULL && out->size == sizeof DATA);
  CHECK(memcmp(out->data, DATA, sizeof DATA) == 0);
  bt_call_free(c);
  /* No parameters: none, and no timeout. */
  c = call_new(s, "py");
  REQUIRE(sent_params(c, text, sizeof text));
  CHECK_STREQ(text, ";timeout=0");
  bt_call_free(c);
}

static void test_echo(void) {
  CHECK(bt_with_model(BT_TEST_BACKENDS, NULL, "py", config("py", "echo", "", false),
                      body_echo));
}

static void body_decoupled(bt_server_t *s) {
  static const int32_t three = 3;
  static const int64_t one = 1;
  bt_call_t *c = bt_call_new(s, "pyd");
  bt_call_input(c, "INPUT0", TRITONSERVER_TYPE_INT32, &one, 1, &three, sizeof three, 1);
  bt_call_param_bool(c, "stream", true);
  REQUIRE(bt_call_send(c));
  REQUIRE(bt_call_wait_done(c, bt_ms(5000)));
  REQUIRE(bt_call_sent_count(c) == 4); /* three responses, then the final flag */
  for (size_t i = 0; i < 3; i++) {
    char text[256];
    REQUIRE(params_of(c, i, text, sizeof text));
    CHECK_STREQ(text, "stream=b:1;timeout=0");
    bt_sent_t sent = bt_call_sent(c, i);
    const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
    REQUIRE(out != NULL && out->size == 4);
    CHECK_EQ_U64((uint64_t)*(const int32_t *)out->data, i);
    CHECK_EQ_U64(sent.flags, 0);
  }
  bt_sent_t last = bt_call_sent(c, 3);
  CHECK(!last.is_response);
  CHECK_EQ_U64(last.flags, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  bt_call_free(c);
}

static void test_decoupled(void) {
  CHECK(bt_with_model(BT_TEST_BACKENDS, NULL, "pyd", config("pyd", "decoupled", "", true),
                      body_decoupled));
}

#define TARGET(name) ",\"target\":{\"string_value\":\"" name "\"}"

/* The callee sees the caller's parameters, those the BLS call added (one
 * of each type), and the timeout the BLS call set. */
static void test_bls(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_TEST_BACKENDS, NULL));
  CHECK(bt_load_ok(&s, "py", config("py", "echo", "", false)));
  CHECK(bt_load_ok(&s, "pyb", config("pyb", "bls", TARGET("py"), false)));
  bt_call_t *c = call_new(&s, "pyb");
  bt_call_param_string(c, "s", "hello");
  bt_call_param_int(c, "n", 3);
  bt_call_timeout(c, 100);
  char text[512];
  CHECK(sent_params(c, text, sizeof text));
  CHECK_STREQ(text,
              "s=s:hello,n=i:3,via=s:pyshape,hop=i:1,bls=b:1,ratio=d:0.5;timeout=101");
  bt_sent_t sent = bt_call_sent(c, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  CHECK(out != NULL && out->size == sizeof DATA && memcmp(out->data, DATA, sizeof DATA) == 0);
  bt_call_free(c);
  bt_stop(&s);
}

/* An ensemble hands its request's parameters and timeout to its steps. */
static void test_ensemble(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_TEST_BACKENDS, NULL));
  CHECK(bt_load_ok(&s, "py", config("py", "echo", "", false)));
  CHECK(bt_load_ok(
      &s, "ens",
      "{\"name\":\"ens\",\"platform\":\"ensemble\",\"max_batch_size\":0," TENSORS
      ",\"ensemble_scheduling\":{\"step\":[{\"model_name\":\"py\",\"model_version\":-1,"
      "\"input_map\":{\"INPUT0\":\"INPUT0\"},\"output_map\":{\"OUTPUT0\":\"OUTPUT0\","
      "\"PARAMS\":\"PARAMS\"}}]}}"));
  bt_call_t *c = call_new(&s, "ens");
  bt_call_param_string(c, "s", "hello");
  bt_call_param_double(c, "x", 0.25);
  bt_call_timeout(c, 77);
  char text[512];
  CHECK(sent_params(c, text, sizeof text));
  CHECK_STREQ(text, "s=s:hello,x=d:0.25;timeout=77");
  bt_call_free(c);
  bt_stop(&s);
}

/* A BLS call cancelled at once reaches its callee, which sleeps 3 s and
 * polls TRITONBACKEND_RequestIsCancelled (the recorder backend), or is
 * dropped from the callee's queue: either way a CANCELLED answer, long
 * before the sleep ends. */
static void test_bls_cancel(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_TEST_BACKENDS, NULL));
  CHECK(bt_load_ok(&s, "slow",
                   "{\"name\":\"slow\",\"backend\":\"recorder\",\"max_batch_size\":0,"
                   "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\","
                   "\"dims\":[-1]}],\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":"
                   "\"TYPE_INT32\",\"dims\":[-1]}],\"parameters\":{\"execute_delay_ms\":"
                   "{\"string_value\":\"3000\"}}}"));
  CHECK(bt_load_ok(&s, "pyc", config("pyc", "bls_cancel", TARGET("slow"), false)));
  for (int round = 0; round < 3; round++) {
    bt_call_t *c = call_new(&s, "pyc");
    uint64_t start = bk_now_ns();
    char text[512];
    CHECK(sent_params(c, text, sizeof text));
    CHECK(bk_now_ns() - start < 2500000000ull);
    CHECK_STREQ(text, "code=Cancelled;cancelled=1");
    bt_call_free(c);
  }
  bt_stop(&s);
}

/* An in-process request's priority and timeout reach its model's queue as
 * a client's do: behind a slow request, the priority-1 request runs before
 * the priority-2 one sent earlier, and a 1 ms queue timeout rejects. */
static void test_bls_priority_and_timeout(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_TEST_BACKENDS, NULL));
  CHECK(bt_load_ok(
      &s, "q",
      "{\"name\":\"q\",\"backend\":\"recorder\",\"max_batch_size\":1,"
      "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"
      "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"
      "\"instance_group\":[{\"count\":1,\"kind\":\"KIND_CPU\"}],"
      "\"dynamic_batching\":{\"priority_levels\":2,\"default_priority_level\":2,"
      "\"default_queue_policy\":{\"timeout_action\":\"REJECT\","
      "\"default_timeout_microseconds\":10000000,\"allow_timeout_override\":true}},"
      "\"parameters\":{\"execute_delay_ms\":{\"string_value\":\"300\"}}}"));
  static const int64_t shape[2] = {1, 3};
  bt_call_t *c[4];
  for (int i = 0; i < 4; i++) {
    c[i] = bt_call_new(&s, "q");
    bt_call_input(c[i], "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, DATA, sizeof DATA, 1);
  }
  bt_call_priority(c[1], 2);
  bt_call_priority(c[2], 1);
  bt_call_timeout(c[3], 1000);
  CHECK(bt_call_send(c[0])); /* the slow one, executing while the rest queue */
  bk_sleep_ms(50);
  for (int i = 1; i < 4; i++) CHECK(bt_call_send(c[i]));
  for (int i = 0; i < 4; i++) CHECK(bt_call_wait_done(c[i], bt_ms(5000)));
  bt_sent_t low = bt_call_sent(c[1], 0), high = bt_call_sent(c[2], 0);
  CHECK(low.error == NULL && high.error == NULL);
  CHECK(high.seq < low.seq);
  bt_sent_t late = bt_call_sent(c[3], 0);
  CHECK(late.error != NULL && late.code == TRITONSERVER_ERROR_UNAVAILABLE);
  CHECK(late.error != NULL && strstr(late.error, "timeout") != NULL);
  CHECK(late.seq < bt_call_sent(c[0], 0).seq); /* rejected while the slow one ran */
  for (int i = 0; i < 4; i++) bt_call_free(c[i]);
  bt_stop(&s);
}

/* Loading and unloading a model from a model's code, with a config. */
static void test_control(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_TEST_BACKENDS, NULL));
  /* py2's folder, then gone again: the control model loads it. */
  CHECK(bt_load_ok(&s, "py2", config("py2", "echo", "", false)));
  CHECK(bt_unload(&s, "py2"));
  char more[4096];
  const char *cfg = config("py2", "echo", "", false);
  char escaped[2048];
  size_t k = 0;
  for (const char *p = cfg; *p != '\0' && k + 2 < sizeof escaped; p++) {
    if (*p == '"' || *p == '\\') escaped[k++] = '\\';
    escaped[k++] = *p;
  }
  escaped[k] = '\0';
  snprintf(more, sizeof more, TARGET("py2") ",\"target_config\":{\"string_value\":\"%s\"}",
           escaped);
  CHECK(bt_load_ok(&s, "pyl", config("pyl", "control", more, false)));
  bt_call_t *c = call_new(&s, "pyl");
  char text[512];
  CHECK(sent_params(c, text, sizeof text));
  CHECK_STREQ(text, "load=ok;ready=ok;unload=ok;reload=ok;unload_dependents=ok");
  bt_call_free(c);
  bt_stop(&s);
}

/* Bounds on in-process parameters, checked when set. */
static void test_param_bounds(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_TEST_BACKENDS, NULL));
  CHECK(bt_load_ok(&s, "py", config("py", "echo", "", false)));
  TRITONSERVER_InferenceRequest *r = NULL;
  TRITONSERVER_Error *err = TRITONSERVER_InferenceRequestNew(&r, bt_server(&s), "py", -1);
  REQUIRE(err == NULL);
  char *big = malloc(65537 + 1);
  memset(big, 'a', 65537);
  big[65537] = '\0';
  err = TRITONSERVER_InferenceRequestSetStringParameter(r, "k", big);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(err != NULL && strstr(TRITONSERVER_ErrorMessage(err), "above the limit of 65536"));
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  big[257] = '\0'; /* a 257-byte key */
  err = TRITONSERVER_InferenceRequestSetIntParameter(r, big, 1);
  CHECK(err != NULL && strstr(TRITONSERVER_ErrorMessage(err), "above the limit of 256"));
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  free(big);
  for (int i = 0; i < 128; i++) {
    err = TRITONSERVER_InferenceRequestSetBoolParameter(r, "b", i & 1);
    CHECK(err == NULL);
  }
  err = TRITONSERVER_InferenceRequestSetDoubleParameter(r, "d", 1.0);
  CHECK(err != NULL && strstr(TRITONSERVER_ErrorMessage(err), "more than 128"));
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  /* A cancel before the request was ever sent is refused; nothing flies. */
  err = TRITONSERVER_InferenceRequestCancel(r);
  CHECK(err != NULL);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  bool cancelled = true;
  CHECK(TRITONSERVER_InferenceRequestIsCancelled(r, &cancelled) == NULL && !cancelled);
  /* NULL where Triton would crash: an error, not a crash. */
  err = TRITONSERVER_InferenceRequestSetPriority(NULL, 1);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  err = TRITONSERVER_InferenceRequestTimeoutMicroseconds(r, NULL);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  err = TRITONSERVER_InferenceRequestSetStringParameter(r, "k", NULL);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  err = TRITONSERVER_InferenceRequestCancel(NULL);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_InferenceRequestDelete(r);
  bt_stop(&s);
}

UNIT_MAIN("pyshape", UNIT_CASE(test_echo), UNIT_CASE(test_decoupled), UNIT_CASE(test_bls), UNIT_CASE(test_ensemble),
          UNIT_CASE(test_bls_cancel),
          UNIT_CASE(test_bls_priority_and_timeout), UNIT_CASE(test_param_bounds), UNIT_CASE(test_control))
