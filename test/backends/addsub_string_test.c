/* The addsub_string backend (`simple_string`): decimal BYTES arithmetic,
 * int32 wrapping, split buffers, bad elements and malformed data. */
#include <stdio.h>
#include <string.h>

#include "test/backends/testing.h"
#include "test/unit/unit.h"

#define TENSOR(name, dims) \
  "{\"name\":\"" name "\",\"data_type\":\"TYPE_STRING\",\"dims\":" dims "}"

static const char *kConfig =
    "{\"name\":\"simple_string\",\"backend\":\"addsub_string\",\"max_batch_size\":8,"
    "\"input\":[" TENSOR("INPUT0", "[16]") "," TENSOR("INPUT1", "[16]") "],"
    "\"output\":[" TENSOR("OUTPUT0", "[16]") "," TENSOR("OUTPUT1", "[16]") "]}";

/* Runs one [1,16] request; returns its call (caller frees). */
static mock_call_t *run(mock_loaded_t *m, const char *const *a, const char *const *b,
                        uint32_t pieces) {
  static uint8_t ba[1024], bb[1024];
  size_t na = bt_bytes_make(ba, a, 16), nb = bt_bytes_make(bb, b, 16);
  int64_t shape[2] = {1, 16};
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  mock_request_input(r, "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, ba, na, pieces);
  mock_request_input(r, "INPUT1", TRITONSERVER_TYPE_BYTES, shape, 2, bb, nb, 1);
  mock_request_output(r, "OUTPUT0");
  mock_request_output(r, "OUTPUT1");
  CHECK(bt_execute(m, &r, 1));
  return call;
}

static void sums_and_differences(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_ADDSUB_STRING, "addsub_string", "simple_string", kConfig));
  char sa[16][16], sb[16][16];
  const char *a[16], *b[16];
  for (int i = 0; i < 16; i++) {
    snprintf(sa[i], sizeof sa[i], "%d", i);
    snprintf(sb[i], sizeof sb[i], "%d", i == 15 ? 1 : -3 * i);
    a[i] = sa[i];
    b[i] = sb[i];
  }
  a[14] = "2147483647"; /* + 1 wraps, as in TensorFlow's int32 Add */
  b[14] = "1";
  a[15] = " +7 ";                       /* surrounding spaces and a sign are accepted */
  mock_call_t *call = run(&m, a, b, 3); /* buffers split inside elements */
  mock_sent_t s = mock_call_sent(call, 0);
  REQUIRE(s.error == NULL);
  const struct TRITONBACKEND_Output *sum = mock_sent_output(&s, "OUTPUT0");
  const struct TRITONBACKEND_Output *diff = mock_sent_output(&s, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL);
  CHECK(sum->datatype == TRITONSERVER_TYPE_BYTES && sum->dims == 2 &&
        sum->shape[1] == 16);
  char got[32], want[32];
  for (int i = 0; i < 14; i++) {
    snprintf(want, sizeof want, "%d", i - 3 * i);
    CHECK(bt_bytes_at(sum, (size_t)i, got, sizeof got) && strcmp(got, want) == 0);
    snprintf(want, sizeof want, "%d", i + 3 * i);
    CHECK(bt_bytes_at(diff, (size_t)i, got, sizeof got) && strcmp(got, want) == 0);
  }
  CHECK(bt_bytes_at(sum, 14, got, sizeof got) && strcmp(got, "-2147483648") == 0);
  CHECK(bt_bytes_at(diff, 14, got, sizeof got) && strcmp(got, "2147483646") == 0);
  CHECK(bt_bytes_at(sum, 15, got, sizeof got) && strcmp(got, "8") == 0);
  CHECK(!bt_bytes_at(sum, 16, got, sizeof got));
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void bad_element_names_tensor(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_ADDSUB_STRING, "addsub_string", "simple_string", kConfig));
  const char *a[16], *b[16];
  for (int i = 0; i < 16; i++) a[i] = b[i] = "1";
  b[3] = "abc";
  mock_call_t *call = run(&m, a, b, 1);
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(call->released && s.output_count == 0);
  CHECK(s.error != NULL && s.code == TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(s.error != NULL && strstr(s.error, "input 'INPUT1': element 3 ('abc')") != NULL);
  mock_call_free(call);
  b[3] = "1";
  a[0] = "99999999999";
  call = run(&m, a, b, 1);
  s = mock_call_sent(call, 0);
  CHECK(s.error != NULL && strstr(s.error, "input 'INPUT0': element 0") != NULL);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void malformed_bytes(void) {
  mock_loaded_t m;
  REQUIRE(bt_load(&m, LIB_ADDSUB_STRING, "addsub_string", "simple_string", kConfig));
  const char *e[16];
  for (int i = 0; i < 16; i++) e[i] = "12";
  uint8_t good[256];
  size_t n = bt_bytes_make(good, e, 16);
  int64_t shape[2] = {1, 16};
  mock_call_t *c1 = mock_call_new(), *c2 = mock_call_new();
  TRITONBACKEND_Request *reqs[2] = {mock_request_new(c1), mock_request_new(c2)};
  /* Truncated: the last element's bytes are cut. */
  mock_request_input(reqs[0], "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, good, n - 1,
                     1);
  mock_request_input(reqs[0], "INPUT1", TRITONSERVER_TYPE_BYTES, shape, 2, good, n, 1);
  /* Well formed, but 15 elements for a shape of 16. */
  mock_request_input(reqs[1], "INPUT0", TRITONSERVER_TYPE_BYTES, shape, 2, good, n, 1);
  mock_request_input(reqs[1], "INPUT1", TRITONSERVER_TYPE_BYTES, shape, 2, good, n - 6,
                     1);
  mock_request_output(reqs[0], "OUTPUT0");
  mock_request_output(reqs[1], "OUTPUT0");
  CHECK(bt_execute(&m, reqs, 2));
  mock_sent_t s1 = mock_call_sent(c1, 0), s2 = mock_call_sent(c2, 0);
  CHECK(s1.error != NULL && strstr(s1.error, "input 'INPUT0': malformed BYTES") != NULL);
  CHECK(s2.error != NULL &&
        strstr(s2.error, "input 'INPUT1': 15 BYTES elements") != NULL);
  mock_call_free(c1);
  mock_call_free(c2);
  CHECK(mock_unload(&m) == 0);
}

static void numeric_config_is_rejected(void) {
  mock_loaded_t m;
  const char *cfg =
      "{\"name\":\"x\",\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\"},"
      "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_STRING\"}],\"output\":["
      "{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_STRING\"},"
      "{\"name\":\"OUTPUT1\",\"data_type\":\"TYPE_STRING\"}]}";
  TRITONSERVER_Error *err =
      mock_load(&m, LIB_ADDSUB_STRING, "addsub_string", NULL, "x", cfg);
  CHECK(strstr(mock_take_error(err),
               "input 'INPUT0' must exist with data_type TYPE_STRING"));
  CHECK(mock_unload(&m) == 0);
}

UNIT_MAIN("addsub_string", UNIT_CASE(sums_and_differences),
          UNIT_CASE(bad_element_names_tensor), UNIT_CASE(malformed_bytes),
          UNIT_CASE(numeric_config_is_rejected))
