/* The in-process inference API (bls*.c) driven as a BLS backend drives it:
 * a real actor runtime, models loaded from a temporary repository with the
 * built-in backends, requests built and sent from test threads, callbacks
 * arriving on the runtime's workers. The main thread sets up and tears
 * down; cases run one after another, some with threads of their own. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/bls/bls.h"
#include "server/core/core.h"
#include "server/core/server.h"
#include "server/model/infer_check.h"
#include "server/model/response.h"
#include "test/unit/unit.h"

#define OK(call) CHECK((call) == NULL)
#define FINAL TRITONSERVER_RESPONSE_COMPLETE_FINAL

static uint64_t success_count(srv_model_t *m) {
  srv_stats_totals_t t;
  srv_stats_totals(&m->stats, &t);
  return t.success.count;
}

static struct {
  srv_options_t opt;
  srv_server_t srv;
  char repo[PATH_MAX];
  TRITONSERVER_ResponseAllocator *allocator;
} env;

static TRITONSERVER_Server *server(void) { return (TRITONSERVER_Server *)&env.srv; }

/* ---- allocator: host buffers, each tagged with its tensor's name ---- */

static atomic_int live_buffers, starts;

static TRITONSERVER_Error *test_alloc(TRITONSERVER_ResponseAllocator *a, const char *name,
                                      size_t size, TRITONSERVER_MemoryType mt, int64_t id,
                                      void *userp, void **buffer, void **buffer_userp,
                                      TRITONSERVER_MemoryType *actual,
                                      int64_t *actual_id) {
  *actual = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  *buffer = NULL;
  *buffer_userp = NULL;
  if (size == 0) return NULL;
  *buffer = malloc(size);
  *buffer_userp = strdup(name);
  atomic_fetch_add(&live_buffers, 1);
  return NULL;
}

static TRITONSERVER_Error *test_release(TRITONSERVER_ResponseAllocator *a, void *buffer,
                                        void *buffer_userp, size_t size,
                                        TRITONSERVER_MemoryType mt, int64_t id) {
  free(buffer);
  free(buffer_userp);
  atomic_fetch_sub(&live_buffers, 1);
  return NULL;
}

static TRITONSERVER_Error *test_start(TRITONSERVER_ResponseAllocator *a, void *userp) {
  atomic_fetch_add(&starts, 1);
  return NULL;
}

/* ---- one request in flight and what came back for it ---- */

typedef struct {
  sem_t done; /* posted by the final response and by the release */
  atomic_int responses, finals, releases;
  TRITONSERVER_InferenceResponse *resp[8];
  uint32_t flags[8];
  bool delete_request; /* the release callback deletes the request */
  int32_t in0[16], in1[16];
} call_t;

static void on_response(TRITONSERVER_InferenceResponse *resp, const uint32_t flags,
                        void *userp) {
  call_t *c = userp;
  int n = atomic_fetch_add(&c->responses, 1);
  if (n < 8) {
    c->resp[n] = resp;
    c->flags[n] = flags;
  } else if (resp != NULL) {
    TRITONSERVER_InferenceResponseDelete(resp);
  }
  if (flags & FINAL) {
    atomic_fetch_add(&c->finals, 1);
    sem_post(&c->done);
  }
}

static void on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                       void *userp) {
  call_t *c = userp;
  CHECK_EQ_U64(flags, TRITONSERVER_REQUEST_RELEASE_ALL);
  atomic_fetch_add(&c->releases, 1);
  if (c->delete_request) OK(TRITONSERVER_InferenceRequestDelete(request));
  sem_post(&c->done);
}

static void call_init(call_t *c, int32_t seed) {
  memset(c, 0, sizeof *c);
  sem_init(&c->done, 0, 0);
  for (int i = 0; i < 16; i++) {
    c->in0[i] = seed + i;
    c->in1[i] = 2 * i - seed;
  }
}

static int slowdown(void) {
  const char *s = getenv("NEREID_TEST_SLOWDOWN");
  return s != NULL && atoi(s) > 0 ? atoi(s) : 1;
}

/* Waits for the final response and the release; false after 10 s (x the
 * sanitizer slowdown). */
static bool call_wait(call_t *c) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 10 * slowdown();
  for (int i = 0; i < 2; i++) {
    while (sem_timedwait(&c->done, &t) != 0)
      if (errno != EINTR) return false;
  }
  return true;
}

static void call_free(call_t *c) {
  int n = atomic_load(&c->responses);
  for (int i = 0; i < n && i < 8; i++)
    if (c->resp[i] != NULL) TRITONSERVER_InferenceResponseDelete(c->resp[i]);
  sem_destroy(&c->done);
}

/* A request for `simple` ([1,16] INT32 inputs) with c's data; INPUT0 in
 * two pieces, so that the backend sees two buffers. */
static TRITONSERVER_InferenceRequest *simple_request(call_t *c, const char *id) {
  TRITONSERVER_InferenceRequest *r = NULL;
  const int64_t shape[2] = {1, 16};
  OK(TRITONSERVER_InferenceRequestNew(&r, server(), "simple", -1));
  if (r == NULL) return NULL;
  OK(TRITONSERVER_InferenceRequestSetId(r, id));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT0", c->in0, 24,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT0", (char *)c->in0 + 24, 40,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c->in1, sizeof c->in1,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, env.allocator, NULL, on_response,
                                                      c));
  return r;
}

/* Checks one output of a `simple` response: the sum or the difference. */
static void check_output(TRITONSERVER_InferenceResponse *resp, uint32_t index,
                         const char *want_name, const call_t *c, bool sub) {
  const char *name;
  TRITONSERVER_DataType dt;
  const int64_t *shape;
  uint64_t dims;
  const void *base;
  size_t size;
  TRITONSERVER_MemoryType mt;
  int64_t mt_id;
  void *userp;
  OK(TRITONSERVER_InferenceResponseOutput(resp, index, &name, &dt, &shape, &dims, &base,
                                          &size, &mt, &mt_id, &userp));
  CHECK_STREQ(name, want_name);
  CHECK_STREQ((const char *)userp, want_name); /* the allocator's tag came back */
  CHECK(dt == TRITONSERVER_TYPE_INT32 && mt == TRITONSERVER_MEMORY_CPU);
  CHECK(dims == 2 && shape[0] == 1 && shape[1] == 16);
  REQUIRE(size == 64 && base != NULL);
  const int32_t *v = base;
  for (int i = 0; i < 16; i++)
    CHECK(v[i] == (sub ? c->in0[i] - c->in1[i] : c->in0[i] + c->in1[i]));
}

static srv_model_t *model(const char *name) {
  /* The registry keeps its own reference while the test runs. */
  srv_model_t *m;
  srv_status_t *st = srv_registry_acquire(env.srv.registry, name, strlen(name), -1, &m);
  srv_status_free(st);
  if (m != NULL) srv_model_unref(m);
  return m;
}

static void test_simple_infer(void) {
  srv_model_t *m = model("simple");
  REQUIRE(m != NULL);
  uint64_t success = success_count(m);
  int starts_before = atomic_load(&starts);
  call_t c;
  call_init(&c, 7);
  TRITONSERVER_InferenceRequest *r = simple_request(&c, "req-1");
  REQUIRE(r != NULL);
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT1"));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT0"));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT1")); /* a set */
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(&c));
  usleep(20000); /* room for a wrong second callback to show */
  CHECK_EQ_U64(atomic_load(&c.responses), 1);
  CHECK_EQ_U64(atomic_load(&c.releases), 1);
  CHECK_EQ_U64(c.flags[0], FINAL);
  CHECK_EQ_U64(atomic_load(&starts) - starts_before, 1);
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
  check_output(resp, 0, "OUTPUT0", &c, false); /* the backend's order */
  check_output(resp, 1, "OUTPUT1", &c, true);
  OK(TRITONSERVER_InferenceResponseParameterCount(resp, &n));
  CHECK_EQ_U64(n, 0);
  CHECK_EQ_U64(success_count(m), success + 1);
  /* Released, the request is the caller's again: reuse it, one output. */
  OK(TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(r));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT1"));
  call_free(&c);
  call_init(&c, 7);
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(&c));
  OK(TRITONSERVER_InferenceResponseOutputCount(c.resp[0], &n));
  REQUIRE(n == 1);
  check_output(c.resp[0], 0, "OUTPUT1", &c, true);
  call_free(&c);
  OK(TRITONSERVER_InferenceRequestDelete(r));
  CHECK_EQ_U64(atomic_load(&live_buffers), 0);
}

/* Expects `err` with `code` and a message containing `text`; frees it. */
static void expect_error(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code,
                         const char *text) {
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), code);
  if (strstr(TRITONSERVER_ErrorMessage(err), text) == NULL) {
    fprintf(stderr, "  message: %s\n  wanted:  %s\n", TRITONSERVER_ErrorMessage(err),
            text);
    CHECK(false);
  }
  TRITONSERVER_ErrorDelete(err);
}

/* Data appended with buffer attributes reads as AppendInputData's; data
 * for a host policy is checked as the input's own is, kept apart from it
 * (simple's backend reads the input's own), and dropped with it. */
static void test_input_data_variants(void) {
  call_t c;
  call_init(&c, 3);
  TRITONSERVER_InferenceRequest *r = NULL;
  const int64_t shape[2] = {1, 16};
  OK(TRITONSERVER_InferenceRequestNew(&r, server(), "simple", -1));
  REQUIRE(r != NULL);
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2));
  TRITONSERVER_BufferAttributes *a = NULL;
  OK(TRITONSERVER_BufferAttributesNew(&a));
  OK(TRITONSERVER_BufferAttributesSetByteSize(a, sizeof c.in0));
  OK(TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(r, "INPUT0", c.in0, a));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, sizeof c.in1,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
      r, "INPUT1", c.in1, 8, TRITONSERVER_MEMORY_CPU, 0, "cpu"));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, &c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, env.allocator, NULL, on_response,
                                                      &c));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG, "INPUT1");
  OK(TRITONSERVER_InferenceRequestRemoveAllInputData(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, sizeof c.in1,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
      r, "INPUT1", c.in1, sizeof c.in1, TRITONSERVER_MEMORY_CPU, 0, "cpu"));
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(&c));
  REQUIRE(c.resp[0] != NULL);
  check_output(c.resp[0], 0, "OUTPUT0", &c, false);
  expect_error(
      TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(r, "INPUT0", c.in0, NULL),
      TRITONSERVER_ERROR_INVALID_ARG, "buffer_attributes must not be NULL");
  expect_error(TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
                   r, "nope", c.in0, 4, TRITONSERVER_MEMORY_CPU, 0, "cpu"),
               TRITONSERVER_ERROR_INVALID_ARG, "input 'nope' does not exist in request");
  call_free(&c);
  OK(TRITONSERVER_InferenceRequestDelete(r));
  OK(TRITONSERVER_BufferAttributesDelete(a));
}

static void test_unknown_model(void) {
  TRITONSERVER_InferenceRequest *r = NULL;
  expect_error(TRITONSERVER_InferenceRequestNew(&r, server(), "nope", -1),
               TRITONSERVER_ERROR_UNAVAILABLE,
               "Request for unknown model: 'nope' is not found");
  expect_error(TRITONSERVER_InferenceRequestNew(&r, server(), "simple", 7),
               TRITONSERVER_ERROR_UNAVAILABLE,
               "Request for unknown model: 'simple' version 7 is not found");
  /* Empty and NULL names: refused, with Triton's text. */
  expect_error(TRITONSERVER_InferenceRequestNew(&r, server(), "", -1),
               TRITONSERVER_ERROR_INVALID_ARG, "model name must not be empty");
  expect_error(TRITONSERVER_InferenceRequestNew(&r, server(), NULL, -1),
               TRITONSERVER_ERROR_INVALID_ARG, "model name must not be empty");
  OK(TRITONSERVER_InferenceRequestNew(&r, server(), "simple", 1));
  OK(TRITONSERVER_InferenceRequestDelete(r));
}

/* Each bad request fails at ServerInferAsync, stays the caller's, and is
 * fixed and sent again. */
static void test_refused_requests(void) {
  call_t c;
  call_init(&c, 3);
  TRITONSERVER_InferenceRequest *r = simple_request(&c, "bad");
  REQUIRE(r != NULL);
  const int64_t good[2] = {1, 16}, short_shape[2] = {1, 15};
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "INPUT1"));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "expected 2 inputs but got 1 inputs for model 'simple'. Got inputs "
               "['INPUT0'], but missing required inputs ['INPUT1']. Please provide all "
               "required inputs.");
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_FP32, good, 2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, 64,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "inference input 'INPUT1' data-type is 'FP32', but model 'simple' "
               "expects 'INT32'");
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32,
                                           short_shape, 2));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "unexpected shape for input 'INPUT1' for model 'simple'. Expected "
               "[-1,16], got [1,15]");
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, good,
                                           2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, 60,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "input byte size mismatch for input 'INPUT1' for model 'simple'. "
               "Expected 64, got 60");
  OK(TRITONSERVER_InferenceRequestRemoveAllInputData(r, "INPUT1"));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c.in1, 64,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT9"));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "unexpected inference output 'OUTPUT9' for model 'simple'");
  OK(TRITONSERVER_InferenceRequestRemoveRequestedOutput(r, "OUTPUT9"));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "EXTRA", TRITONSERVER_TYPE_INT32, good, 2));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "unexpected inference input 'EXTRA' for model 'simple'");
  OK(TRITONSERVER_InferenceRequestRemoveInput(r, "EXTRA"));
  /* Builder errors, Triton's wording. */
  expect_error(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32,
                                                     good, 2),
               TRITONSERVER_ERROR_INVALID_ARG,
               "input 'INPUT1' already exists in request");
  expect_error(TRITONSERVER_InferenceRequestAppendInputData(r, "NOPE", c.in1, 4,
                                                            TRITONSERVER_MEMORY_CPU, 0),
               TRITONSERVER_ERROR_INVALID_ARG, "input 'NOPE' does not exist in request");
  expect_error(TRITONSERVER_InferenceRequestAppendInputData(
                   r, "INPUT1", c.in1, 4, (TRITONSERVER_MemoryType)99, 0),
               TRITONSERVER_ERROR_INVALID_ARG, "unknown memory type 99");
  /* Everything put right, it flies. */
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(&c));
  CHECK(TRITONSERVER_InferenceResponseError(c.resp[0]) == NULL);
  check_output(c.resp[0], 0, "OUTPUT0", &c, false);
  call_free(&c);
  OK(TRITONSERVER_InferenceRequestDelete(r));
}

static void test_refused_batch_and_state(void) {
  call_t c;
  call_init(&c, 1);
  TRITONSERVER_InferenceRequest *r = simple_request(&c, "");
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
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG,
               "inference request batch-size must be <= 8 for 'simple'");
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, NULL, NULL, NULL, NULL));
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_INVALID_ARG, "no response callback");
  atomic_store(&env.srv.state, SRV_STATE_STARTING);
  expect_error(TRITONSERVER_ServerInferAsync(server(), r, NULL),
               TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  bool ready = true;
  expect_error(TRITONSERVER_ServerModelIsReady(server(), "simple", -1, &ready),
               TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  CHECK(!ready);
  atomic_store(&env.srv.state, SRV_STATE_READY);
  OK(TRITONSERVER_InferenceRequestDelete(r));
  CHECK_EQ_U64(atomic_load(&c.responses) + atomic_load(&c.releases), 0);
  call_free(&c);
}

static void test_model_queries(void) {
  bool ready = false;
  OK(TRITONSERVER_ServerModelIsReady(server(), "simple", -1, &ready));
  CHECK(ready);
  OK(TRITONSERVER_ServerModelIsReady(server(), "simple", 1, &ready));
  CHECK(ready);
  OK(TRITONSERVER_ServerModelIsReady(server(), "simple", 2, &ready));
  CHECK(!ready);
  OK(TRITONSERVER_ServerModelIsReady(server(), "nope", -1, &ready));
  CHECK(!ready);
  OK(TRITONSERVER_ServerModelIsReady(server(), NULL, -1, &ready));
  CHECK(!ready);
  uint32_t txn = 0;
  void *voidp = &txn;
  OK(TRITONSERVER_ServerModelTransactionProperties(server(), "simple", -1, &txn, &voidp));
  CHECK_EQ_U64(txn, TRITONSERVER_TXN_ONE_TO_ONE);
  CHECK(voidp == NULL);
  OK(TRITONSERVER_ServerModelTransactionProperties(server(), "repeat_int32", -1, &txn,
                                                   NULL));
  CHECK_EQ_U64(txn, TRITONSERVER_TXN_DECOUPLED);
  expect_error(
      TRITONSERVER_ServerModelTransactionProperties(server(), "nope", -1, &txn, NULL),
      TRITONSERVER_ERROR_UNAVAILABLE, "Request for unknown model: 'nope' is not found");
}

/* repeat_int32: one response per element, then a flags-only final, which
 * reaches the user as a NULL response with the FINAL flag. */
static void repeat_run(const int32_t *in, uint32_t n, call_t *c) {
  static const uint32_t delay[4] = {0, 0, 0, 0}, wait_ms = 0;
  const int64_t shape[1] = {n}, one[1] = {1};
  TRITONSERVER_InferenceRequest *r = NULL;
  OK(TRITONSERVER_InferenceRequestNew(&r, server(), "repeat_int32", -1));
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
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, env.allocator, NULL, on_response,
                                                      c));
  c->delete_request = true;
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(c));
}

static void test_decoupled(void) {
  static const int32_t in[3] = {10, 20, 30};
  call_t c;
  call_init(&c, 0);
  repeat_run(in, 3, &c);
  usleep(20000);
  REQUIRE(atomic_load(&c.responses) == 4);
  CHECK_EQ_U64(atomic_load(&c.finals), 1);
  CHECK_EQ_U64(atomic_load(&c.releases), 1);
  for (uint32_t i = 0; i < 3; i++) {
    CHECK_EQ_U64(c.flags[i], 0);
    REQUIRE(c.resp[i] != NULL);
    const char *name;
    TRITONSERVER_DataType dt;
    const int64_t *shape;
    uint64_t dims;
    const void *base;
    size_t size;
    TRITONSERVER_MemoryType mt;
    int64_t mt_id;
    void *userp;
    OK(TRITONSERVER_InferenceResponseOutput(c.resp[i], 0, &name, &dt, &shape, &dims,
                                            &base, &size, &mt, &mt_id, &userp));
    CHECK_STREQ(name, "OUT");
    REQUIRE(size == 4);
    CHECK(*(const int32_t *)base == in[i]);
  }
  CHECK(c.resp[3] == NULL && c.flags[3] == FINAL);
  call_free(&c);
  /* No element: nothing but the final flag. */
  call_init(&c, 0);
  repeat_run(in, 0, &c);
  CHECK_EQ_U64(atomic_load(&c.responses), 1);
  CHECK(c.resp[0] == NULL && c.flags[0] == FINAL);
  call_free(&c);
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
  call_t c;
  call_init(&c, 0);
  c.delete_request = true;
  const int64_t shape[2] = {1, 16};
  TRITONSERVER_InferenceRequest *r = NULL;
  OK(TRITONSERVER_InferenceRequestNew(&r, server(), "simple_string", -1));
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
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, &c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, env.allocator, NULL, on_response,
                                                      &c));
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(&c));
  REQUIRE(c.resp[0] != NULL);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(c.resp[0]);
  if (err != NULL) fprintf(stderr, "  %s\n", TRITONSERVER_ErrorMessage(err));
  CHECK(err == NULL);
  uint32_t n = 0;
  OK(TRITONSERVER_InferenceResponseOutputCount(c.resp[0], &n));
  CHECK_EQ_U64(n, 1);
  call_free(&c);
}

/* Conversion of a backend response alone: parameters move over, a failing
 * or misplacing allocator turns the response into an error. */
static TRITONSERVER_Error *failing_alloc(TRITONSERVER_ResponseAllocator *a,
                                         const char *name, size_t size,
                                         TRITONSERVER_MemoryType mt, int64_t id,
                                         void *userp, void **buffer, void **buffer_userp,
                                         TRITONSERVER_MemoryType *actual,
                                         int64_t *actual_id) {
  if (userp != NULL) { /* pretend to hand out device memory */
    *buffer = userp;
    *buffer_userp = NULL;
    *actual = TRITONSERVER_MEMORY_GPU;
    *actual_id = 0;
    return NULL;
  }
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE, "out of buffers");
}

static TRITONSERVER_Error *noop_release(TRITONSERVER_ResponseAllocator *a, void *buffer,
                                        void *buffer_userp, size_t size,
                                        TRITONSERVER_MemoryType mt, int64_t id) {
  return NULL;
}

static TRITONBACKEND_Response *backend_response(TRITONBACKEND_Request *fake) {
  TRITONBACKEND_Response *r = NULL;
  TRITONBACKEND_Output *out = NULL;
  const int64_t shape[1] = {2};
  void *buf;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  TRITONBACKEND_ResponseNew(&r, fake);
  TRITONBACKEND_ResponseOutput(r, &out, "OUTPUT0", TRITONSERVER_TYPE_INT32, shape, 1);
  TRITONBACKEND_OutputBuffer(out, &buf, 8, &mt, &id);
  memset(buf, 0, 8);
  TRITONBACKEND_ResponseSetIntParameter(r, "count", 42);
  TRITONBACKEND_ResponseSetStringParameter(r, "note", "hi");
  TRITONBACKEND_ResponseSetBoolParameter(r, "flag", true);
  return r;
}

/* Classification labels: none for simple's outputs; then the two lines a
 * label_filename would give, set on OUTPUT0's spec for the while. */
static void labels_check(srv_model_t *m, TRITONSERVER_InferenceResponse *resp) {
  const char *label = "x";
  OK(TRITONSERVER_InferenceResponseOutputClassificationLabel(resp, 0, 0, &label));
  CHECK(label == NULL);
  srv_tensor_spec_t *spec = NULL;
  for (uint32_t i = 0; i < m->output_count; i++)
    if (strcmp(m->outputs[i].name, "OUTPUT0") == 0) spec = &m->outputs[i];
  REQUIRE(spec != NULL && spec->labels == NULL);
  static const char *const two[2] = {"cat", "dog"};
  spec->labels = two;
  spec->label_count = 2;
  OK(TRITONSERVER_InferenceResponseOutputClassificationLabel(resp, 0, 1, &label));
  CHECK_STREQ(label, "dog");
  OK(TRITONSERVER_InferenceResponseOutputClassificationLabel(resp, 0, 2, &label));
  CHECK(label == NULL);
  expect_error(TRITONSERVER_InferenceResponseOutputClassificationLabel(resp, 1, 0, &label),
               TRITONSERVER_ERROR_INVALID_ARG, "out of bounds index 1");
  spec->labels = NULL;
  spec->label_count = 0;
}

static void test_response_conversion(void) {
  srv_model_t *m = model("simple");
  REQUIRE(m != NULL);
  TRITONBACKEND_Request fake = {.model = m, .state = srv_infer_state_new(NULL)};
  const char *outputs[1] = {"OUTPUT0"};
  srv_bls_origin_t o = {.model = m,
                        .id = "x",
                        .outputs = outputs,
                        .output_count = 1,
                        .allocator = env.allocator};
  TRITONBACKEND_Response *r = backend_response(&fake);
  TRITONSERVER_InferenceResponse *resp = srv_bls_response_make(&o, r);
  srv_response_free(r);
  uint32_t n = 0;
  const char *name;
  TRITONSERVER_ParameterType type;
  const void *v;
  OK(TRITONSERVER_InferenceResponseParameterCount(resp, &n));
  REQUIRE(n == 3);
  OK(TRITONSERVER_InferenceResponseParameter(resp, 0, &name, &type, &v));
  CHECK(strcmp(name, "count") == 0 && type == TRITONSERVER_PARAMETER_INT &&
        *(const int64_t *)v == 42);
  OK(TRITONSERVER_InferenceResponseParameter(resp, 1, &name, &type, &v));
  CHECK(type == TRITONSERVER_PARAMETER_STRING && strcmp(v, "hi") == 0);
  OK(TRITONSERVER_InferenceResponseParameter(resp, 2, &name, &type, &v));
  CHECK(type == TRITONSERVER_PARAMETER_BOOL && *(const bool *)v);
  expect_error(TRITONSERVER_InferenceResponseParameter(resp, 3, &name, &type, &v),
               TRITONSERVER_ERROR_INVALID_ARG, "out of bounds index 3");
  labels_check(m, resp);
  OK(TRITONSERVER_InferenceResponseDelete(resp));
  CHECK_EQ_U64(atomic_load(&live_buffers), 0);
  /* A failing allocator, then one that answers with GPU memory. */
  TRITONSERVER_ResponseAllocator *bad = NULL;
  OK(TRITONSERVER_ResponseAllocatorNew(&bad, failing_alloc, noop_release, NULL));
  o.allocator = bad;
  r = backend_response(&fake);
  resp = srv_bls_response_make(&o, r);
  srv_response_free(r);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(resp);
  REQUIRE(err != NULL);
  CHECK_STREQ(TRITONSERVER_ErrorMessage(err), "out of buffers");
  OK(TRITONSERVER_InferenceResponseOutputCount(resp, &n));
  CHECK_EQ_U64(n, 0);
  OK(TRITONSERVER_InferenceResponseDelete(resp));
  char device[8];
  o.allocator_userp = device;
  r = backend_response(&fake);
  resp = srv_bls_response_make(&o, r);
  srv_response_free(r);
  /* Copied with the CUDA runtime, which fails here: no GPU, or (with one)
   * no device memory at that host address. */
  err = TRITONSERVER_InferenceResponseError(resp);
  REQUIRE(err != NULL);
  CHECK(strstr(TRITONSERVER_ErrorMessage(err), "output 'OUTPUT0'") != NULL ||
        strstr(TRITONSERVER_ErrorMessage(err), "output '") != NULL);
  OK(TRITONSERVER_InferenceResponseDelete(resp));
  OK(TRITONSERVER_ResponseAllocatorDelete(bad));
  srv_infer_state_unref(fake.state);
}

static void test_state_and_trace(void) {
  TRITONBACKEND_Request fake = {.model = model("simple")};
  REQUIRE(fake.model != NULL);
  TRITONSERVER_InferenceTrace *trace = (TRITONSERVER_InferenceTrace *)&fake;
  OK(TRITONBACKEND_RequestTrace(&fake, &trace));
  CHECK(trace == NULL);
  expect_error(TRITONSERVER_InferenceTraceReportActivity(NULL, 1, "CUSTOM"),
               TRITONSERVER_ERROR_INVALID_ARG, "trace is NULL");
  TRITONBACKEND_State *state = (TRITONBACKEND_State *)&fake;
  const int64_t shape[1] = {1};
  expect_error(TRITONBACKEND_StateNew(&state, &fake, "OUTPUT_STATE",
                                      TRITONSERVER_TYPE_INT32, shape, 1),
               TRITONSERVER_ERROR_INVALID_ARG,
               "unable to add state 'OUTPUT_STATE'. State configuration is missing for "
               "model 'simple'.");
  CHECK(state == NULL);
  fake.model = model("simple_state");
  REQUIRE(fake.model != NULL);
  expect_error(
      TRITONBACKEND_StateNew(&state, &fake, "NOPE", TRITONSERVER_TYPE_INT32, shape, 1),
      TRITONSERVER_ERROR_INVALID_ARG, "state 'NOPE' is not a valid state name.");
  /* A request the sequence batcher did not lend has no slot, so no state
   * (test/e2e/sequence_test.py covers states of real sequences). */
  expect_error(TRITONBACKEND_StateNew(&state, &fake, "OUTPUT_STATE",
                                      TRITONSERVER_TYPE_INT32, shape, 1),
               TRITONSERVER_ERROR_INVALID_ARG,
               "state 'OUTPUT_STATE' of model 'simple_state': the request is not part "
               "of a sequence");
  CHECK(state == NULL);
  void *buf;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  expect_error(TRITONBACKEND_StateBuffer(NULL, &buf, 4, &mt, &id),
               TRITONSERVER_ERROR_INVALID_ARG, "state is NULL");
  expect_error(TRITONBACKEND_StateUpdate(NULL), TRITONSERVER_ERROR_INVALID_ARG,
               "state is NULL");
}

/* ---- in-process requests of a sequence (the sequence batcher) ---- */

/* One step of a sequence of simple_sequence_state (an accumulator in
 * implicit state): *out is its OUTPUT, or INT32_MIN when it failed. */
static void sequence_run(uint64_t id, const char *id_string, uint32_t flags,
                         int32_t value, int32_t *out) {
  *out = INT32_MIN;
  const int64_t shape[2] = {1, 1};
  call_t c;
  call_init(&c, 0);
  c.in0[0] = value;
  TRITONSERVER_InferenceRequest *r = NULL;
  OK(TRITONSERVER_InferenceRequestNew(&r, server(), "simple_sequence_state", -1));
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
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, &c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, env.allocator, NULL, on_response,
                                                      &c));
  c.delete_request = true;
  OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
  REQUIRE(call_wait(&c));
  TRITONSERVER_InferenceResponse *resp = c.resp[0];
  if (resp != NULL && TRITONSERVER_InferenceResponseError(resp) == NULL) {
    const char *name;
    TRITONSERVER_DataType dt;
    const int64_t *oshape;
    uint64_t dims;
    const void *base;
    size_t size;
    TRITONSERVER_MemoryType mt;
    int64_t mt_id;
    void *userp;
    OK(TRITONSERVER_InferenceResponseOutput(resp, 0, &name, &dt, &oshape, &dims, &base,
                                            &size, &mt, &mt_id, &userp));
    if (size == 4) memcpy(out, base, 4);
  }
  call_free(&c);
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

/* ---- many requests from several threads; each release callback deletes
 * its request ---- */

enum { THREADS = 4, WINDOW = 8, ROUNDS = 25 };

static void *client_thread(void *arg) {
  int32_t base = (int32_t)(intptr_t)arg * 100000;
  call_t *calls = calloc(WINDOW, sizeof *calls);
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < WINDOW; i++) {
      call_t *c = &calls[i];
      call_init(c, base + round * WINDOW + i);
      c->delete_request = true;
      TRITONSERVER_InferenceRequest *r = simple_request(c, "");
      if (r == NULL) continue;
      OK(TRITONSERVER_ServerInferAsync(server(), r, NULL));
    }
    for (int i = 0; i < WINDOW; i++) {
      call_t *c = &calls[i];
      CHECK(call_wait(c));
      CHECK_EQ_U64(atomic_load(&c->responses), 1);
      if (atomic_load(&c->responses) == 1 && c->resp[0] != NULL) {
        check_output(c->resp[0], 0, "OUTPUT0", c, false);
        check_output(c->resp[0], 1, "OUTPUT1", c, true);
      }
      call_free(c);
    }
  }
  free(calls);
  return NULL;
}

static void test_concurrent_clients(void) {
  srv_model_t *m = model("simple");
  REQUIRE(m != NULL);
  uint64_t success = success_count(m);
  pthread_t t[THREADS];
  for (intptr_t i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, client_thread, (void *)(i + 1));
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ_U64(success_count(m) - success,
               THREADS * WINDOW * ROUNDS);
  CHECK_EQ_U64(atomic_load(&live_buffers), 0);
}

/* ---- set-up: a temporary repository, the built-in backends ---- */

static bool file_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return false;
  fputs(text, f);
  return fclose(f) == 0;
}

static char *file_read(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  char *buf = calloc(1, 1 << 16);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* <repo>/<name>/config.pbtxt with `config` (plus `extra`), and version 1. */
static bool model_add(const char *name, const char *config, const char *extra) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", env.repo, name);
  if (mkdir(path, 0755) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/1", env.repo, name);
  if (mkdir(path, 0755) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/config.pbtxt", env.repo, name);
  char *text = malloc(strlen(config) + strlen(extra) + 256);
  sprintf(text, "%s\n%s\n", config, extra);
  bool ok = file_write(path, text);
  free(text);
  return ok;
}

/* The example models' configs, under other names where needed. */
static bool repository_make(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(env.repo, sizeof env.repo, "%s/bls_repo_XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(env.repo) == NULL) return false;
  char *simple = file_read("examples/models/simple/config.pbtxt");
  char *string = file_read("examples/models/simple_string/config.pbtxt");
  char *repeat = file_read("examples/models/repeat_int32/config.pbtxt");
  bool ok = simple && string && repeat;
  ok = ok && model_add("simple", simple, "");
  ok = ok && model_add("simple_string", string, "");
  ok = ok && model_add("repeat_int32", repeat, "");
  char *sequence = file_read("examples/models/simple_sequence_state/config.pbtxt");
  ok = ok && sequence != NULL && model_add("simple_sequence_state", sequence, "");
  free(sequence);
  char *name = ok ? strstr(simple, "name: \"simple\"") : NULL;
  ok = ok && name != NULL;
  if (ok) memset(name, ' ', strlen("name: \"simple\"")); /* named by its folder */
  ok = ok && model_add("simple_state", simple,
                       "sequence_batching { state [ { input_name: \"INPUT_STATE\" "
                       "output_name: \"OUTPUT_STATE\" data_type: TYPE_INT32 dims: [ 1 ] "
                       "} ] }");
  free(simple);
  free(string);
  free(repeat);
  return ok;
}

static bool server_start(void) {
  if (!repository_make()) return false;
  char backends[PATH_MAX];
  if (realpath("backends", backends) == NULL) return false;
  char repo_flag[PATH_MAX + 32], backend_flag[PATH_MAX + 32];
  snprintf(repo_flag, sizeof repo_flag, "--model-repository=%s", env.repo);
  snprintf(backend_flag, sizeof backend_flag, "--backend-directory=%s", backends);
  char *argv[] = {"nereid", repo_flag, backend_flag, NULL};
  srv_status_t *st = srv_options_parse(&env.opt, 3, argv);
  if (st != NULL) {
    fprintf(stderr, "options: %s\n", srv_status_message(st));
    srv_status_free(st);
    return false;
  }
  env.opt.worker_threads = 2;
  bool all_loaded = false;
  st = srv_core_start(&env.srv, &env.opt, &all_loaded);
  if (st != NULL) {
    fprintf(stderr, "core: %s\n", srv_status_message(st));
    srv_status_free(st);
    return false;
  }
  if (!all_loaded) return false;
  atomic_store(&env.srv.state, SRV_STATE_READY);
  OK(TRITONSERVER_ResponseAllocatorNew(&env.allocator, test_alloc, test_release,
                                       test_start));
  return true;
}

/* The runtime's quiesce waits for every flight actor too: none may be
 * left once all callbacks came. */
static void server_stop(void) {
  srv_core_stop(&env.srv);
  srv_core_free(&env.srv);
  TRITONSERVER_ResponseAllocatorDelete(env.allocator);
  srv_options_free(&env.opt);
}

int main(void) {
  if (!server_start()) {
    fprintf(stderr, "bls_test: cannot start the server\n");
    return 1;
  }
  static const unit_case_t cases[] = {
      UNIT_CASE(test_simple_infer),
      UNIT_CASE(test_input_data_variants),
      UNIT_CASE(test_unknown_model),
      UNIT_CASE(test_sequence),
      UNIT_CASE(test_refused_requests),
      UNIT_CASE(test_refused_batch_and_state),
      UNIT_CASE(test_model_queries),
      UNIT_CASE(test_decoupled),
      UNIT_CASE(test_bytes_split),
      UNIT_CASE(test_response_conversion),
      UNIT_CASE(test_state_and_trace),
      UNIT_CASE(test_concurrent_clients),
  };
  int rc = unit_run("bls", cases, sizeof cases / sizeof cases[0]);
  server_stop();
  return rc;
}
