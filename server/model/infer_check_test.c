/* The request checks shared by gRPC and the in-process API, on hand-made
 * models: what passes, and the exact texts of what does not (gRPC clients
 * see them; test/e2e/infer_test.py pins some end to end). One thread. */
#include "server/model/infer_check.h"
#include "server/model/model.h"

#include <string.h>

#include "test/unit/unit.h"

static const int64_t kDims16[1] = {16}, kDimsAny[2] = {-1, 3};

static srv_tensor_spec_t inputs[2] = {
    {.name = "INPUT0",
     .datatype = TRITONSERVER_TYPE_INT32,
     .dims = kDims16,
     .dims_count = 1},
    {.name = "TEXT",
     .datatype = TRITONSERVER_TYPE_BYTES,
     .dims = kDimsAny,
     .dims_count = 2},
};
static const char *output_names[1] = {"OUTPUT0"};

/* A model named `name` with the inputs above; batching when max_batch > 0. */
static void model_make(srv_model_t *m, char *name, int32_t max_batch) {
  memset(m, 0, sizeof *m);
  m->name = name;
  m->max_batch_size = max_batch;
  m->inputs = inputs;
  m->input_count = 2;
  m->output_names = output_names;
  m->output_count = 1;
}

/* Expects a failure whose message is exactly `text`. */
static void expect(srv_status_t *st, const char *text) {
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(srv_status_message(st), text);
  srv_status_free(st);
}

static void test_names_and_types(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const srv_tensor_spec_t *spec = NULL;
  CHECK(srv_check_input_spec(&m, "TEXTX", 4, &spec) == NULL && spec == &inputs[1]);
  expect(srv_check_input_spec(&m, "NOPE", 4, &spec),
         "unexpected inference input 'NOPE' for model 'm'");
  CHECK(srv_check_input_datatype(&m, &inputs[0], TRITONSERVER_TYPE_INT32, "INT32", 5) ==
        NULL);
  expect(srv_check_input_datatype(&m, &inputs[0], TRITONSERVER_TYPE_INVALID, "INT33", 5),
         "inference input 'INPUT0' data-type is 'INT33', but model 'm' expects 'INT32'");
  const char *found = NULL;
  CHECK(srv_check_output_name(&m, "OUTPUT0", 7, &found) == NULL &&
        found == output_names[0]);
  expect(srv_check_output_name(&m, "OUTPUT", 6, &found),
         "unexpected inference output 'OUTPUT' for model 'm'");
}

/* Names are matched exactly over the given length: not a prefix, not a
 * longer name, not one cut by a NUL byte (the client's bytes may hold
 * one), not the empty name. */
static void test_name_edges(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const srv_tensor_spec_t *spec = NULL;
  CHECK(srv_check_input_spec(&m, "INPUT0", 6, &spec) == NULL && spec == &inputs[0]);
  const struct {
    const char *s;
    size_t len;
  } bad[] = {{"INPUT", 5},   {"INPUT00", 7}, {"INPUT0\0", 7}, {"TEX\0", 4},
             {"TEXT\0X", 6}, {"", 0},        {NULL, 0},       {"INPUT1", 6}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    srv_status_t *st = srv_check_input_spec(&m, bad[i].s, bad[i].len, &spec);
    CHECK(st != NULL);
    srv_status_free(st);
    for (size_t first = 0; first < 4; first++) {
      st = srv_check_input_spec_from(&m, first, bad[i].s, bad[i].len, &spec);
      CHECK(st != NULL);
      srv_status_free(st);
    }
  }
  /* From any position (past the end too), wrapping around. */
  for (size_t first = 0; first < 4; first++) {
    spec = NULL;
    CHECK(srv_check_input_spec_from(&m, first, "INPUT0", 6, &spec) == NULL &&
          spec == &inputs[0]);
    spec = NULL;
    CHECK(srv_check_input_spec_from(&m, first, "TEXT", 4, &spec) == NULL &&
          spec == &inputs[1]);
  }
  const char *found = NULL;
  srv_status_t *st = srv_check_output_name(&m, "OUTPUT0\0", 8, &found);
  CHECK(st != NULL);
  srv_status_free(st);
  st = srv_check_output_name(&m, "OUTPUT00", 8, &found);
  CHECK(st != NULL);
  srv_status_free(st);
}

#define BATCH_NOTE "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."

static void test_shapes(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const int64_t ok[2] = {4, 16}, bad[2] = {4, 15}, neg[3] = {-1, 5, 3},
                any[3] = {2, 9, 3};
  CHECK(srv_check_input_shape(&m, &inputs[0], ok, 2) == NULL);
  CHECK(srv_check_input_shape(&m, &inputs[1], any, 3) == NULL);
  /* Triton's texts, its advice on the batch dimension included. */
  expect(srv_check_input_shape(&m, &inputs[0], bad, 2),
         "unexpected shape for input 'INPUT0' for model 'm'. Expected [-1,16], got "
         "[4,15]. " BATCH_NOTE);
  expect(srv_check_input_shape(&m, &inputs[0], ok + 1, 1),
         "unexpected shape for input 'INPUT0' for model 'm'. Expected [-1,16], got "
         "[16]. " BATCH_NOTE);
  expect(srv_check_input_shape(&m, &inputs[1], neg, 3),
         "unexpected shape for input 'TEXT' for model 'm'. Expected [-1,-1,3], got "
         "[-1,5,3]. " BATCH_NOTE);
  const int64_t wild[3] = {2, -1, 3};
  expect(srv_check_input_shape(&m, &inputs[1], wild, 3),
         "All input dimensions should be specified for input 'TEXT' for model 'm', got "
         "[2,-1,3]");
  expect(srv_check_input_shape(&m, &inputs[0], ok, 0),
         "input 'INPUT0' has no shape but model requires batch dimension for 'm'");
  static srv_model_t flat;
  model_make(&flat, "flat", 0);
  CHECK(srv_check_input_shape(&flat, &inputs[0], ok + 1, 1) == NULL);
  /* Without batching, Triton's text ends in ". " (no advice follows). */
  expect(srv_check_input_shape(&flat, &inputs[0], ok, 2),
         "unexpected shape for input 'INPUT0' for model 'flat'. Expected [16], got "
         "[4,16]. ");
}

/* Shapes whose element count or byte size wraps in 64 bits passed, with
 * little or no data (infer_request_fuzz found [2, 2^62] for an FP16 input
 * accepted with no bytes). */
static void test_shapes_too_large(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const int64_t wraps[2] = {INT64_C(1) << 62, 16}, fits[2] = {INT64_C(1) << 30, 16};
  expect(srv_check_input_shape(&m, &inputs[0], wraps, 2),
         "input 'INPUT0' for model 'm': shape [4611686018427387904,16] is too large: its "
         "data would not fit in 2^64 bytes");
  CHECK(srv_check_input_shape(&m, &inputs[0], fits, 2) == NULL);
  /* BYTES: 2^64 elements would count as none; 2^62 x 3 need 2^64 x 3 bytes of
   * length prefixes at least. */
  const int64_t none[3] = {INT64_C(1) << 32, INT64_C(1) << 32, 3},
                prefixes[3] = {1, INT64_C(1) << 62, 3};
  expect(srv_check_input_shape(&m, &inputs[1], none, 3),
         "input 'TEXT' for model 'm': shape [4294967296,4294967296,3] is too large: its "
         "data would not fit in 2^64 bytes");
  expect(srv_check_input_shape(&m, &inputs[1], prefixes, 3),
         "input 'TEXT' for model 'm': shape [1,4611686018427387904,3] is too large: its "
         "data would not fit in 2^64 bytes");
}

static void test_fixed_size_data(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const int64_t shape[2] = {2, 16};
  static char data[128];
  srv_buffer_t b[2] = {{.base = data, .size = 100}, {.base = data + 100, .size = 28}};
  uint64_t size = 0;
  CHECK(srv_check_input_data(&m, &inputs[0], TRITONSERVER_TYPE_INT32, shape, 2, b, 2,
                             &size) == NULL);
  CHECK_EQ_U64(size, 128);
  b[1].size = 27;
  expect(srv_check_input_data(&m, &inputs[0], TRITONSERVER_TYPE_INT32, shape, 2, b, 2,
                              &size),
         "input byte size mismatch for input 'INPUT0' for model 'm'. Expected 128, got "
         "127");
}

/* BYTES framing over several buffers, cut anywhere (even in a prefix). */
static void test_bytes_data(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const int64_t shape[3] = {1, 1, 2}, none[3] = {1, 0, 3};
  const char ok[] = "\1\0\0\0a\2\0\0\0bc";
  srv_buffer_t b[3] = {{.base = ok, .size = 3}, {.base = ok + 3, .size = 0}, {.base = ok + 3, .size = 8}};
  uint64_t size = 0;
  CHECK(srv_check_input_data(&m, &inputs[1], TRITONSERVER_TYPE_BYTES, shape, 3, b, 3,
                             &size) == NULL);
  CHECK_EQ_U64(size, 11);
  const char *short_text =
      "input 'TEXT' for model 'm': BYTES data does not hold exactly 2 length-prefixed "
      "elements";
  b[2].size = 7;
  expect(srv_check_input_data(&m, &inputs[1], TRITONSERVER_TYPE_BYTES, shape, 3, b, 3,
                              &size),
         short_text);
  const char extra[] = "\1\0\0\0a\2\0\0\0bcX";
  srv_buffer_t e[2] = {{.base = extra, .size = 11}, {.base = extra + 11, .size = 1}};
  expect(srv_check_input_data(&m, &inputs[1], TRITONSERVER_TYPE_BYTES, shape, 3, e, 2,
                              &size),
         short_text);
  CHECK(srv_check_input_data(&m, &inputs[1], TRITONSERVER_TYPE_BYTES, none, 3, NULL, 0,
                             &size) == NULL);
  CHECK_EQ_U64(size, 0);
}

static void test_request_wide(void) {
  static srv_model_t m;
  model_make(&m, "m", 8);
  const int64_t s4[2] = {4, 16}, s3[3] = {3, 1, 3}, s9[2] = {9, 16};
  struct TRITONBACKEND_Input in[2] = {{.name = inputs[0].name, .shape = s4},
                                      {.name = inputs[1].name, .shape = s3}};
  TRITONBACKEND_Request r;
  memset(&r, 0, sizeof r);
  r.inputs = in;
  r.input_count = 1;
  expect(srv_check_required_inputs(&m, &r),
         "expected 2 inputs but got 1 inputs for model 'm'. Got inputs ['INPUT0'], but "
         "missing required inputs ['TEXT']. Please provide all required inputs.");
  /* Checked before any input is looked at: too many, too few. */
  const srv_input_name_t three[3] = {{"INPUT0", 6}, {"TEXT", 4}, {"EXTRA", 5}};
  expect(srv_check_input_count(&m, three, 3),
         "expected 2 inputs but got 3 inputs for model 'm'. Got inputs "
         "['INPUT0','TEXT','EXTRA'], but missing required inputs []. Please provide all "
         "required inputs.");
  expect(srv_check_input_count(&m, three + 2, 1),
         "expected 2 inputs but got 1 inputs for model 'm'. Got inputs ['EXTRA'], but "
         "missing required inputs ['INPUT0','TEXT']. Please provide all required "
         "inputs.");
  expect(srv_check_input_count(&m, three, 0),
         "expected 2 inputs but got 0 inputs for model 'm'. Got inputs [], but missing "
         "required inputs ['INPUT0','TEXT']. Please provide all required inputs.");
  CHECK(srv_check_input_count(&m, three, 2) == NULL);
  r.input_count = 2;
  CHECK(srv_check_required_inputs(&m, &r) == NULL);
  expect(srv_check_batch(&m, &r),
         "input 'TEXT' batch size does not match other inputs for 'm'");
  r.input_count = 1;
  CHECK(srv_check_batch(&m, &r) == NULL);
  CHECK_EQ_U64(r.batch_size, 4);
  in[0].shape = s9;
  expect(srv_check_batch(&m, &r), "inference request batch-size must be <= 8 for 'm'");
  static srv_model_t flat;
  model_make(&flat, "flat", 0);
  CHECK(srv_check_batch(&flat, &r) == NULL);
  CHECK_EQ_U64(r.batch_size, 1);
}

/* The same status as two checks in a row give: NULL, or the first error. */
static void expect_same(srv_status_t *fused, srv_status_t *first, srv_status_t *second,
                        uint64_t fused_size, uint64_t size) {
  srv_status_t *want = first != NULL ? first : second;
  CHECK((fused == NULL) == (want == NULL));
  if (fused != NULL && want != NULL)
    CHECK_STREQ(srv_status_message(fused), srv_status_message(want));
  if (fused == NULL && want == NULL) CHECK_EQ_U64(fused_size, size);
  srv_status_free(fused);
  srv_status_free(first);
  srv_status_free(second);
}

/* srv_check_input_shape_data gives what srv_check_input_shape, then
 * srv_check_input_data, give: good and bad shapes (wrong, negative,
 * unspecified, too large, none), data one byte short, exact or over, for
 * a fixed-size type and for BYTES. */
static void test_shape_data_as_two_checks(void) {
  static srv_model_t m, flat;
  model_make(&m, "m", 8);
  model_make(&flat, "flat", 0);
  static const int64_t shapes[][3] = {{2, 16}, {4, 15}, {-1, 16}, {2, -1, 3}, {3, 1, 3},
                                      {3, 2, 3}, {INT64_C(1) << 62, 16},
                                      {1, INT64_C(1) << 62, 3}, {16}, {0, 16}};
  static const size_t dims[] = {2, 2, 2, 3, 3, 3, 2, 3, 1, 2};
  /* BYTES: three elements "a", "bc", "" as 4-byte prefixes and bytes. */
  static const char strings[] = "\1\0\0\0a\2\0\0\0bc\0\0\0\0";
  static char data[256];
  const srv_model_t *models[2] = {&m, &flat};
  for (size_t k = 0; k < 2; k++)
    for (size_t t = 0; t < 2; t++)
      for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (int64_t delta = -1; delta <= 1; delta++) {
          const srv_tensor_spec_t *spec = &inputs[t];
          uint64_t len = t == 0 ? 128 : sizeof strings - 1;
          if (t == 0 && dims[i] == 1) len = 64;
          srv_buffer_t b = {.base = t == 0 ? data : strings, .size = len + delta};
          if (t == 1 && delta > 0) b.size = len; /* no byte past the string */
          uint64_t fused_size = 0, size = 0;
          srv_status_t *fused = srv_check_input_shape_data(models[k], spec, shapes[i],
                                                           dims[i], &b, 1, &fused_size);
          srv_status_t *first = srv_check_input_shape(models[k], spec, shapes[i], dims[i]);
          srv_status_t *second =
              first != NULL ? NULL
                            : srv_check_input_data(models[k], spec, spec->datatype,
                                                   shapes[i], dims[i], &b, 1, &size);
          expect_same(fused, first, second, fused_size, size);
        }
  /* Both kinds of success seen: a fixed-size one and a BYTES one. */
  const int64_t one[3] = {1, 1, 3};
  srv_buffer_t b = {.base = strings, .size = sizeof strings - 1};
  uint64_t size = 0;
  CHECK(srv_check_input_shape_data(&m, &inputs[1], one, 3, &b, 1, &size) == NULL);
  CHECK_EQ_U64(size, sizeof strings - 1);
  const int64_t two[2] = {2, 16};
  b = (srv_buffer_t){.base = data, .size = 128};
  CHECK(srv_check_input_shape_data(&m, &inputs[0], two, 2, &b, 1, &size) == NULL);
  CHECK_EQ_U64(size, 128);
}

/* srv_check_input_count_ok agrees with srv_check_input_count, the count of
 * required inputs skipped when every input is given. */
static void test_input_count_ok(void) {
  static srv_model_t m;
  model_make(&m, "m", 0);
  const srv_input_name_t names[3] = {{"INPUT0", 6}, {"TEXT", 4}, {"EXTRA", 5}};
  for (size_t n = 0; n <= 3; n++) {
    srv_status_t *st = srv_check_input_count(&m, names, n);
    CHECK(srv_check_input_count_ok(&m, n) == (n == 2));
    CHECK((st == NULL) == (n == 2));
    srv_status_free(st);
  }
  srv_tensor_spec_t one_optional[2] = {inputs[0], inputs[1]};
  one_optional[1].optional = true;
  m.inputs = one_optional;
  for (size_t n = 0; n <= 3; n++) {
    srv_status_t *st = srv_check_input_count(&m, names, n);
    CHECK(srv_check_input_count_ok(&m, n) == (n == 1 || n == 2));
    CHECK((st == NULL) == (n == 1 || n == 2));
    srv_status_free(st);
  }
}

UNIT_MAIN("infer_check", UNIT_CASE(test_names_and_types), UNIT_CASE(test_name_edges),
          UNIT_CASE(test_shapes), UNIT_CASE(test_shapes_too_large),
          UNIT_CASE(test_fixed_size_data), UNIT_CASE(test_bytes_data),
          UNIT_CASE(test_request_wide), UNIT_CASE(test_input_count_ok),
          UNIT_CASE(test_shape_data_as_two_checks))
