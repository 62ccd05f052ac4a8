/* The identity backend (`simple_identity`): BYTES and numeric pass-through,
 * split buffers, requested subsets, config pairing. */
#include <string.h>

#include "test/backends/testing.h"
#include "test/unit/unit.h"

static const char *kSimpleIdentity =
    "{\"name\":\"simple_identity\",\"backend\":\"identity\",\"max_batch_size\":8,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]}]}";

static const char *kTwoPairs =
    "{\"name\":\"pairs\",\"max_batch_size\":0,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[2,-1]},"
    "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_UINT16\",\"dims\":[3]}],"
    "\"output\":[{\"name\":\"OUTPUT1\",\"data_type\":\"TYPE_UINT16\",\"dims\":[3]},"
    "{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[2,-1]}]}";

static void bytes_round_trip(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_IDENTITY, "identity", "simple_identity", kSimpleIdentity));
  const char *elems[3] = {"hello", "", "w\xc3\xb6rld"};
  uint8_t buf[64];
  size_t n = bt_bytes_make(buf, elems, 3);
  int64_t shape[2] = {1, 3};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, buf, n, 4);
  mock_request_output(r, "OUTPUT0");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  const struct TRITONBACKEND_Output *out = mock_sent_output(&s, "OUTPUT0");
  REQUIRE(s.error == NULL && out != NULL);
  CHECK(out->datatype == TRITONSERVER_TYPE_BYTES && out->dims == 2 && out->shape[1] == 3);
  CHECK(out->size == n && memcmp(out->data, buf, n) == 0);
  CHECK(atomic_load(&m.instance.stats.batch_total) == 1);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void subset_of_pairs(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_IDENTITY, "identity", "pairs", kTwoPairs));
  float f[6] = {1, 2, 3, 4, 5, 6};
  uint16_t u[3] = {7, 8, 9};
  int64_t fs[2] = {2, 3}, us[1] = {3};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_FP32, fs, 2, f, sizeof f, 1);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_UINT16, us, 1, u, sizeof u, 2);
  mock_request_output(r, "OUTPUT1");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error == NULL && s.output_count == 1);
  const struct TRITONBACKEND_Output *o1 = mock_sent_output(&s, "OUTPUT1");
  REQUIRE(o1 != NULL);
  CHECK(o1->size == sizeof u && memcmp(o1->data, u, sizeof u) == 0);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void no_outputs_requested(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_IDENTITY, "identity", "simple_identity", kSimpleIdentity));
  int64_t shape[2] = {1, 0};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, NULL, 0, 1);
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error == NULL && s.output_count == 0 && call->released);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void shape_outside_config(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_IDENTITY, "identity", "pairs", kTwoPairs));
  uint16_t u[4] = {0};
  int64_t us[1] = {4};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_UINT16, us, 1, u, sizeof u, 1);
  mock_request_output(r, "OUTPUT1");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error != NULL && strstr(s.error, "tensor 'INPUT1': shape [4]") != NULL);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void unpaired_config_is_rejected(void) {
  mock_loaded_t m;
  const char *cfg =
      "{\"name\":\"x\",\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\","
      "\"dims\":[1]}],\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\","
      "\"dims\":[1]}]}";
  TRITONSERVER_Error *err = mock_load(&m, LIB_IDENTITY, "identity", NULL, "x", cfg);
  CHECK(strstr(mock_take_error(err), "output 'OUTPUT0' must have the datatype and dims"));
  CHECK(mock_unload(&m) == 0);
}

UNIT_MAIN("identity", UNIT_CASE(bytes_round_trip), UNIT_CASE(subset_of_pairs),
          UNIT_CASE(no_outputs_requested), UNIT_CASE(shape_outside_config),
          UNIT_CASE(unpaired_config_is_rejected))
