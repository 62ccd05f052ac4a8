/* In-process requests that run (bls*.c), as a BLS backend sends them: the
 * outputs and callbacks of simple, input data in every form, BYTES split
 * anywhere, a decoupled model's responses, and many requests from several
 * threads at once. Requests go from test threads; callbacks arrive on the
 * runtime's workers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/bls/bls_test_env.h"

static void test_simple_infer(void) {
  srv_model_t *m = blt_model("simple");
  REQUIRE(m != NULL);
  uint64_t success = blt_success_count(m);
  int starts_before = atomic_load(&blt_starts);
  blt_call_t c;
  blt_call_init(&c, 7);
  TRITONSERVER_InferenceRequest *r = blt_simple_request(&c, "req-1");
  REQUIRE(r != NULL);
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT1"));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT0"));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT1")); /* a set */
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(&c));
  usleep(20000); /* room for a wrong second callback to show */
  CHECK_EQ_U64(atomic_load(&c.responses), 1);
  CHECK_EQ_U64(atomic_load(&c.releases), 1);
  CHECK_EQ_U64(c.flags[0], FINAL);
  CHECK_EQ_U64(atomic_load(&blt_starts) - starts_before, 1);
  TRITONSERVER_InferenceResponse *resp = c.resp[0];
  REQUIRE(resp != NULL);
  CHECK(TRITONSERVER_InferenceResponseError(resp) == NULL);
  const char *s;
  int64_t version;
  uint32_t n;
  OK(TRITONSERVER_InferenceResponseModel(resp, &s, &version));
  CHECK_STREQ(s, "simple");
  CHECK_EQ_U64(version, 1);
  OK(TRITONSERVER_InferenceResponseId(resp, &s));
  CHECK_STREQ(s, "req-1");
  OK(TRITONSERVER_InferenceResponseOutputCount(resp, &n));
  REQUIRE(n == 2);
  blt_output_check(resp, 0, "OUTPUT0", &c, false); /* the backend's order */
  blt_output_check(resp, 1, "OUTPUT1", &c, true);
  OK(TRITONSERVER_InferenceResponseParameterCount(resp, &n));
  CHECK_EQ_U64(n, 0);
  CHECK_EQ_U64(blt_success_count(m), success + 1);
  /* Released, the request is the caller's again: reuse it, one output. */
  OK(TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(r));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT1"));
  blt_call_free(&c);
  blt_call_init(&c, 7);
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(&c));
  OK(TRITONSERVER_InferenceResponseOutputCount(c.resp[0], &n));
  REQUIRE(n == 1);
  blt_output_check(c.resp[0], 0, "OUTPUT1", &c, true);
  blt_call_free(&c);
  OK(TRITONSERVER_InferenceRequestDelete(r));
  CHECK_EQ_U64(atomic_load(&blt_live_buffers), 0);
}

/* Data appended with buffer attributes reads as AppendInputData's; data
 * for a host policy is checked as the input's own is, kept apart from it
 * (simple's backend reads the input's own), and dropped with it. */
static void test_input_data_variants(void) {
  blt_call_t c;
  blt_call_init(&c, 3);
  TRITONSERVER_InferenceRequest *r = NULL;
  const int64_t shape[2] = {1, 16};
  OK(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "simple", -1));
  REQUIRE(r != NULL);
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  TRITONSERVER_BufferAttributes *a = NULL;
  OK(TRITONSERVER_BufferAttributesNew(&a));
  OK(TRITONSERVER_BufferAttributesSetByteSize(a, sizeof c.in0));
  OK(TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(r, "INPUT0", c.in0,
                                                                      a));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, sizeof c.in1,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
      r, "INPUT1", c.in1, 8, TRITONSERVER_MEMORY_CPU, 0, "cpu"));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, blt_on_release, &c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, blt_env.allocator, NULL,
                                                      blt_on_response, &c));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG, "INPUT1");
  OK(TRITONSERVER_InferenceRequestRemoveAllInputData(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, sizeof c.in1,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
      r, "INPUT1", c.in1, sizeof c.in1, TRITONSERVER_MEMORY_CPU, 0, "cpu"));
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(&c));
  REQUIRE(c.resp[0] != NULL);
  blt_output_check(c.resp[0], 0, "OUTPUT0", &c, false);
  blt_error_expect(TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
                       r, "INPUT0", c.in0, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG, "buffer_attributes must not be NULL");
  blt_error_expect(TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
                       r, "nope", c.in0, 4, TRITONSERVER_MEMORY_CPU, 0, "cpu"),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "input 'nope' does not exist in request");
  blt_call_free(&c);
  OK(TRITONSERVER_InferenceRequestDelete(r));
  OK(TRITONSERVER_BufferAttributesDelete(a));
}

/* repeat_int32: one response per element, then a flags-only final, which
 * reaches the user as a NULL response with the FINAL flag. */
static void repeat_run(const int32_t *in, uint32_t n, blt_call_t *c) {
  static const uint32_t delay[4] = {0, 0, 0, 0}, wait_ms = 0;
  const int64_t shape[1] = {n}, one[1] = {1};
  TRITONSERVER_InferenceRequest *r = NULL;
  OK(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "repeat_int32", -1));
  REQUIRE(r != NULL);
  OK(TRITONSERVER_InferenceRequestAddInput(r, "IN", TRITONSERVER_TYPE_INT32, shape, 1));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "DELAY", TRITONSERVER_TYPE_UINT32, shape,
                                           1));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "WAIT", TRITONSERVER_TYPE_UINT32, one, 1));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "IN", in, 4 * n,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "DELAY", delay, 4 * n,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "WAIT", &wait_ms, 4,
                                                  TRITONSERVER_MEMORY_CPU_PINNED, 0));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, blt_on_release, c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, blt_env.allocator, NULL,
                                                      blt_on_response, c));
  c->delete_request = true;
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(c));
}

static void test_decoupled(void) {
  static const int32_t in[3] = {10, 20, 30};
  blt_call_t c;
  blt_call_init(&c, 0);
  repeat_run(in, 3, &c);
  usleep(20000);
  REQUIRE(atomic_load(&c.responses) == 4);
  CHECK_EQ_U64(atomic_load(&c.finals), 1);
  CHECK_EQ_U64(atomic_load(&c.releases), 1);
  for (uint32_t i = 0; i < 3; i++) {
    CHECK_EQ_U64(c.flags[i], 0);
    REQUIRE(c.resp[i] != NULL);
    blt_output_t o;
    blt_output_get(c.resp[i], 0, &o);
    CHECK_STREQ(o.name, "OUT");
    REQUIRE(o.size == 4);
    CHECK(*(const int32_t *)o.base == in[i]);
  }
  CHECK(c.resp[3] == NULL && c.flags[3] == FINAL);
  blt_call_free(&c);
  /* No element: nothing but the final flag. */
  blt_call_init(&c, 0);
  repeat_run(in, 0, &c);
  CHECK_EQ_U64(atomic_load(&c.responses), 1);
  CHECK(c.resp[0] == NULL && c.flags[0] == FINAL);
  blt_call_free(&c);
}

/* BYTES data split anywhere, even inside a length prefix, is one tensor. */
static void test_bytes_split(void) {
  char data[16 * 6];
  size_t len = 0;
  for (int i = 0; i < 16; i++) {
    char s[3];
    int n = snprintf(s, sizeof s, "%d", i);
    uint32_t l = (uint32_t)n;
    memcpy(data + len, &l, 4); /* little-endian host */
    memcpy(data + len + 4, s, (size_t)n);
    len += 4 + (size_t)n;
  }
  blt_call_t c;
  blt_call_init(&c, 0);
  c.delete_request = true;
  const int64_t shape[2] = {1, 16};
  TRITONSERVER_InferenceRequest *r = NULL;
  OK(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "simple_string", -1));
  REQUIRE(r != NULL);
  const char *names[2] = {"INPUT0", "INPUT1"};
  for (int k = 0; k < 2; k++) {
    OK(TRITONSERVER_InferenceRequestAddInput(r, names[k], TRITONSERVER_TYPE_BYTES, shape,
                                             2));
    size_t cuts[3] = {2, 7, len}; /* inside the first prefix, inside an element */
    size_t from = 0;
    for (int j = 0; j < 3; j++) {
      OK(TRITONSERVER_InferenceRequestAppendInputData(
          r, names[k], data + from, cuts[j] - from, TRITONSERVER_MEMORY_CPU, 0));
      from = cuts[j];
    }
  }
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT0"));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, blt_on_release, &c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, blt_env.allocator, NULL,
                                                      blt_on_response, &c));
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(&c));
  REQUIRE(c.resp[0] != NULL);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(c.resp[0]);
  if (err != NULL) fprintf(stderr, "  %s\n", TRITONSERVER_ErrorMessage(err));
  CHECK(err == NULL);
  uint32_t n = 0;
  OK(TRITONSERVER_InferenceResponseOutputCount(c.resp[0], &n));
  CHECK_EQ_U64(n, 1);
  blt_call_free(&c);
}

/* ---- many requests from several threads; each release callback deletes
 * its request ---- */

enum { THREADS = 4, WINDOW = 8, ROUNDS = 25 };

static void *client_thread(void *arg) {
  int32_t base = (int32_t)(intptr_t)arg * 100000;
  blt_call_t *calls = calloc(WINDOW, sizeof *calls);
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < WINDOW; i++) {
      blt_call_t *c = &calls[i];
      blt_call_init(c, base + round * WINDOW + i);
      c->delete_request = true;
      TRITONSERVER_InferenceRequest *r = blt_simple_request(c, "");
      if (r == NULL) continue;
      OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
    }
    for (int i = 0; i < WINDOW; i++) {
      blt_call_t *c = &calls[i];
      CHECK(blt_call_wait(c));
      CHECK_EQ_U64(atomic_load(&c->responses), 1);
      if (atomic_load(&c->responses) == 1 && c->resp[0] != NULL) {
        blt_output_check(c->resp[0], 0, "OUTPUT0", c, false);
        blt_output_check(c->resp[0], 1, "OUTPUT1", c, true);
      }
      blt_call_free(c);
    }
  }
  free(calls);
  return NULL;
}

static void test_concurrent_clients(void) {
  srv_model_t *m = blt_model("simple");
  REQUIRE(m != NULL);
  uint64_t success = blt_success_count(m);
  pthread_t t[THREADS];
  for (intptr_t i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, client_thread, (void *)(i + 1));
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ_U64(blt_success_count(m) - success, THREADS * WINDOW * ROUNDS);
  CHECK_EQ_U64(atomic_load(&blt_live_buffers), 0);
}

int main(void) {
  static const unit_case_t cases[] = {
      UNIT_CASE(test_simple_infer),       UNIT_CASE(test_input_data_variants),
      UNIT_CASE(test_decoupled),          UNIT_CASE(test_bytes_split),
      UNIT_CASE(test_concurrent_clients),
  };
  return blt_main("bls_infer", cases, sizeof cases / sizeof cases[0]);
}
