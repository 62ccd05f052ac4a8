/* The addsub backend through the mock server: `simple` and `simple_int8`
 * arithmetic, batching, split inputs, requested-output subsets, per-request
 * errors, config rejection. */
#include <string.h>

#include "test/backends/testing.h"
#include "test/unit/unit.h"

#define TENSOR(name, type, dims)                 \
  "{\"name\":\"" name "\",\"data_type\":\"" type \
  "\",\"format\":\"FORMAT_NONE\",\"dims\":" dims "}"

/* What TRITONBACKEND_ModelConfig gives for examples/models/simple. */
#define SIMPLE_CONFIG(model, type) \
  "{\"name\":\"" model "\",\"platform\":\"\",\"backend\":\"addsub\",\"max_batch_size\":8," \
  "\"input\":[" TENSOR("INPUT0", type, "[16]") "," TENSOR("INPUT1", type, "[16]") "],"    \
  "\"output\":[" TENSOR("OUTPUT0", type, "[16]") "," TENSOR("OUTPUT1", type, "[16]") "]," \
  "\"parameters\":{}}"

static bool load_simple(mock_loaded_t *m) {
  return bt_load(m, LIB_ADDSUB, "addsub", "simple",
                 SIMPLE_CONFIG("simple", "TYPE_INT32"));
}

static void simple_batch_of_two_split_inputs(void) {
  mock_loaded_t m;
  REQUIRE(load_simple(&m));
  CHECK(m.backend.preferred_kind == TRITONSERVER_INSTANCEGROUPKIND_CPU);
  int32_t a[32], b[32];
  for (int i = 0; i < 32; i++) {
    a[i] = i;
    b[i] = 1000 - i;
  }
  int64_t shape[2] = {2, 16};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, a, sizeof a, 3);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, b, sizeof b, 5);
  mock_request_output(r, "OUTPUT0");
  mock_request_output(r, "OUTPUT1");
  CHECK(bt_execute(&m, &r, 1));
  CHECK(call->released && call->final_seen);
  REQUIRE(mock_call_sent_count(call) == 1);
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error == NULL && s.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  const struct TRITONBACKEND_Output *sum = mock_sent_output(&s, "OUTPUT0");
  const struct TRITONBACKEND_Output *diff = mock_sent_output(&s, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL);
  CHECK(sum->datatype == TRITONSERVER_TYPE_INT32 && sum->dims == 2 &&
        sum->shape[0] == 2 && sum->shape[1] == 16 && sum->size == sizeof a);
  const int32_t *ps = sum->data, *pd = diff->data;
  for (int i = 0; i < 32; i++) CHECK(ps[i] == 1000 && pd[i] == 2 * i - 1000);
  CHECK(atomic_load(&m.instance.stats.success) == 1);
  CHECK(atomic_load(&m.instance.stats.batches) == 1);
  CHECK(atomic_load(&m.instance.stats.batch_total) == 2);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void only_requested_outputs(void) {
  mock_loaded_t m;
  REQUIRE(load_simple(&m));
  int32_t a[16] = {5}, b[16] = {3};
  int64_t shape[2] = {1, 16};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, a, sizeof a, 1);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, b, sizeof b, 1);
  mock_request_output(r, "OUTPUT1");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.output_count == 1);
  CHECK(mock_sent_output(&s, "OUTPUT0") == NULL);
  const struct TRITONBACKEND_Output *diff = mock_sent_output(&s, "OUTPUT1");
  REQUIRE(diff != NULL);
  CHECK(((const int32_t *)diff->data)[0] == 2);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void simple_int8_wraps(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_ADDSUB, "addsub", "simple_int8",
                  SIMPLE_CONFIG("simple_int8", "TYPE_INT8")));
  int8_t a[16], b[16];
  for (int i = 0; i < 16; i++) {
    a[i] = (int8_t)(120 + i % 8);
    b[i] = (int8_t)(-120 + i);
  }
  int64_t shape[2] = {1, 16};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT8, shape, 2, a, 16, 2);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_INT8, shape, 2, b, 16, 1);
  mock_request_output(r, "OUTPUT0");
  mock_request_output(r, "OUTPUT1");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  const struct TRITONBACKEND_Output *sum = mock_sent_output(&s, "OUTPUT0");
  const struct TRITONBACKEND_Output *diff = mock_sent_output(&s, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL);
  for (int i = 0; i < 16; i++) {
    CHECK(((const int8_t *)sum->data)[i] == (int8_t)(uint8_t)(a[i] + b[i]));
    CHECK(((const int8_t *)diff->data)[i] == (int8_t)(uint8_t)(a[i] - b[i]));
  }
  CHECK(((const int8_t *)diff->data)[8] == (int8_t)(120 - (-112) - 256)); /* 232 wraps */
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

/* Three requests in one Execute: the bad ones fail alone. */
static void errors_are_per_request(void) {
  mock_loaded_t m;
  REQUIRE(load_simple(&m));
  int32_t a[16] = {1}, b[16] = {2};
  int64_t good[2] = {1, 16}, short_shape[2] = {1, 8};
  mock_call_t *calls[3];
  TRITONBACKEND_Request *reqs[3];
  for (int i = 0; i < 3; i++) {
    calls[i] = mock_call_new();
    reqs[i] = mock_request_new(calls[i]);
    mock_request_output(reqs[i], "OUTPUT0");
  }
  mock_request_input(reqs[0], "INPUT0", TRITONSERVER_TYPE_INT32, good, 2, a, sizeof a, 1);
  mock_request_input(reqs[0], "INPUT1", TRITONSERVER_TYPE_INT32, short_shape, 2, b, 32,
                     1);
  mock_request_input(reqs[1], "INPUT0", TRITONSERVER_TYPE_INT32, good, 2, a, sizeof a, 1);
  mock_request_input(reqs[1], "INPUT1", TRITONSERVER_TYPE_INT32, good, 2, b, sizeof b, 1);
  mock_request_input(reqs[2], "INPUT0", TRITONSERVER_TYPE_INT32, good, 2, a, sizeof a, 1);
  CHECK(bt_execute(&m, reqs, 3));
  for (int i = 0; i < 3; i++) {
    CHECK(calls[i]->released && mock_call_sent_count(calls[i]) == 1);
  }
  mock_sent_t s0 = mock_call_sent(calls[0], 0), s1 = mock_call_sent(calls[1], 0),
              s2 = mock_call_sent(calls[2], 0);
  CHECK(s0.error != NULL && s0.code == TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(s0.error != NULL && strstr(s0.error, "INPUT1") != NULL);
  CHECK(s0.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL && s0.output_count == 0);
  CHECK(s1.error == NULL && ((const int32_t *)s1.outputs[0].data)[0] == 3);
  CHECK(s2.error != NULL && s2.code == TRITONSERVER_ERROR_NOT_FOUND);
  CHECK(s2.error != NULL && strstr(s2.error, "input 'INPUT1' is missing") != NULL);
  CHECK(atomic_load(&m.instance.stats.success) == 1);
  CHECK(atomic_load(&m.instance.stats.fail) == 2);
  CHECK(atomic_load(&m.instance.stats.batch_total) == 1);
  for (int i = 0; i < 3; i++) mock_call_free(calls[i]);
  CHECK(mock_unload(&m) == 0);
}

static void wrong_byte_size_and_type(void) {
  mock_loaded_t m;
  REQUIRE(load_simple(&m));
  int32_t a[16] = {0};
  int8_t small[16] = {0};
  int64_t shape[2] = {1, 16};
  mock_call_t *c1 = mock_call_new(), *c2 = mock_call_new();
  TRITONBACKEND_Request *reqs[2] = {mock_request_new(c1), mock_request_new(c2)};
  mock_request_input(reqs[0], "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, a, 60, 1);
  mock_request_input(reqs[0], "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, a, 64, 1);
  mock_request_input(reqs[1], "INPUT0", TRITONSERVER_TYPE_INT8, shape, 2, small, 16, 1);
  mock_request_input(reqs[1], "INPUT1", TRITONSERVER_TYPE_INT8, shape, 2, small, 16, 1);
  CHECK(bt_execute(&m, reqs, 2));
  mock_sent_t s1 = mock_call_sent(c1, 0), s2 = mock_call_sent(c2, 0);
  CHECK(s1.error != NULL && strstr(s1.error, "input 'INPUT0': 60 bytes") != NULL);
  CHECK(s2.error != NULL && strstr(s2.error, "datatype INT8, expected INT32") != NULL);
  mock_call_free(c1);
  mock_call_free(c2);
  CHECK(mock_unload(&m) == 0);
}

static void empty_batch_dim(void) {
  mock_loaded_t m;
  REQUIRE(load_simple(&m));
  int64_t shape[2] = {0, 16};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, NULL, 0, 1);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, NULL, 0, 1);
  mock_request_output(r, "OUTPUT0");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error == NULL && s.output_count == 1 && s.outputs[0].size == 0);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static bool load_fails_with(const char *config, const char *needle) {
  mock_loaded_t m;
  TRITONSERVER_Error *err = mock_load(&m, LIB_ADDSUB, "addsub", NULL, "bad", config);
  const char *msg = mock_take_error(err);
  bool ok = err != NULL && strstr(msg, needle) != NULL;
  if (!ok) fprintf(stderr, "  got: '%s'\n", msg);
  CHECK(!m.model_up); /* no ModelFinalize after a failed ModelInitialize */
  CHECK(mock_unload(&m) == 0);
  return ok;
}

static void bad_configs_are_rejected(void) {
  CHECK(load_fails_with(SIMPLE_CONFIG("bad", "TYPE_STRING"),
                        "not an integer or float type"));
  CHECK(load_fails_with(SIMPLE_CONFIG("bad", "TYPE_BOOL"),
                        "model 'bad' (backend 'addsub')"));
  CHECK(load_fails_with(
      "{\"name\":\"bad\",\"input\":[" TENSOR("INPUT0", "TYPE_INT32", "[16]") "," TENSOR(
          "INPUT1", "TYPE_INT32", "[16]") "],\"output\":[" TENSOR("OUTPUT0", "TYPE_INT32",
                                                                  "[16]") "]}",
      "expected inputs INPUT0, INPUT1 and outputs OUTPUT0, OUTPUT1"));
  CHECK(load_fails_with(
      "{\"name\":\"bad\",\"input\":[" TENSOR("INPUT0", "TYPE_INT32", "[16]") "," TENSOR(
          "INPUT1", "TYPE_INT32",
          "[8]") "],\"output\":[" TENSOR("OUTPUT0", "TYPE_INT32",
                                         "[16]") "," TENSOR("OUTPUT1", "TYPE_INT32",
                                                            "[16]") "]}",
      "'INPUT1' must have the datatype and dims of INPUT0"));
  CHECK(load_fails_with("{not json", "not valid JSON"));
}

UNIT_MAIN("addsub", UNIT_CASE(simple_batch_of_two_split_inputs),
          UNIT_CASE(only_requested_outputs), UNIT_CASE(simple_int8_wraps),
          UNIT_CASE(errors_are_per_request), UNIT_CASE(wrong_byte_size_and_type),
          UNIT_CASE(empty_batch_dim), UNIT_CASE(bad_configs_are_rejected))
