/* Request building: shapes and --shape, random data, --input-data files
 * (flat and nested content, implied variable dimensions, batching of
 * consecutive entries), the decoupled parameter, errors that name the input
 * and entry, and the tensors of --shared-memory system in their regions. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grpc_service.upb.h"
#include "test/unit/unit.h"
#include "tools/perf/inputs.h"

/* A: INT32 [16], B: BYTES [-1], C: FP32 [-1, 2]; batching up to 4. */
static perf_input_t model_inputs[3];
static perf_model_t model = {.inputs = model_inputs, .ninputs = 3, .max_batch_size = 4};

static void model_init(void) {
  static char a[] = "A", b[] = "B", c[] = "C";
  model_inputs[0] = (perf_input_t){a, "INT32", PERF_INT32, 4, {16}, 1};
  model_inputs[1] = (perf_input_t){b, "BYTES", PERF_BYTES, 0, {-1}, 1};
  model_inputs[2] = (perf_input_t){c, "FP32", PERF_FP32, 4, {-1, 2}, 2};
}

static perf_shape_opt_t shape_b = {(char *)"B", {3}, 1},
                        shape_c = {(char *)"C", {5, 2}, 2};

static perf_options_t options(void) {
  perf_options_t o;
  memset(&o, 0, sizeof o);
  o.model = "m";
  o.version = "";
  o.mode = PERF_UNARY_ASYNC;
  o.batch_size = 1;
  o.input_data = "random";
  o.string_length = 4;
  return o;
}

/* Request k decoded; NULL if it does not parse. */
static inference_ModelInferRequest *decode(const perf_requests_t *r, size_t k,
                                           upb_Arena *a) {
  return inference_ModelInferRequest_parse(
      (const char *)GRPC_SLICE_START_PTR(r->bodies[k]), GRPC_SLICE_LENGTH(r->bodies[k]),
      a);
}

static void check_shape(const inference_ModelInferRequest_InferInputTensor *t,
                        const int64_t *want, size_t n) {
  size_t got;
  const int64_t *s = inference_ModelInferRequest_InferInputTensor_shape(t, &got);
  CHECK_EQ_U64(got, n);
  for (size_t d = 0; d < n && d < got; d++) CHECK_EQ_U64(s[d], want[d]);
}

static void random_data_with_shapes(void) {
  perf_options_t o = options();
  perf_shape_opt_t shapes[2] = {shape_b, shape_c};
  o.shapes = shapes;
  o.nshapes = 2;
  perf_requests_t r;
  perf_err_t err;
  REQUIRE(perf_requests_build(&o, &model, NULL, &r, &err));
  CHECK_EQ_U64(r.n, 1);
  CHECK_STREQ(r.summary, "A INT32 [1,16], B BYTES [1,3], C FP32 [1,5,2]");
  upb_Arena *a = upb_Arena_New();
  inference_ModelInferRequest *req = decode(&r, 0, a);
  REQUIRE(req != NULL);
  CHECK(upb_StringView_IsEqual(inference_ModelInferRequest_model_name(req),
                               upb_StringView_FromString("m")));
  size_t n, nraw;
  const inference_ModelInferRequest_InferInputTensor *const *ins =
      inference_ModelInferRequest_inputs(req, &n);
  const upb_StringView *raw = inference_ModelInferRequest_raw_input_contents(req, &nraw);
  REQUIRE(n == 3 && nraw == 3);
  check_shape(ins[0], (const int64_t[]){1, 16}, 2);
  check_shape(ins[1], (const int64_t[]){1, 3}, 2);
  check_shape(ins[2], (const int64_t[]){1, 5, 2}, 3);
  CHECK_EQ_U64(raw[0].size, 64);
  CHECK_EQ_U64(raw[1].size, 3 * (4 + 4));
  CHECK_EQ_U64(raw[2].size, 40);
  for (size_t i = 0; i < 10; i++) { /* random FP32 lies in [0, 1) */
    float f;
    memcpy(&f, raw[2].data + 4 * i, 4);
    CHECK(f >= 0 && f < 1);
  }
  CHECK(!inference_ModelInferRequest_has_parameters(req));
  upb_Arena_Free(a);
  perf_requests_free(&r);
}

static void variable_shape_needs_a_flag(void) {
  perf_options_t o = options();
  perf_requests_t r;
  perf_err_t err;
  CHECK(!perf_requests_build(&o, &model, NULL, &r, &err));
  CHECK(strstr(err.msg, "--shape B:") != NULL);
  perf_shape_opt_t shapes[3] = {shape_b, shape_c, {(char *)"D", {1}, 1}};
  o.shapes = shapes;
  o.nshapes = 3;
  CHECK(!perf_requests_build(&o, &model, NULL, &r, &err));
  CHECK(strstr(err.msg, "no input of that name") != NULL);
  o.nshapes = 2;
  o.batch_size = 5;
  CHECK(!perf_requests_build(&o, &model, NULL, &r, &err));
  CHECK(strstr(err.msg, "max_batch_size 4") != NULL);
}

static char *write_temp(const char *text) {
  const char *dir = getenv("TEST_TMPDIR");
  char *path = malloc(512);
  snprintf(path, 512, "%s/inputs_XXXXXX", dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) abort();
  close(fd);
  return path;
}

static const char two_entries[] =
    "{\"data\": [\n"
    " {\"A\": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,-15], \"B\": [\"x\", \"yz\"],\n"
    "  \"C\": {\"content\": [[1, 2], [3, 4]], \"shape\": [2, 2]}},\n"
    " {\"A\": {\"content\": [16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31]},\n"
    "  \"B\": [\"\\u00e9\", 7], \"C\": [5, 6, 7, 8]}\n"
    "]}";

static void input_file_batches_consecutive_entries(void) {
  perf_options_t o = options();
  char *path = write_temp(two_entries);
  o.input_data = path;
  o.batch_size = 2;
  o.mode = PERF_DECOUPLED;
  perf_requests_t r;
  perf_err_t err;
  bool ok = perf_requests_build(&o, &model, NULL, &r, &err);
  if (!ok) fprintf(stderr, "  %s\n", err.msg);
  REQUIRE(ok);
  CHECK_EQ_U64(r.n, 2);
  upb_Arena *a = upb_Arena_New();
  inference_ModelInferRequest *req = decode(&r, 1, a); /* entries 1, then 0 */
  REQUIRE(req != NULL);
  size_t n, nraw;
  const inference_ModelInferRequest_InferInputTensor *const *ins =
      inference_ModelInferRequest_inputs(req, &n);
  const upb_StringView *raw = inference_ModelInferRequest_raw_input_contents(req, &nraw);
  REQUIRE(n == 3 && nraw == 3);
  check_shape(ins[0], (const int64_t[]){2, 16}, 2);
  check_shape(ins[1], (const int64_t[]){2, 2}, 2);
  check_shape(ins[2], (const int64_t[]){2, 2, 2}, 3);
  int32_t first, last;
  memcpy(&first, raw[0].data, 4);
  memcpy(&last, raw[0].data + 124, 4);
  CHECK(first == 16 && last == -15);
  const char bytes[] =
      "\2\0\0\0\xc3\xa9\1\0\0\0"
      "7\1\0\0\0x\2\0\0\0yz";
  CHECK_EQ_U64(raw[1].size, sizeof bytes - 1);
  CHECK(raw[1].size == sizeof bytes - 1 && memcmp(raw[1].data, bytes, raw[1].size) == 0);
  float c0;
  memcpy(&c0, raw[2].data, 4);
  CHECK(c0 == 5.0f);
  inference_InferParameter *p;
  CHECK(inference_ModelInferRequest_parameters_get(
      req, upb_StringView_FromString("triton_enable_empty_final_response"), &p));
  upb_Arena_Free(a);
  perf_requests_free(&r);
  unlink(path);
  free(path);
}

/* Builds from a file with this content; returns the error message. */
static void file_error(const char *text, const char *want) {
  perf_options_t o = options();
  char *path = write_temp(text);
  o.input_data = path;
  perf_requests_t r;
  perf_err_t err;
  bool ok = perf_requests_build(&o, &model, NULL, &r, &err);
  CHECK(!ok);
  if (!ok && strstr(err.msg, want) == NULL) fprintf(stderr, "  got: %s\n", err.msg);
  CHECK(!ok && strstr(err.msg, want) != NULL);
  if (ok) perf_requests_free(&r);
  unlink(path);
  free(path);
}

static void input_file_errors(void) {
  const char *a16 = "\"A\": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]";
  char buf[512];
  file_error("{\"data\": []}", "no non-empty \"data\"");
  file_error("{\"data\": [[{}]]}", "sequences");
  snprintf(buf, sizeof buf, "{\"data\": [{%s, \"B\": [\"x\"], \"C\": [1, 2], \"Z\": 1}]}",
           a16);
  file_error(buf, "no input 'Z'");
  snprintf(buf, sizeof buf, "{\"data\": [{%s, \"C\": [1, 2]}]}", a16);
  file_error(buf, "no value for input B");
  file_error("{\"data\": [{\"A\": [1, 2], \"B\": [\"x\"], \"C\": [1, 2]}]}",
             "2 elements, but the shape holds 16");
  snprintf(buf, sizeof buf, "{\"data\": [{%s, \"B\": [\"x\"], \"C\": [1, 2, 3]}]}", a16);
  file_error(buf, "do not fit its shape");
  file_error(
      "{\"data\": [{\"A\": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,4294967296], "
      "\"B\": [\"x\"], \"C\": [1, 2]}]}",
      "element 15 is not a valid INT32");
  file_error("{\"data\": [{\"A\": [\"x\"]", "line 1, column");
}

/* The value of tensor parameter `key`: a string or an int64 (as text). */
static void param_text(const inference_InferParameter *p, char *buf, size_t cap) {
  if (inference_InferParameter_has_string_param(p)) {
    upb_StringView v = inference_InferParameter_string_param(p);
    snprintf(buf, cap, "%.*s", (int)v.size, v.data);
  } else {
    snprintf(buf, cap, "%lld", (long long)inference_InferParameter_int64_param(p));
  }
}

#define TENSOR_PARAM(type, t, key, buf)                                \
  do {                                                                 \
    inference_InferParameter *p_ = NULL;                               \
    buf[0] = '\0';                                                     \
    if (type##_parameters_get(t, upb_StringView_FromString(key), &p_)) \
      param_text(p_, buf, sizeof buf);                                 \
  } while (0)

/* --shared-memory system: two requests (the file's two entries, batch 1);
 * each input's data lies in its region at the request's offset, no raw
 * contents; each output is asked for into its own region. */
static void shared_memory_regions_hold_the_data(void) {
  perf_options_t o = options();
  char *path = write_temp(two_entries);
  o.input_data = path;
  o.output_shm_size = 4096;
  static char out0[] = "OUT0", out1[] = "OUT1";
  char *outs[2] = {out0, out1};
  perf_model_t m = model;
  m.outputs = outs;
  m.noutputs = 2;
  perf_shm_t *shm = perf_shm_new();
  perf_requests_t r;
  perf_err_t err;
  bool ok = perf_requests_build(&o, &m, shm, &r, &err);
  if (!ok) fprintf(stderr, "  %s\n", err.msg);
  REQUIRE(ok);
  CHECK_EQ_U64(r.n, 2);
  upb_Arena *a = upb_Arena_New();
  const char *region_a = NULL;
  for (size_t k = 0; k < r.n; k++) {
    inference_ModelInferRequest *req = decode(&r, k, a);
    REQUIRE(req != NULL);
    size_t n, nraw, nout;
    const inference_ModelInferRequest_InferInputTensor *const *ins =
        inference_ModelInferRequest_inputs(req, &n);
    inference_ModelInferRequest_raw_input_contents(req, &nraw);
    REQUIRE(n == 3);
    CHECK_EQ_U64(nraw, 0);
    char name[64], size[32], offset[32];
    TENSOR_PARAM(inference_ModelInferRequest_InferInputTensor, ins[0],
                 "shared_memory_region", name);
    TENSOR_PARAM(inference_ModelInferRequest_InferInputTensor, ins[0],
                 "shared_memory_byte_size", size);
    TENSOR_PARAM(inference_ModelInferRequest_InferInputTensor, ins[0],
                 "shared_memory_offset", offset);
    CHECK(strncmp(name, "nereid-perf-", 12) == 0);
    CHECK_STREQ(size, "64");
    CHECK_EQ_U64(strtoull(offset, NULL, 10), 64 * k);
    /* The region's name is its object's key without the slash: read it. */
    char key[80];
    snprintf(key, sizeof key, "/%s", name);
    int fd = shm_open(key, O_RDONLY, 0);
    REQUIRE(fd >= 0);
    int32_t v[2];
    CHECK(pread(fd, v, 4, (off_t)(64 * k)) == 4 && pread(fd, v + 1, 4, 64 * k + 60) == 4);
    CHECK(v[0] == (k ? 16 : 0) && v[1] == (k ? 31 : -15));
    close(fd);
    if (k == 0) region_a = strdup(name);
    if (k == 1) CHECK_STREQ(name, region_a);
    const inference_ModelInferRequest_InferRequestedOutputTensor *const *os =
        inference_ModelInferRequest_outputs(req, &nout);
    REQUIRE(nout == 2);
    CHECK(upb_StringView_IsEqual(
        inference_ModelInferRequest_InferRequestedOutputTensor_name(os[1]),
        upb_StringView_FromString("OUT1")));
    TENSOR_PARAM(inference_ModelInferRequest_InferRequestedOutputTensor, os[1],
                 "shared_memory_byte_size", size);
    CHECK_STREQ(size, "4096");
    TENSOR_PARAM(inference_ModelInferRequest_InferRequestedOutputTensor, os[1],
                 "shared_memory_region", name);
    CHECK(strncmp(name, "nereid-perf-", 12) == 0 && strcmp(name, region_a) != 0);
  }
  upb_Arena_Free(a);
  perf_requests_free(&r);
  /* Never registered: freeing removes the objects, with no RPC. */
  CHECK(perf_shm_free(shm, NULL, 1000, &err));
  char key[80];
  snprintf(key, sizeof key, "/%s", region_a);
  CHECK(shm_open(key, O_RDONLY, 0) < 0 && errno == ENOENT);
  free((void *)region_a);
  unlink(path);
  free(path);
}

static void setup(void) { model_init(); }

UNIT_MAIN("inputs", UNIT_CASE(setup), UNIT_CASE(random_data_with_shapes),
          UNIT_CASE(variable_shape_needs_a_flag),
          UNIT_CASE(input_file_batches_consecutive_entries), UNIT_CASE(input_file_errors),
          UNIT_CASE(shared_memory_regions_hold_the_data))
