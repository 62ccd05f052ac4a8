/* The addsub backend in a real server: `simple` and `simple_int8`
 * arithmetic, batching, split inputs, requested-output subsets, per-request
 * errors, empty tensors, requests the server refuses before the backend,
 * config rejection. */
#include <string.h>

#include "test/backends/call.h"
#include "test/unit/unit.h"

#define TENSOR(name, type, dims) \
  "{\"name\":\"" name "\",\"data_type\":\"" type "\",\"dims\":" dims "}"

/* What examples/models/simple says, as JSON. */
#define SIMPLE_CONFIG(model, type) \
  "{\"name\":\"" model "\",\"platform\":\"\",\"backend\":\"addsub\",\"max_batch_size\":8," \
  "\"input\":[" TENSOR("INPUT0", type, "[16]") "," TENSOR("INPUT1", type, "[16]") "],"    \
  "\"output\":[" TENSOR("OUTPUT0", type, "[16]") "," TENSOR("OUTPUT1", type, "[16]") "]," \
  "\"parameters\":{}}"

/* `var`: variable dims, and INPUT1 optional and ragged, so that requests
 * whose INPUT1 is missing or differs from INPUT0 reach the backend (the
 * server refuses them against `simple`), and batch with good ones. */
#define VAR_INPUT0 TENSOR("INPUT0", "TYPE_INT32", "[-1]")
#define VAR_INPUT1                                                   \
  "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]," \
  "\"optional\":true,\"allow_ragged_batch\":true}"
#define VAR_OUTPUTS \
  TENSOR("OUTPUT0", "TYPE_INT32", "[-1]") "," TENSOR("OUTPUT1", "TYPE_INT32", "[-1]")
#define VAR_CONFIG(extra)                                          \
  "{\"name\":\"var\",\"backend\":\"addsub\",\"max_batch_size\":8," \
  "\"input\":[" VAR_INPUT0 "," VAR_INPUT1                          \
  "],"                                                             \
  "\"output\":[" VAR_OUTPUTS "]" extra "}"

static const char *kSimple = SIMPLE_CONFIG("simple", "TYPE_INT32");

/* The server made one CPU instance for `model` (addsub prefers CPU; the
 * config names no group). */
static bool one_cpu_instance(bt_server_t *s, const char *model) {
  srv_model_t *m = NULL;
  srv_status_t *st = srv_registry_acquire(s->srv.registry, model, strlen(model), -1, &m);
  if (st != NULL) {
    srv_status_free(st);
    return false;
  }
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  size_t n = 0;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(d.config, &n);
  bool ok =
      n == 1 &&
      inference_ModelInstanceGroup_kind(g[0]) == inference_ModelInstanceGroup_KIND_CPU &&
      inference_ModelInstanceGroup_count(g[0]) == 1;
  srv_model_unref(m);
  return ok;
}

static void batch_of_two_body(bt_server_t *s) {
  CHECK(one_cpu_instance(s, "simple"));
  int32_t a[32], b[32];
  for (int i = 0; i < 32; i++) {
    a[i] = i;
    b[i] = 1000 - i;
  }
  int64_t shape[2] = {2, 16};
  bt_call_t *call = bt_call_new(s, "simple");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, a, sizeof a, 3);
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, b, sizeof b, 5);
  bt_call_output(call, "OUTPUT0");
  bt_call_output(call, "OUTPUT1");
  REQUIRE(bt_call_send(call));
  REQUIRE(bt_call_wait_done(call, bt_ms(5000)));
  REQUIRE(bt_call_sent_count(call) == 1);
  bt_sent_t sent = bt_call_sent(call, 0);
  CHECK(sent.error == NULL && sent.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  const bt_tensor_t *sum = bt_sent_output(&sent, "OUTPUT0");
  const bt_tensor_t *diff = bt_sent_output(&sent, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL);
  CHECK(sum->datatype == TRITONSERVER_TYPE_INT32 && sum->dims == 2 &&
        sum->shape[0] == 2 && sum->shape[1] == 16 && sum->size == sizeof a);
  REQUIRE(diff->size == sizeof a);
  const int32_t *ps = sum->data, *pd = diff->data;
  for (int i = 0; i < 32; i++) CHECK(ps[i] == 1000 && pd[i] == 2 * i - 1000);
  CHECK(bt_stats_reach(s, "simple",
                       (bt_stats_t){.success = 1, .executions = 1, .inferences = 2}));
  bt_call_free(call);
}

static void simple_batch_of_two_split_inputs(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple", kSimple, batch_of_two_body));
}

/* A one-row call on `simple` (INPUT0[0] = 5, INPUT1[0] = 3) asking for
 * `outputs` in that order, sent and answered; the caller frees it. NULL
 * (a failed check) when it was not answered: left as it is, as a failed
 * REQUIRE in a case leaves it. */
enum { ROW_BYTES = 16 * sizeof(int32_t) };
static bt_call_t *row_call(bt_server_t *s, const char *const *outputs, size_t n) {
  static const int32_t a[16] = {5}, b[16] = {3};
  int64_t shape[2] = {1, 16};
  bt_call_t *call = bt_call_new(s, "simple");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, a, sizeof a, 1);
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, b, sizeof b, 1);
  for (size_t i = 0; i < n; i++) bt_call_output(call, outputs[i]);
  bool answered = bt_call_send(call) && bt_call_wait_done(call, bt_ms(5000));
  CHECK(answered);
  return answered ? call : NULL;
}

static void requested_outputs_body(bt_server_t *s) {
  static const char *const outputs[] = {"OUTPUT1"};
  bt_call_t *call = row_call(s, outputs, 1);
  REQUIRE(call != NULL);
  bt_sent_t sent = bt_call_sent(call, 0);
  CHECK(sent.output_count == 1);
  CHECK(bt_sent_output(&sent, "OUTPUT0") == NULL);
  const bt_tensor_t *diff = bt_sent_output(&sent, "OUTPUT1");
  REQUIRE(diff != NULL && diff->size == ROW_BYTES);
  CHECK(((const int32_t *)diff->data)[0] == 2);
  bt_call_free(call);
}

static void only_requested_outputs(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple", kSimple, requested_outputs_body));
}

/* Asked for in the other order than the backend makes them: both still
 * come, each with its own values (bk_outputs_requested's one pass). */
static void reversed_outputs_body(bt_server_t *s) {
  static const char *const outputs[] = {"OUTPUT1", "OUTPUT0"};
  bt_call_t *call = row_call(s, outputs, 2);
  REQUIRE(call != NULL);
  bt_sent_t sent = bt_call_sent(call, 0);
  CHECK(sent.error == NULL && sent.output_count == 2);
  const bt_tensor_t *sum = bt_sent_output(&sent, "OUTPUT0");
  const bt_tensor_t *diff = bt_sent_output(&sent, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL && sum->size == ROW_BYTES &&
          diff->size == ROW_BYTES);
  CHECK(((const int32_t *)sum->data)[0] == 8 && ((const int32_t *)diff->data)[0] == 2);
  bt_call_free(call);
}

static void outputs_asked_in_reverse_order(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple", kSimple, reversed_outputs_body));
}

static void int8_body(bt_server_t *s) {
  int8_t a[16], b[16];
  for (int i = 0; i < 16; i++) {
    a[i] = (int8_t)(120 + i % 8);
    b[i] = (int8_t)(-120 + i);
  }
  int64_t shape[2] = {1, 16};
  bt_call_t *call = bt_call_new(s, "simple_int8");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_INT8, shape, 2, a, 16, 2);
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_INT8, shape, 2, b, 16, 1);
  bt_call_output(call, "OUTPUT0");
  bt_call_output(call, "OUTPUT1");
  REQUIRE(bt_call_send(call));
  REQUIRE(bt_call_wait_done(call, bt_ms(5000)));
  bt_sent_t sent = bt_call_sent(call, 0);
  const bt_tensor_t *sum = bt_sent_output(&sent, "OUTPUT0");
  const bt_tensor_t *diff = bt_sent_output(&sent, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL && sum->size == 16 && diff->size == 16);
  for (int i = 0; i < 16; i++) {
    CHECK(((const int8_t *)sum->data)[i] == (int8_t)(uint8_t)(a[i] + b[i]));
    CHECK(((const int8_t *)diff->data)[i] == (int8_t)(uint8_t)(a[i] - b[i]));
  }
  CHECK(((const int8_t *)diff->data)[8] == (int8_t)(120 - (-112) - 256)); /* 232 wraps */
  bt_call_free(call);
}

static void simple_int8_wraps(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple_int8",
                      SIMPLE_CONFIG("simple_int8", "TYPE_INT8"), int8_body));
}

/* Three requests; the bad ones fail alone. The missing INPUT1 goes first
 * and alone (no other request has its inputs); the short INPUT1 and the
 * good request then go out as one batch of 2, the preferred size. */
static void per_request_body(bt_server_t *s) {
  int32_t a[16] = {1}, b[16] = {2};
  int64_t good[2] = {1, 16}, short_shape[2] = {1, 8};
  bt_call_t *calls[3];
  for (int i = 0; i < 3; i++) {
    calls[i] = bt_call_new(s, "var");
    bt_call_output(calls[i], "OUTPUT0");
    bt_call_input(calls[i], "INPUT0", TRITONSERVER_TYPE_INT32, good, 2, a, sizeof a, 1);
  }
  bt_call_input(calls[1], "INPUT1", TRITONSERVER_TYPE_INT32, short_shape, 2, b, 32, 1);
  bt_call_input(calls[2], "INPUT1", TRITONSERVER_TYPE_INT32, good, 2, b, sizeof b, 1);
  for (int i = 0; i < 3; i++) CHECK(bt_call_send(calls[i]));
  for (int i = 0; i < 3; i++) {
    REQUIRE(bt_call_wait_done(calls[i], bt_ms(5000)));
    CHECK(bt_call_sent_count(calls[i]) == 1);
  }
  bt_sent_t missing = bt_call_sent(calls[0], 0), shorter = bt_call_sent(calls[1], 0),
            fine = bt_call_sent(calls[2], 0);
  CHECK(shorter.error != NULL && shorter.code == TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(shorter.error != NULL && strstr(shorter.error, "INPUT1") != NULL);
  CHECK(shorter.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL &&
        shorter.output_count == 0);
  CHECK(fine.error == NULL && fine.output_count == 1 && fine.outputs[0].size == 64 &&
        ((const int32_t *)fine.outputs[0].data)[0] == 3);
  CHECK(missing.error != NULL && missing.code == TRITONSERVER_ERROR_NOT_FOUND);
  CHECK(missing.error != NULL && strstr(missing.error, "input 'INPUT1' is missing"));
  CHECK(bt_stats_reach(
      s, "var", (bt_stats_t){.success = 1, .fail = 2, .executions = 1, .inferences = 1}));
  for (int i = 0; i < 3; i++) bt_call_free(calls[i]);
}

static void errors_are_per_request(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "var",
                      VAR_CONFIG(",\"dynamic_batching\":{\"preferred_batch_size\":[2],"
                                 "\"max_queue_delay_microseconds\":10000000}"),
                      per_request_body));
}

/* The server checks byte sizes and datatypes against the config before
 * any backend sees the request (addsub's own checks of them cannot be
 * reached through a server). */
static void refused_body(bt_server_t *s) {
  int32_t a[16] = {0};
  int8_t small[16] = {0};
  int64_t shape[2] = {1, 16};
  bt_call_t *c1 = bt_call_new(s, "simple"), *c2 = bt_call_new(s, "simple");
  bt_call_input(c1, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, a, 60, 1);
  bt_call_input(c1, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, a, 64, 1);
  bt_call_input(c2, "INPUT0", TRITONSERVER_TYPE_INT8, shape, 2, small, 16, 1);
  bt_call_input(c2, "INPUT1", TRITONSERVER_TYPE_INT8, shape, 2, small, 16, 1);
  CHECK(bt_call_refused(c1, TRITONSERVER_ERROR_INVALID_ARG,
                        "input byte size mismatch for input 'INPUT0' for model "
                        "'simple'. Expected 64, got 60"));
  CHECK(bt_call_refused(c2, TRITONSERVER_ERROR_INVALID_ARG,
                        "inference input 'INPUT0' data-type is 'INT8', but model "
                        "'simple' expects 'INT32'"));
  CHECK(bt_stats_reach(s, "simple", (bt_stats_t){0}));
  bt_call_free(c1);
  bt_call_free(c2);
}

static void wrong_byte_size_and_type(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "simple", kSimple, refused_body));
}

/* An empty tensor ([1,0]: the server takes no batch of 0) gives empty
 * outputs. */
static void empty_body(bt_server_t *s) {
  int64_t shape[2] = {1, 0};
  bt_call_t *call = bt_call_new(s, "var");
  bt_call_input(call, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, NULL, 0, 1);
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2, NULL, 0, 1);
  bt_call_output(call, "OUTPUT0");
  REQUIRE(bt_call_send(call));
  REQUIRE(bt_call_wait_done(call, bt_ms(5000)));
  bt_sent_t sent = bt_call_sent(call, 0);
  CHECK(sent.error == NULL && sent.output_count == 1 && sent.outputs[0].size == 0);
  CHECK(sent.outputs[0].dims == 2 && sent.outputs[0].shape[1] == 0);
  bt_call_free(call);
}

static void empty_batch_dim(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "var", VAR_CONFIG(""), empty_body));
}

#define INT32(name, dims) TENSOR(name, "TYPE_INT32", dims)

/* No OUTPUT1. */
static const char *kThreeTensors =
    "{\"name\":\"bad\",\"backend\":\"addsub\","
    "\"input\":[" INT32("INPUT0", "[16]") "," INT32("INPUT1", "[16]") "],"
    "\"output\":[" INT32("OUTPUT0", "[16]") "]}";

/* INPUT1 shorter than INPUT0. */
static const char *kUnequalDims =
    "{\"name\":\"bad\",\"backend\":\"addsub\","
    "\"input\":[" INT32("INPUT0", "[16]") "," INT32("INPUT1", "[8]") "],"
    "\"output\":[" INT32("OUTPUT0", "[16]") "," INT32("OUTPUT1", "[16]") "]}";

static void bad_configs_are_rejected(void) {
  bt_server_t s;
  REQUIRE(bt_start(&s, BT_BACKENDS, NULL));
  CHECK(bt_load_fails_with(&s, "bad", SIMPLE_CONFIG("bad", "TYPE_STRING"),
                           "not an integer or float type"));
  CHECK(bt_load_fails_with(&s, "bad", SIMPLE_CONFIG("bad", "TYPE_BOOL"),
                           "model 'bad' (backend 'addsub')"));
  CHECK(
      bt_load_fails_with(&s, "bad", kThreeTensors,
                         "expected inputs INPUT0, INPUT1 and outputs OUTPUT0, OUTPUT1"));
  CHECK(bt_load_fails_with(&s, "bad", kUnequalDims,
                           "'INPUT1' must have the datatype and dims of INPUT0"));
  /* Text that is not JSON never reaches the backend: the server refuses it. */
  CHECK(bt_load_fails_with(&s, "bad", "{not json",
                           "failed to load 'bad': invalid config override: Error "
                           "parsing JSON"));
  bt_stop(&s);
}

UNIT_MAIN("addsub", UNIT_CASE(simple_batch_of_two_split_inputs),
          UNIT_CASE(only_requested_outputs), UNIT_CASE(outputs_asked_in_reverse_order),
          UNIT_CASE(simple_int8_wraps), UNIT_CASE(errors_are_per_request),
          UNIT_CASE(wrong_byte_size_and_type), UNIT_CASE(empty_batch_dim),
          UNIT_CASE(bad_configs_are_rejected))
