/* The repeat backend (`repeat_int32`, decoupled): response streams, the
 * final flag, WAIT and DELAY timing, interleaving, cancellation, errors,
 * and unloading with streams in flight. */
#include <string.h>
#include <time.h>

#include "backends/common/clock.h"
#include "test/backends/testing.h"
#include "test/unit/unit.h"

#define TENSOR(name, type, dims) \
  "{\"name\":\"" name "\",\"data_type\":\"" type "\",\"dims\":" dims "}"

#define REPEAT_CONFIG(decoupled)                                                         \
  "{\"name\":\"repeat_int32\",\"backend\":\"repeat\",\"max_batch_size\":0,"              \
  "\"model_transaction_policy\":{\"decoupled\":" decoupled                               \
  "},"                                                                                   \
  "\"input\":[" TENSOR("IN", "TYPE_INT32", "[-1]") "," TENSOR(                           \
      "DELAY", "TYPE_UINT32",                                                            \
      "[-1]") "," TENSOR("WAIT", "TYPE_UINT32",                                          \
                         "[1]") "],\"output\":[" TENSOR("OUT", "TYPE_INT32",             \
                                                        "[1]") "," TENSOR("IDX",         \
                                                                          "TYPE_UINT32", \
                                                                          "[1]") "]}"

static bool load(mock_loaded_t *m) {
  return bt_load(m, LIB_REPEAT, "repeat", "repeat_int32", REPEAT_CONFIG("true"));
}

/* A request for IN/DELAY of n elements; the arrays must live until Execute
 * has returned. */
static TRITONBACKEND_Request *request(mock_call_t *call, const int32_t *in,
                                      const uint32_t *delay, uint32_t n,
                                      const uint32_t *wait) {
  TRITONBACKEND_Request *r = mock_request_new(call);
  int64_t shape[1] = {n}, one[1] = {1};
  mock_request_input(r, "IN", TRITONSERVER_TYPE_INT32, shape, 1, in, 4ull * n,
                     n > 1 ? 2 : 1);
  mock_request_input(r, "DELAY", TRITONSERVER_TYPE_UINT32, shape, 1, delay, 4ull * n, 1);
  mock_request_input(r, "WAIT", TRITONSERVER_TYPE_UINT32, one, 1, wait, 4, 1);
  mock_request_output(r, "OUT");
  mock_request_output(r, "IDX");
  return r;
}

static int32_t out_of(const mock_sent_t *s, const char *name) {
  const struct TRITONBACKEND_Output *o = mock_sent_output(s, name);
  return o != NULL && o->size == 4 ? *(const int32_t *)o->data : -999;
}

static void one_to_many(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[4] = {4, 2, 0, 1};
  uint32_t delay[4] = {1, 2, 3, 4}, wait = 0;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request(call, in, delay, 4, &wait);
  CHECK(bt_execute(&m, &r, 1));
  REQUIRE(mock_call_wait_done(call, bt_ms(5000)));
  REQUIRE(mock_call_sent_count(call) == 5);
  for (uint32_t i = 0; i < 4; i++) {
    mock_sent_t s = mock_call_sent(call, i);
    CHECK(s.is_response && s.error == NULL && s.flags == 0);
    CHECK(out_of(&s, "OUT") == in[i] && out_of(&s, "IDX") == (int32_t)i);
  }
  mock_sent_t last = mock_call_sent(call, 4);
  CHECK(!last.is_response && last.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  CHECK(atomic_load(&m.instance.stats.success) == 1);
  CHECK(atomic_load(&m.instance.stats.batch_total) == 1);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void one_to_none(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  uint32_t wait = 0;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request(call, NULL, NULL, 0, &wait);
  CHECK(bt_execute(&m, &r, 1));
  REQUIRE(mock_call_wait_done(call, bt_ms(5000)));
  REQUIRE(mock_call_sent_count(call) == 1);
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(!s.is_response && s.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void requested_subset(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[1] = {9};
  uint32_t delay[1] = {0}, wait = 0;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = mock_request_new(call);
  int64_t shape[1] = {1};
  mock_request_input(r, "IN", TRITONSERVER_TYPE_INT32, shape, 1, in, 4, 1);
  mock_request_input(r, "DELAY", TRITONSERVER_TYPE_UINT32, shape, 1, delay, 4, 1);
  mock_request_input(r, "WAIT", TRITONSERVER_TYPE_UINT32, shape, 1, &wait, 4, 1);
  mock_request_output(r, "IDX");
  CHECK(bt_execute(&m, &r, 1));
  REQUIRE(mock_call_wait_done(call, bt_ms(5000)));
  mock_sent_t s = mock_call_sent(call, 0);
  CHECK(s.output_count == 1 && out_of(&s, "IDX") == 0 &&
        mock_sent_output(&s, "OUT") == NULL);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

/* Execute returns after WAIT, not after the DELAYs: the request is released
 * while its responses are still to come. */
static void execute_does_not_wait_for_delays(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[2] = {1, 2};
  uint32_t delay[2] = {300, 300}, wait = 0;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request(call, in, delay, 2, &wait);
  uint64_t t0 = bk_now_ns();
  CHECK(bt_execute(&m, &r, 1));
  CHECK(bk_now_ns() - t0 < 250000000ull);
  CHECK(call->released && mock_call_sent_count(call) == 0);
  CHECK(mock_call_wait_done(call, bt_ms(5000)));
  CHECK(mock_call_sent_count(call) == 3);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void wait_holds_the_request(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[1] = {7};
  uint32_t delay[1] = {0}, wait = 100;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request(call, in, delay, 1, &wait);
  uint64_t t0 = bk_now_ns();
  CHECK(bt_execute(&m, &r, 1));
  CHECK(bk_now_ns() - t0 >= 100000000ull);
  CHECK(mock_call_wait_done(call, bt_ms(5000)));
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

/* Two requests of one Execute answer by time, not one after the other. */
static void streams_interleave(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in_a[2] = {1, 2}, in_b[1] = {3};
  uint32_t delay_a[2] = {0, 300}, delay_b[1] = {100}, wait = 0;
  mock_call_t *a = mock_call_new(), *b = mock_call_new();
  TRITONBACKEND_Request *reqs[2] = {request(a, in_a, delay_a, 2, &wait),
                                    request(b, in_b, delay_b, 1, &wait)};
  CHECK(bt_execute(&m, reqs, 2));
  REQUIRE(mock_call_wait_done(a, bt_ms(5000)) && mock_call_wait_done(b, bt_ms(5000)));
  mock_sent_t a0 = mock_call_sent(a, 0), a1 = mock_call_sent(a, 1),
              b0 = mock_call_sent(b, 0);
  CHECK(a0.seq < b0.seq && b0.seq < a1.seq);
  CHECK(atomic_load(&m.instance.stats.batch_total) == 2);
  mock_call_free(a);
  mock_call_free(b);
  CHECK(mock_unload(&m) == 0);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A cancelled stream stops early (even inside a long DELAY) and still ends
 * with the final flag. */
static void cancellation_stops_the_stream(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[3] = {1, 2, 3};
  uint32_t delay[3] = {0, 600000, 600000}, wait = 0;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request(call, in, delay, 3, &wait);
  CHECK(bt_execute(&m, &r, 1));
  for (int i = 0; i < 500 && mock_call_sent_count(call) == 0; i++) sleep_ms(10);
  atomic_store(&call->cancelled, true);
  REQUIRE(mock_call_wait_done(call, bt_ms(3000)));
  REQUIRE(mock_call_sent_count(call) == 2);
  mock_sent_t s = mock_call_sent(call, 1);
  CHECK(!s.is_response && s.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  mock_call_free(call);
  CHECK(mock_unload(&m) == 0);
}

static void bad_requests_get_one_error_response(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[3] = {1, 2, 3};
  uint32_t delay[2] = {0, 0}, wait = 0;
  mock_call_t *c1 = mock_call_new(), *c2 = mock_call_new();
  TRITONBACKEND_Request *reqs[2] = {request(c1, in, delay, 2, &wait),
                                    mock_request_new(c2)};
  reqs[0]->inputs[0].shape[0] = 3; /* IN has 3 elements, DELAY 2 */
  reqs[0]->inputs[0].byte_size = 12;
  reqs[0]->inputs[0].buffers = 1;
  reqs[0]->inputs[0].size[0] = 12;
  int64_t shape[1] = {3};
  mock_request_input(reqs[1], "IN", TRITONSERVER_TYPE_INT32, shape, 1, in, 12, 1);
  mock_request_input(reqs[1], "DELAY", TRITONSERVER_TYPE_UINT32, shape, 1, in, 12, 1);
  CHECK(bt_execute(&m, reqs, 2));
  REQUIRE(mock_call_wait_done(c1, bt_ms(1000)) && mock_call_wait_done(c2, bt_ms(1000)));
  mock_sent_t s1 = mock_call_sent(c1, 0), s2 = mock_call_sent(c2, 0);
  CHECK(mock_call_sent_count(c1) == 1 && mock_call_sent_count(c2) == 1);
  CHECK(s1.is_response && s1.flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  CHECK(s1.error != NULL && strstr(s1.error, "'DELAY' must have the shape of 'IN'"));
  CHECK(s2.error != NULL && s2.code == TRITONSERVER_ERROR_NOT_FOUND &&
        strstr(s2.error, "input 'WAIT' is missing"));
  CHECK(atomic_load(&m.instance.stats.fail) == 2);
  mock_call_free(c1);
  mock_call_free(c2);
  CHECK(mock_unload(&m) == 0);
}

/* Unloading lets streams in flight finish first. */
static void unload_finishes_streams(void) {
  mock_loaded_t m;
  REQUIRE(load(&m));
  int32_t in[1] = {5};
  uint32_t delay[1] = {100}, wait = 0;
  mock_call_t *call = mock_call_new();
  TRITONBACKEND_Request *r = request(call, in, delay, 1, &wait);
  CHECK(bt_execute(&m, &r, 1));
  CHECK(mock_unload(&m) == 0);
  CHECK(mock_call_wait_done(call, 0));
  CHECK(mock_call_sent_count(call) == 2);
  mock_call_free(call);
}

static void config_checks(void) {
  mock_loaded_t m;
  TRITONSERVER_Error *err =
      mock_load(&m, LIB_REPEAT, "repeat", NULL, "r", REPEAT_CONFIG("false"));
  CHECK(strstr(mock_take_error(err), "decoupled: true"));
  CHECK(mock_unload(&m) == 0);
  err = mock_load(&m, LIB_REPEAT, "repeat", NULL, "r",
                  "{\"name\":\"r\",\"model_transaction_policy\":{\"decoupled\":true}}");
  CHECK(strstr(mock_take_error(err), "expected input 'IN' of type INT32"));
  CHECK(mock_unload(&m) == 0);
}

UNIT_MAIN("repeat", UNIT_CASE(one_to_many), UNIT_CASE(one_to_none),
          UNIT_CASE(requested_subset), UNIT_CASE(execute_does_not_wait_for_delays),
          UNIT_CASE(wait_holds_the_request), UNIT_CASE(streams_interleave),
          UNIT_CASE(cancellation_stops_the_stream),
          UNIT_CASE(bad_requests_get_one_error_response),
          UNIT_CASE(unload_finishes_streams), UNIT_CASE(config_checks))
