/* The C++ test backend built against our headers: loads, answers OUT0 =
 * IN0 with gathered buffers, honours requested outputs, rejects a config
 * without IN0. */
#include <string.h>

#include "test/backends/testing.h"
#include "test/unit/unit.h"

static const char *kConfig =
    "{\"name\":\"cpp_minimal\",\"backend\":\"cpp_minimal\",\"max_batch_size\":8,"
    "\"input\":[{\"name\":\"IN0\",\"data_type\":\"TYPE_INT32\",\"dims\":[4]}],"
    "\"output\":[{\"name\":\"OUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[4]}]}";

static void copies_input(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_CPP_MINIMAL, "cpp_minimal", "cpp_minimal", kConfig));
  int32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t shape[2] = {2, 4};
  mock_call_t *c1 = mock_call_new(), *c2 = mock_call_new();
  TRITONBACKEND_Request *reqs[2] = {mock_request_new(c1), mock_request_new(c2)};
  mock_request_input(reqs[0], "IN0", TRITONSERVER_TYPE_INT32, shape, 2, in, sizeof in, 3);
  mock_request_output(reqs[0], "OUT0");
  mock_request_input(reqs[1], "IN0", TRITONSERVER_TYPE_INT32, shape, 2, in, sizeof in, 1);
  CHECK(bt_execute(&m, reqs, 2));
  mock_sent_t s1 = mock_call_sent(c1, 0), s2 = mock_call_sent(c2, 0);
  const struct TRITONBACKEND_Output *out = mock_sent_output(&s1, "OUT0");
  REQUIRE(s1.error == NULL && out != NULL);
  CHECK(out->dims == 2 && out->shape[0] == 2 && memcmp(out->data, in, sizeof in) == 0);
  CHECK(s2.error == NULL && s2.output_count == 0); /* OUT0 not requested */
  CHECK(c1->released && c2->released);
  CHECK(atomic_load(&m.instance.stats.success) == 2);
  CHECK(atomic_load(&m.instance.stats.batch_total) == 4);
  mock_call_free(c1);
  mock_call_free(c2);
  CHECK(mock_unload(&m) == 0);
}

static void missing_input_is_an_error_response(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_CPP_MINIMAL, "cpp_minimal", "cpp_minimal", kConfig));
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_output(r, "OUT0");
  CHECK(bt_execute(&m, &r, 1));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.error != NULL && call->released);
  CHECK(atomic_load(&m.instance.stats.fail) == 1);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void config_without_in0(void) {
  mock_loaded_t m;
  TRITONSERVER_Error *err = mock_load(&m, LIB_CPP_MINIMAL, "cpp_minimal", NULL, "x",
                                      "{\"name\":\"x\",\"input\":[]}");
  CHECK(strstr(mock_take_error(err), "cpp_minimal needs input IN0 and output OUT0"));
  CHECK(mock_unload(&m) == 0);
}

UNIT_MAIN("cpp_minimal", UNIT_CASE(copies_input),
          UNIT_CASE(missing_input_is_an_error_response), UNIT_CASE(config_without_in0))
