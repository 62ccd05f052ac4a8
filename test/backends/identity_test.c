/* The identity backend (`simple_identity`) in a real server: BYTES and
 * numeric pass-through, split buffers, requested subsets, empty tensors,
 * shapes outside the config, config pairing, execute_delay_ms. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backends/common/clock.h"
#include "test/backends/call.h"
#include "test/unit/unit.h"

static const char *kSimpleIdentity =
    "{\"name\":\"simple_identity\",\"backend\":\"identity\",\"max_batch_size\":8,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]}]}";

static const char *kTwoPairs =
    "{\"name\":\"pairs\",\"backend\":\"identity\",\"max_batch_size\":0,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[2,-1]},"
    "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_UINT16\",\"dims\":[3]}],"
    "\"output\":[{\"name\":\"OUTPUT1\",\"data_type\":\"TYPE_UINT16\",\"dims\":[3]},"
    "{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[2,-1]}]}";

/* Sends and waits for the call; false when it was refused or never done. */
static bool answered(bt_call_t *call) {
  return bt_call_send(call) && bt_call_wait_done(call, bt_ms(5000));
}

static void bytes_body(bt_server_t *s) {
  const char *elems[3] = {"hello", "", "w\xc3\xb6rld"};
  uint8_t buf[64];
  size_t n = bt_bytes_make(buf, elems, 3);
  int64_t shape[2] = {1, 3};
  bt_call_t *call = bt_call_new(s, "simple_identity");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, buf, n, 4);
  bt_call_output(call, "OUTPUT0");
  REQUIRE(answered(call));
  bt_sent_t sent = bt_call_sent(call, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  REQUIRE(sent.error == NULL && out != NULL);
  CHECK(out->datatype == TRITONSERVER_TYPE_BYTES && out->dims == 2 && out->shape[1] == 3);
  CHECK(out->size == n && memcmp(out->data, buf, n) == 0);
  CHECK(bt_stats_reach(s, "simple_identity",
                       (bt_stats_t){.success = 1, .executions = 1, .inferences = 1}));
  bt_call_free(call);
}

static void bytes_round_trip(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple_identity", kSimpleIdentity, bytes_body));
}

static void subset_body(bt_server_t *s) {
  float f[6] = {1, 2, 3, 4, 5, 6};
  uint16_t u[3] = {7, 8, 9};
  int64_t fs[2] = {2, 3}, us[1] = {3};
  bt_call_t *call = bt_call_new(s, "pairs");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_FP32, fs, 2, f, sizeof f, 1);
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_UINT16, us, 1, u, sizeof u, 2);
  bt_call_output(call, "OUTPUT1");
  REQUIRE(answered(call));
  bt_sent_t sent = bt_call_sent(call, 0);
  CHECK(sent.error == NULL && sent.output_count == 1);
  const bt_tensor_t *o1 = bt_sent_output(&sent, "OUTPUT1");
  REQUIRE(o1 != NULL);
  CHECK(o1->size == sizeof u && memcmp(o1->data, u, sizeof u) == 0);
  bt_call_free(call);
}

static void subset_of_pairs(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "pairs", kTwoPairs, subset_body));
}

/* A request naming no output gets all of them, as in Triton (no client of
 * a server can ask for none); here an empty tensor, passed through. */
static void no_outputs_body(bt_server_t *s) {
  int64_t shape[2] = {1, 0};
  bt_call_t *call = bt_call_new(s, "simple_identity");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, NULL, 0, 1);
  REQUIRE(answered(call));
  bt_sent_t sent = bt_call_sent(call, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  CHECK(sent.error == NULL && sent.output_count == 1);
  CHECK(out != NULL && out->size == 0 && out->dims == 2 && out->shape[1] == 0);
  bt_call_free(call);
}

static void no_outputs_requested(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple_identity", kSimpleIdentity,
                      no_outputs_body));
}

/* The server checks shapes against the config before the backend (whose
 * own check cannot be reached through a server) sees the request. */
static void shape_body(bt_server_t *s) {
  uint16_t u[4] = {0};
  float f[2] = {0};
  int64_t us[1] = {4}, fs[2] = {2, 1};
  bt_call_t *call = bt_call_new(s, "pairs");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_FP32, fs, 2, f, sizeof f, 1);
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_UINT16, us, 1, u, sizeof u, 1);
  bt_call_output(call, "OUTPUT1");
  CHECK(bt_call_refused(call, TRITONSERVER_ERROR_INVALID_ARG,
                        "unexpected shape for input 'INPUT1' for model 'pairs'. "
                        "Expected [3], got [4]"));
  CHECK(bt_stats_reach(s, "pairs", (bt_stats_t){0}));
  bt_call_free(call);
}

static void shape_outside_config(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "pairs", kTwoPairs, shape_body));
}

static void unpaired_config_is_rejected(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_BACKENDS, NULL));
  CHECK(bt_load_fails_with(
      &s, "x",
      "{\"name\":\"x\",\"backend\":\"identity\",\"input\":[{\"name\":\"INPUT0\","
      "\"data_type\":\"TYPE_FP32\",\"dims\":[1]}],\"output\":[{\"name\":\"OUTPUT0\","
      "\"data_type\":\"TYPE_INT32\",\"dims\":[1]}]}",
      "output 'OUTPUT0' must have the datatype and dims"));
  bt_stop(&s);
}

/* INT32 [-1] with batching, the shape the ensemble tests use; `delay`
 * (NULL: none) is the execute_delay_ms parameter. */
static const char *int32_config(char *buf, size_t len, const char *delay) {
  char params[128] = "";
  if (delay != NULL)
    snprintf(params, sizeof params,
             ",\"parameters\":{\"execute_delay_ms\":{\"string_value\":\"%s\"}}", delay);
  snprintf(
      buf, len,
      "{\"name\":\"id32\",\"backend\":\"identity\",\"max_batch_size\":8,"
      "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"
      "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]"
      "%s}",
      params);
  return buf;
}

/* Sends [[v, v+1, v+2], [v+3, v+4, v+5]] and checks it comes back; *took
 * gets the ns from send to done. */
static void int32_round_trip(bt_server_t *s, int32_t v, uint64_t *took) {
  int32_t in[6];
  for (int i = 0; i < 6; i++) in[i] = v + i;
  int64_t shape[2] = {2, 3};
  bt_call_t *call = bt_call_new(s, "id32");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, in, sizeof in, 2);
  uint64_t start = bk_now_ns();
  REQUIRE(answered(call));
  *took = bk_now_ns() - start;
  bt_sent_t sent = bt_call_sent(call, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  REQUIRE(sent.error == NULL && out != NULL);
  CHECK(out->datatype == TRITONSERVER_TYPE_INT32 && out->dims == 2);
  CHECK(out->shape[0] == 2 && out->shape[1] == 3);
  CHECK(out->size == sizeof in && memcmp(out->data, in, sizeof in) == 0);
  bt_call_free(call);
}

static void int32_body(bt_server_t *s) {
  uint64_t took;
  int32_round_trip(s, -7, &took);
  CHECK(bt_stats_reach(s, "id32",
                       (bt_stats_t){.success = 1, .executions = 1, .inferences = 2}));
}

static void int32_pass_through(void) {
  char cfg[512];
  CHECK(bt_with_model(BT_BACKENDS, NULL, "id32", int32_config(cfg, sizeof cfg, NULL),
                      int32_body));
}

/* Each Execute sleeps execute_delay_ms before answering. */
static void delay_body(bt_server_t *s) {
  for (int32_t i = 0; i < 2; i++) {
    uint64_t took = 0;
    int32_round_trip(s, i, &took);
    CHECK(took >= 150 * 1000000ull);
  }
}

static void execute_delay_ms_sleeps(void) {
  char cfg[512];
  CHECK(bt_with_model(BT_BACKENDS, NULL, "id32", int32_config(cfg, sizeof cfg, "150"),
                      delay_body));
}

static void bad_execute_delay_is_rejected(void) {
  static const char *const bad[] = {"-1", "10001", "1e3",        "soon",
                                    "",   " 5",    "99999999999"};
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_BACKENDS, NULL));
  char cfg[512];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(bt_load_fails_with(&s, "id32", int32_config(cfg, sizeof cfg, bad[i]),
                             "parameter 'execute_delay_ms' must be an integer in "
                             "[0, 10000]"));
  CHECK(bt_load_ok(&s, "id32", int32_config(cfg, sizeof cfg, "10000")));
  bt_stop(&s);
}

/* A user's trace through TRITONSERVER_ServerInferAsync (the embedding
 * API): its callbacks get the request's activities and tensors, then its
 * release, which deletes it. */
typedef struct {
  pthread_mutex_t mu;
  uint32_t activities; /* bit per TRITONSERVER_InferenceTraceActivity */
  uint32_t tensors;
  char model[16]; /* copied: the trace's own string goes with it */
  bool released;
} user_trace_t;

static void user_activity(TRITONSERVER_InferenceTrace *t,
                          TRITONSERVER_InferenceTraceActivity a, uint64_t ns,
                          void *userp) {
  (void)ns;
  user_trace_t *u = userp;
  const char *model = NULL;
  TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceModelName(t, &model));
  pthread_mutex_lock(&u->mu);
  u->activities |= 1u << a;
  snprintf(u->model, sizeof u->model, "%s", model != NULL ? model : "");
  pthread_mutex_unlock(&u->mu);
}

static void user_tensor(TRITONSERVER_InferenceTrace *t,
                        TRITONSERVER_InferenceTraceActivity a, const char *name,
                        TRITONSERVER_DataType dt, const void *base, size_t size,
                        const int64_t *shape, uint64_t dims, TRITONSERVER_MemoryType mt,
                        int64_t mt_id, void *userp) {
  (void)t, (void)a, (void)name, (void)dt, (void)base, (void)size, (void)shape;
  (void)dims, (void)mt, (void)mt_id;
  user_trace_t *u = userp;
  pthread_mutex_lock(&u->mu);
  u->tensors++;
  pthread_mutex_unlock(&u->mu);
}

static void user_release(TRITONSERVER_InferenceTrace *t, void *userp) {
  user_trace_t *u = userp;
  TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(t));
  pthread_mutex_lock(&u->mu);
  u->released = true;
  pthread_mutex_unlock(&u->mu);
}

static void user_trace_body(bt_server_t *s) {
  user_trace_t u = {.mu = PTHREAD_MUTEX_INITIALIZER};
  TRITONSERVER_InferenceTrace *trace = NULL;
  REQUIRE(TRITONSERVER_InferenceTraceTensorNew(
              &trace,
              TRITONSERVER_TRACE_LEVEL_TIMESTAMPS | TRITONSERVER_TRACE_LEVEL_TENSORS, 0,
              user_activity, user_tensor, user_release, &u) == NULL);
  int32_t v[4] = {1, 2, 3, 4};
  int64_t shape[2] = {1, 4};
  bt_call_t *call = bt_call_new(s, "ints");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, v, sizeof v, 1);
  bt_call_trace(call, trace);
  REQUIRE(answered(call));
  bt_call_free(call);
  /* The trace goes with the request's last holder, just after the call. */
  bool released = false;
  for (int i = 0; i < bt_ms(500) && !released; i++) {
    pthread_mutex_lock(&u.mu);
    released = u.released;
    pthread_mutex_unlock(&u.mu);
    if (!released) bk_sleep_ms(10);
  }
  CHECK(released);
  uint32_t want =
      1u << TRITONSERVER_TRACE_REQUEST_START | 1u << TRITONSERVER_TRACE_QUEUE_START |
      1u << TRITONSERVER_TRACE_COMPUTE_START | 1u << TRITONSERVER_TRACE_COMPUTE_END |
      1u << TRITONSERVER_TRACE_REQUEST_END;
  CHECK_EQ_U64(u.activities & want, want);
  CHECK_STREQ(u.model, "ints");
  CHECK_EQ_U64(u.tensors, 3); /* queue input, backend input, backend output */
}

static void user_trace(void) {
  static const char *kInts =
      "{\"name\":\"ints\",\"backend\":\"identity\",\"max_batch_size\":8,"
      "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"
      "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]}";
  CHECK(bt_with_model(BT_BACKENDS, NULL, "ints", kInts, user_trace_body));
}

UNIT_MAIN("identity", UNIT_CASE(bytes_round_trip), UNIT_CASE(subset_of_pairs),
          UNIT_CASE(no_outputs_requested), UNIT_CASE(shape_outside_config),
          UNIT_CASE(unpaired_config_is_rejected), UNIT_CASE(int32_pass_through),
          UNIT_CASE(execute_delay_ms_sleeps), UNIT_CASE(bad_execute_delay_is_rejected),
          UNIT_CASE(user_trace))
