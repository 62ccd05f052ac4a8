/* Raw inputs (TRITONSERVER_InferenceRequestAddRawInput) through the
 * identity backend: type and shape come from the model's only input (a
 * batch dimension of 1, the variable dimension from the byte count; a
 * BYTES input gets its length prepended), with Triton's refusals. */
#include <string.h>

#include "test/backends/call.h"
#include "test/unit/unit.h"

static const char *kFloats =
    "{\"name\":\"floats\",\"backend\":\"identity\",\"max_batch_size\":4,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}]}";

static const char *kBytes =
    "{\"name\":\"bytes\",\"backend\":\"identity\",\"max_batch_size\":0,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[1]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[1]}]}";

static const char *kStrings =
    "{\"name\":\"strings\",\"backend\":\"identity\",\"max_batch_size\":0,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]}]}";

static const char *kPairs =
    "{\"name\":\"pairs\",\"backend\":\"identity\",\"max_batch_size\":0,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[2]},"
    "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_FP32\",\"dims\":[2]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[2]},"
    "{\"name\":\"OUTPUT1\",\"data_type\":\"TYPE_FP32\",\"dims\":[2]}]}";

static bool answered(bt_call_t *call) {
  return bt_call_send(call) && bt_call_wait_done(call, bt_ms(5000));
}

static void floats_body(bt_server_t *s) {
  const float f[3] = {1.5f, -2, 8};
  bt_call_t *call = bt_call_new(s, "floats");
  bt_call_raw_input(call, "raw", f, sizeof f, 2); /* any name: the model's is used */
  REQUIRE(answered(call));
  bt_sent_t sent = bt_call_sent(call, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  REQUIRE(sent.error == NULL && out != NULL);
  CHECK(out->datatype == TRITONSERVER_TYPE_FP32);
  CHECK(out->dims == 2 && out->shape[0] == 1 && out->shape[1] == 3);
  CHECK(out->size == sizeof f && memcmp(out->data, f, sizeof f) == 0);
  bt_call_free(call);
}

static void deduced_shape(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "floats", kFloats, floats_body));
}

static void bytes_body(bt_server_t *s) {
  static const char text[] = "raw bytes, no length";
  bt_call_t *call = bt_call_new(s, "bytes");
  bt_call_raw_input(call, "INPUT0", text, strlen(text), 1);
  REQUIRE(answered(call));
  bt_sent_t sent = bt_call_sent(call, 0);
  const bt_tensor_t *out = bt_sent_output(&sent, "OUTPUT0");
  REQUIRE(sent.error == NULL && out != NULL);
  CHECK(out->datatype == TRITONSERVER_TYPE_BYTES && out->dims == 1 && out->shape[0] == 1);
  char got[64];
  CHECK(bt_bytes_at(out, 0, got, sizeof got) && strcmp(got, text) == 0);
  bt_call_free(call);
}

static void bytes_get_their_length(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "bytes", kBytes, bytes_body));
}

static void strings_body(bt_server_t *s) {
  bt_call_t *call = bt_call_new(s, "strings");
  bt_call_raw_input(call, "INPUT0", "x", 1, 1);
  CHECK(bt_call_refused(call, TRITONSERVER_ERROR_INVALID_ARG,
                        "For BYTE datatype raw input 'INPUT0', the model must have input "
                        "shape [1]"));
  bt_call_free(call);
}

static void bytes_of_unknown_count_refused(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "strings", kStrings, strings_body));
}

static void pairs_body(bt_server_t *s) {
  const float f[2] = {1, 2};
  bt_call_t *call = bt_call_new(s, "pairs");
  bt_call_raw_input(call, "INPUT0", f, sizeof f, 1);
  CHECK(bt_call_refused(call, TRITONSERVER_ERROR_INVALID_ARG,
                        "Raw request must only have 1 input (found 1) to be deduced but got "
                        "2 inputs in 'pairs' model configuration"));
  bt_call_free(call);
  /* A raw input joins no other input. */
  int64_t shape[1] = {2};
  call = bt_call_new(s, "pairs");
  bt_call_input(call, "INPUT1", TRITONSERVER_TYPE_FP32, shape, 1, f, sizeof f, 1);
  bt_call_raw_input(call, "INPUT0", f, sizeof f, 1);
  CHECK(bt_call_refused(call, TRITONSERVER_ERROR_INVALID_ARG,
                        "raw input 'INPUT0' can't be added to request with other inputs"));
  bt_call_free(call);
}

static void only_for_one_input_models(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "pairs", kPairs, pairs_body));
}

UNIT_MAIN("raw_input", UNIT_CASE(deduced_shape), UNIT_CASE(bytes_get_their_length),
          UNIT_CASE(bytes_of_unknown_count_refused), UNIT_CASE(only_for_one_input_models))
