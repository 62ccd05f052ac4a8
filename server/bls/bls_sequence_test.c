/* In-process requests of sequences (the sequence batcher): steps of
 * interleaved sequences with implicit state, and the state and trace calls
 * on a request that is not part of one. Requests from the main thread;
 * callbacks on the runtime's workers. */
#include <limits.h>
#include <string.h>

#include "server/bls/bls_test_env.h"

/* ---- in-process requests of a sequence (the sequence batcher) ---- */

/* One step of a sequence of simple_sequence_state (an accumulator in
 * implicit state): *out is its OUTPUT, or INT32_MIN when it failed. */
static void sequence_run(uint64_t id, const char *id_string, uint32_t flags,
                         int32_t value, int32_t *out) {
  *out = INT32_MIN;
  const int64_t shape[2] = {1, 1};
  blt_call_t c;
  blt_call_init(&c, 0);
  c.in0[0] = value;
  TRITONSERVER_InferenceRequest *r = NULL;
  OK(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "simple_sequence_state", -1));
  REQUIRE(r != NULL);
  if (id_string != NULL)
    OK(TRITONSERVER_InferenceRequestSetCorrelationIdString(r, id_string));
  else
    OK(TRITONSERVER_InferenceRequestSetCorrelationId(r, id));
  OK(TRITONSERVER_InferenceRequestSetFlags(r, flags));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT", c.in0, 4,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, blt_on_release, &c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, blt_env.allocator, NULL,
                                                      blt_on_response, &c));
  c.delete_request = true;
  OK(TRITONSERVER_ServerInferAsync(blt_server(), r, NULL));
  REQUIRE(blt_call_wait(&c));
  TRITONSERVER_InferenceResponse *resp = c.resp[0];
  if (resp != NULL && TRITONSERVER_InferenceResponseError(resp) == NULL) {
    blt_output_t o;
    blt_output_get(resp, 0, &o);
    if (o.size == 4) memcpy(out, o.base, 4);
  }
  blt_call_free(&c);
}

static int32_t sequence_step(uint64_t id, const char *id_string, uint32_t flags,
                             int32_t value) {
  int32_t out;
  sequence_run(id, id_string, flags, value, &out);
  return out;
}

static void test_sequence(void) {
  const uint32_t start = TRITONSERVER_REQUEST_FLAG_SEQUENCE_START;
  const uint32_t end = TRITONSERVER_REQUEST_FLAG_SEQUENCE_END;
  CHECK_EQ_U64(sequence_step(55, NULL, start, 3), 3);
  CHECK_EQ_U64(sequence_step(56, NULL, start, 100), 100); /* interleaved */
  CHECK_EQ_U64(sequence_step(55, NULL, 0, 4), 7);
  CHECK_EQ_U64(sequence_step(56, NULL, end, 1), 101);
  CHECK_EQ_U64(sequence_step(55, NULL, end, 5), 12);
  CHECK_EQ_U64(sequence_step(0, "bls-seq", start | end, 9), 9);
  /* Ended: a next request without START is refused. */
  CHECK(sequence_step(55, NULL, 0, 1) == INT32_MIN);
}

static void test_state_and_trace(void) {
  TRITONBACKEND_Request fake = {.model = blt_model("simple")};
  REQUIRE(fake.model != NULL);
  TRITONSERVER_InferenceTrace *trace = (TRITONSERVER_InferenceTrace *)&fake;
  OK(TRITONBACKEND_RequestTrace(&fake, &trace));
  CHECK(trace == NULL);
  blt_error_expect(TRITONSERVER_InferenceTraceReportActivity(NULL, 1, "CUSTOM"),
                   TRITONSERVER_ERROR_INVALID_ARG, "trace is NULL");
  TRITONBACKEND_State *state = (TRITONBACKEND_State *)&fake;
  const int64_t shape[1] = {1};
  blt_error_expect(
      TRITONBACKEND_StateNew(&state, &fake, "OUTPUT_STATE", TRITONSERVER_TYPE_INT32,
                             shape, 1),
      TRITONSERVER_ERROR_INVALID_ARG,
      "unable to add state 'OUTPUT_STATE'. State configuration is missing for "
      "model 'simple'.");
  CHECK(state == NULL);
  fake.model = blt_model("simple_state");
  REQUIRE(fake.model != NULL);
  blt_error_expect(
      TRITONBACKEND_StateNew(&state, &fake, "NOPE", TRITONSERVER_TYPE_INT32, shape, 1),
      TRITONSERVER_ERROR_INVALID_ARG, "state 'NOPE' is not a valid state name.");
  /* A request the sequence batcher did not lend has no slot, so no state
   * (test/e2e/sequence_test.py covers states of real sequences). */
  blt_error_expect(
      TRITONBACKEND_StateNew(&state, &fake, "OUTPUT_STATE", TRITONSERVER_TYPE_INT32,
                             shape, 1),
      TRITONSERVER_ERROR_INVALID_ARG,
      "state 'OUTPUT_STATE' of model 'simple_state': the request is not part "
      "of a sequence");
  CHECK(state == NULL);
  void *buf;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  blt_error_expect(TRITONBACKEND_StateBuffer(NULL, &buf, 4, &mt, &id),
                   TRITONSERVER_ERROR_INVALID_ARG, "state is NULL");
  blt_error_expect(TRITONBACKEND_StateUpdate(NULL), TRITONSERVER_ERROR_INVALID_ARG,
                   "state is NULL");
}

int main(void) {
  static const unit_case_t cases[] = {
      UNIT_CASE(test_sequence),
      UNIT_CASE(test_state_and_trace),
  };
  return blt_main("bls_sequence", cases, sizeof cases / sizeof cases[0]);
}
