/* In-process requests refused (bls*.c): unknown models, bad requests sent
 * again once put right, batch size, no response callback, a server not
 * ready; and the model questions backends ask. The main thread alone. */
#include <stdbool.h>
#include <stdint.h>

#include "server/bls/bls_test_env.h"

static void test_unknown_model(void) {
  TRITONSERVER_InferenceRequest *r = NULL;
  blt_error_expect(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "nope", -1),
                   TRITONSERVER_ERROR_UNAVAILABLE,
                   "Request for unknown model: 'nope' is not found");
  blt_error_expect(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "simple", 7),
                   TRITONSERVER_ERROR_UNAVAILABLE,
                   "Request for unknown model: 'simple' version 7 is not found");
  /* Empty and NULL names: refused, with Triton's text. */
  blt_error_expect(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "", -1),
                   TRITONSERVER_ERROR_INVALID_ARG, "model name must not be empty");
  blt_error_expect(TRITONSERVER_InferenceRequestNew(&r, blt_server(), NULL, -1),
                   TRITONSERVER_ERROR_INVALID_ARG, "model name must not be empty");
  OK(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "simple", 1));
  OK(TRITONSERVER_InferenceRequestDelete(r));
}

/* Each bad request fails at ServerInferAsync, stays the caller's, and is
 * fixed and sent again. */
static void test_refused_requests(void) {
  blt_call_t c;
  blt_call_init(&c, 3);
  TRITONSERVER_InferenceRequest *r = blt_simple_request(&c, "bad");
  REQUIRE(r != NULL);
  const int64_t good[2] = {1, 16}, short_shape[2] = {1, 15};
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "INPUT1"));
  blt_error_expect(
      TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
      TRITONSERVER_ERROR_INVALID_ARG,
      "expected 2 inputs but got 1 inputs for model 'simple'. Got inputs "
      "['INPUT0'], but missing required inputs ['INPUT1']. Please provide all "
      "required inputs.");
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_FP32, good, 2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, 64,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "inference input 'INPUT1' data-type is 'FP32', but model 'simple' "
                   "expects 'INT32'");
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32,
                                           short_shape, 2));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "unexpected shape for input 'INPUT1' for model 'simple'. Expected "
                   "[-1,16], got [1,15]");
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, good,
                                           2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, 60,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "input byte size mismatch for input 'INPUT1' for model 'simple'. "
                   "Expected 64, got 60");
  OK(TRITONSERVER_InferenceRequestRemoveAllInputData(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, 64,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT9"));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "unexpected inference output 'OUTPUT9' for model 'simple'");
  OK(TRITONSERVER_InferenceRequestRemoveRequestedOutput(r, "OUTPUT9"));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "EXTRA", TRITONSERVER_TYPE_INT32, good, 2));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "unexpected inference input 'EXTRA' for model 'simple'");
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "EXTRA"));
  /* Builder errors, Triton's wording. */
  blt_error_expect(TRITONSERVER_InferenceRequestAddInput(
                       r, "INPUT1", TRITONSERVER_TYPE_INT32, good, 2),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "input 'INPUT1' already exists in request");
  blt_error_expect(TRITONSERVER_InferenceRequestAppendInputData(
                       r, "NOPE", c.in1, 4, TRITONSERVER_MEMORY_CPU, 0),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "input 'NOPE' does not exist in request");
  blt_error_expect(TRITONSERVER_InferenceRequestAppendInputData(
                       r, "INPUT1", c.in1, 4, (TRITONSERVER_MemoryType)99, 0),
                   TRITONSERVER_ERROR_INVALID_ARG, "unknown memory type 99");
  /* Everything put right, it flies. */
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(&c));
  CHECK(TRITONSERVER_InferenceResponseError(c.resp[0]) == NULL);
  blt_output_check(c.resp[0], 0, "OUTPUT0", &c, false);
  blt_call_free(&c);
  OK(TRITONSERVER_InferenceRequestDelete(r));
}

static void test_refused_batch_and_state(void) {
  blt_call_t c;
  blt_call_init(&c, 1);
  TRITONSERVER_InferenceRequest *r = blt_simple_request(&c, "");
  REQUIRE(r != NULL);
  const int64_t big[2] = {9, 16};
  OK(TRITONSERVER_InferenceRequestRemoveAllInputs(r));
  static int32_t data[9 * 16];
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT0", TRITONSERVER_TYPE_INT32, big, 2));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, big, 2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT0", data, sizeof data,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", data, sizeof data,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG,
                   "inference request batch-size must be <= 8 for 'simple'");
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, NULL, NULL, NULL, NULL));
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_INVALID_ARG, "no response callback");
  atomic_store(&blt_env.srv.state, SRV_STATE_STARTING);
  blt_error_expect(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL),
                   TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  bool ready = true;
  blt_error_expect(TRITONSERVER_ServerModelIsReady(blt_server(), "simple", -1, &ready),
                   TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  CHECK(!ready);
  atomic_store(&blt_env.srv.state, SRV_STATE_READY);
  OK(TRITONSERVER_InferenceRequestDelete(r));
  CHECK_EQ_U64(atomic_load(&c.responses) + atomic_load(&c.releases), 0);
  blt_call_free(&c);
}

static void test_model_queries(void) {
  bool ready = false;
  OK(TRITONSERVER_ServerModelIsReady(blt_server(), "simple", -1, &ready));
  CHECK(ready);
  OK(TRITONSERVER_ServerModelIsReady(blt_server(), "simple", 1, &ready));
  CHECK(ready);
  OK(TRITONSERVER_ServerModelIsReady(blt_server(), "simple", 2, &ready));
  CHECK(!ready);
  OK(TRITONSERVER_ServerModelIsReady(blt_server(), "nope", -1, &ready));
  CHECK(!ready);
  OK(TRITONSERVER_ServerModelIsReady(blt_server(), NULL, -1, &ready));
  CHECK(!ready);
  uint32_t txn = 0;
  void *voidp = &txn;
  OK(TRITONSERVER_ServerModelTransactionProperties(blt_server(), "simple", -1, &txn,
                                                   &voidp));
  CHECK_EQ_U64(txn, TRITONSERVER_TXN_ONE_TO_ONE);
  CHECK(voidp == NULL);
  OK(TRITONSERVER_ServerModelTransactionProperties(blt_server(), "repeat_int32", -1, &txn,
                                                   NULL));
  CHECK_EQ_U64(txn, TRITONSERVER_TXN_DECOUPLED);
  blt_error_expect(
      TRITONSERVER_ServerModelTransactionProperties(blt_server(), "nope", -1, &txn, NULL),
      TRITONSERVER_ERROR_UNAVAILABLE, "Request for unknown model: 'nope' is not found");
}

int main(void) {
  static const unit_case_t cases[] = {
      UNIT_CASE(test_unknown_model),
      UNIT_CASE(test_refused_requests),
      UNIT_CASE(test_refused_batch_and_state),
      UNIT_CASE(test_model_queries),
  };
  return blt_main("bls_refusal", cases, sizeof cases / sizeof cases[0]);
}
