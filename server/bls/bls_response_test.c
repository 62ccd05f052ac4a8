/* Conversion of a backend response into the user's (bls_response.c), on
 * its own: parameters, classification labels, a failing allocator and one
 * that answers with device memory. The main thread alone. */
#include <string.h>

#include "server/bls/bls_test_env.h"
#include "server/model/response.h"

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
  blt_error_expect(
      TRITONSERVER_InferenceResponseOutputClassificationLabel(resp, 1, 0, &label),
      TRITONSERVER_ERROR_INVALID_ARG, "out of bounds index 1");
  spec->labels = NULL;
  spec->label_count = 0;
}

static void test_response_conversion(void) {
  srv_model_t *m = blt_model("simple");
  REQUIRE(m != NULL);
  TRITONBACKEND_Request fake = {.model = m, .state = srv_infer_state_new(NULL)};
  const char *outputs[1] = {"OUTPUT0"};
  srv_bls_origin_t o = {.model = m,
                        .id = "x",
                        .outputs = outputs,
                        .output_count = 1,
                        .allocator = blt_env.allocator};
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
  blt_error_expect(TRITONSERVER_InferenceResponseParameter(resp, 3, &name, &type, &v),
                   TRITONSERVER_ERROR_INVALID_ARG, "out of bounds index 3");
  labels_check(m, resp);
  OK(TRITONSERVER_InferenceResponseDelete(resp));
  CHECK_EQ_U64(atomic_load(&blt_live_buffers), 0);
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

/* A state that names its model: the backend's outputs are named with the
 * model's own strings (response.h, name_shared). With OUTPUT0's buffer
 * filling the response's room, OUTPUT1's shape is malloc'd, so its name
 * and shape are both outside the room: the conversion must copy the name,
 * not take over (and later free) the model's string. */
static void test_model_named_outputs(void) {
  srv_model_t *m = blt_model("simple");
  REQUIRE(m != NULL);
  TRITONBACKEND_Request fake = {.model = m, .state = srv_infer_state_new(NULL)};
  srv_model_ref(m); /* the state's, dropped with it */
  fake.state->model = m;
  const char *outputs[2] = {"OUTPUT0", "OUTPUT1"};
  srv_bls_origin_t o = {.model = m,
                        .id = "x",
                        .outputs = outputs,
                        .output_count = 2,
                        .allocator = blt_env.allocator};
  TRITONBACKEND_Response *r = NULL;
  TRITONBACKEND_ResponseNew(&r, &fake);
  TRITONBACKEND_Output *out[2];
  const int64_t shape[2][1] = {{124}, {2}};
  const uint64_t bytes[2] = {496, 8};
  for (uint32_t i = 0; i < 2; i++) {
    void *buf;
    TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
    int64_t id = 0;
    OK(TRITONBACKEND_ResponseOutput(r, &out[i], outputs[i], TRITONSERVER_TYPE_INT32,
                                    shape[i], 1));
    OK(TRITONBACKEND_OutputBuffer(out[i], &buf, bytes[i], &mt, &id));
    memset(buf, 0, bytes[i]);
  }
  REQUIRE(out[1]->name_shared && !srv_response_room_has(r, out[1]->shape));
  blt_error_expect(TRITONBACKEND_ResponseOutput(r, &out[0], "OUTPUT1",
                                                TRITONSERVER_TYPE_INT32, shape[1], 1),
                   TRITONSERVER_ERROR_ALREADY_EXISTS, "already has an output named");
  TRITONSERVER_InferenceResponse *resp = srv_bls_response_make(&o, r);
  srv_response_free(r);
  uint32_t n = 0;
  OK(TRITONSERVER_InferenceResponseOutputCount(resp, &n));
  REQUIRE(n == 2);
  const char *name;
  TRITONSERVER_DataType dt;
  const int64_t *sh;
  uint64_t dims, size;
  const void *base;
  TRITONSERVER_MemoryType mt;
  int64_t id;
  void *userp;
  OK(TRITONSERVER_InferenceResponseOutput(resp, 1, &name, &dt, &sh, &dims, &base, &size,
                                          &mt, &id, &userp));
  CHECK_STREQ(name, "OUTPUT1");
  CHECK(dims == 1 && sh[0] == 2 && size == 8);
  OK(TRITONSERVER_InferenceResponseDelete(resp));
  CHECK_EQ_U64(atomic_load(&blt_live_buffers), 0);
  srv_infer_state_unref(fake.state);
  /* The model's names are intact. */
  CHECK_STREQ(m->outputs[0].name, "OUTPUT0");
  CHECK_STREQ(m->outputs[1].name, "OUTPUT1");
}

int main(void) {
  static const unit_case_t cases[] = {
      UNIT_CASE(test_response_conversion),
      UNIT_CASE(test_model_named_outputs),
  };
  return blt_main("bls_response", cases, sizeof cases / sizeof cases[0]);
}
