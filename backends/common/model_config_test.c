/* Model configuration reading: tensors, batching, reshape, parameters, the
 * decoupled flag, shape checks, and errors that name the field. */
#include "backends/common/model_config.h"

#include <string.h>

#include "backends/common/datatype.h"
#include "backends/common/shape.h"
#include "test/unit/unit.h"

static const char *kSimple =
    "{\"name\":\"simple\",\"backend\":\"addsub\",\"max_batch_size\":8,"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[\"16\"]},"
    "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1,2],"
    "\"reshape\":{\"shape\":[2,-1]}}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]}],"
    "\"model_transaction_policy\":{\"decoupled\":true},"
    "\"parameters\":{\"record_file\":{\"string_value\":\"/tmp/r.log\"}}}";

static bool parse(const char *json, bk_model_config_t *cfg, char *err, size_t len) {
  return bk_model_config_parse(json, strlen(json), cfg, err, len);
}

static void reads_simple(void) {
  bk_model_config_t cfg;
  char err[256];
  REQUIRE(parse(kSimple, &cfg, err, sizeof err));
  CHECK_STREQ(cfg.name, "simple");
  CHECK(cfg.max_batch_size == 8);
  CHECK(cfg.decoupled);
  CHECK(cfg.input_count == 2 && cfg.output_count == 1);
  const bk_tensor_config_t *in0 = bk_model_config_input(&cfg, "INPUT0");
  REQUIRE(in0 != NULL);
  CHECK(in0->datatype == TRITONSERVER_TYPE_INT32);
  CHECK(in0->dims_count == 1 && in0->dims[0] == 16);
  const bk_tensor_config_t *in1 = bk_model_config_input(&cfg, "INPUT1");
  REQUIRE(in1 != NULL);
  CHECK(in1->datatype == TRITONSERVER_TYPE_BYTES);
  CHECK(in1->dims_count == 2 && in1->dims[0] == 2 && in1->dims[1] == -1); /* reshape */
  CHECK(bk_model_config_output(&cfg, "OUTPUT0") != NULL);
  CHECK(bk_model_config_output(&cfg, "INPUT0") == NULL);
  CHECK_STREQ(bk_model_config_param(&cfg, "record_file"), "/tmp/r.log");
  CHECK(bk_model_config_param(&cfg, "nope") == NULL);
  bk_model_config_free(&cfg);
}

static void defaults_when_absent(void) {
  bk_model_config_t cfg;
  char err[256];
  REQUIRE(parse("{\"name\":\"m\"}", &cfg, err, sizeof err));
  CHECK(cfg.max_batch_size == 0 && !cfg.decoupled);
  CHECK(cfg.input_count == 0 && cfg.output_count == 0);
  CHECK(bk_model_config_param(&cfg, "x") == NULL);
  bk_model_config_free(&cfg);
}

static bool fails_with(const char *json, const char *needle) {
  bk_model_config_t cfg;
  char err[256] = "";
  if (parse(json, &cfg, err, sizeof err)) {
    bk_model_config_free(&cfg);
    return false;
  }
  return strstr(err, needle) != NULL;
}

static void errors_name_the_field(void) {
  CHECK(fails_with("[1]", "not a JSON object"));
  CHECK(fails_with("{", "not valid JSON"));
  CHECK(fails_with("{\"max_batch_size\":-1}", "max_batch_size"));
  CHECK(fails_with("{\"input\":{}}", "'input' must be an array"));
  CHECK(fails_with("{\"input\":[{\"data_type\":\"TYPE_INT32\"}]}", "no name"));
  CHECK(fails_with("{\"output\":[{\"name\":\"O\",\"data_type\":\"TYPE_X\"}]}",
                   "tensor 'O': unsupported data_type 'TYPE_X'"));
  CHECK(
      fails_with("{\"input\":[{\"name\":\"I\",\"data_type\":\"TYPE_FP32\","
                 "\"dims\":[\"a\"]}]}",
                 "tensor 'I': 'dims' element 0"));
  CHECK(
      fails_with("{\"input\":[{\"name\":\"I\",\"data_type\":\"TYPE_FP32\","
                 "\"dims\":[-2]}]}",
                 "'dims' element 0"));
}

static void checks_shapes(void) {
  bk_model_config_t cfg;
  char err[256];
  REQUIRE(parse(kSimple, &cfg, err, sizeof err));
  const bk_tensor_config_t *in0 = bk_model_config_input(&cfg, "INPUT0");
  const bk_tensor_config_t *in1 = bk_model_config_input(&cfg, "INPUT1");
  int64_t ok[] = {3, 16}, no_batch[] = {16}, too_big[] = {9, 16}, wrong[] = {1, 15};
  CHECK(bk_model_config_check_shape(&cfg, in0, ok, 2, err, sizeof err));
  CHECK(!bk_model_config_check_shape(&cfg, in0, no_batch, 1, err, sizeof err));
  CHECK(!bk_model_config_check_shape(&cfg, in0, too_big, 2, err, sizeof err));
  CHECK(!bk_model_config_check_shape(&cfg, in0, wrong, 2, err, sizeof err));
  CHECK(strstr(err, "tensor 'INPUT0': shape [1,15]") != NULL);
  int64_t wild[] = {1, 2, 99};
  CHECK(bk_model_config_check_shape(&cfg, in1, wild, 3, err, sizeof err));
  cfg.max_batch_size = 0; /* without batching the dims are the whole shape */
  CHECK(bk_model_config_check_shape(&cfg, in0, no_batch, 1, err, sizeof err));
  CHECK(!bk_model_config_check_shape(&cfg, in0, ok, 2, err, sizeof err));
  bk_model_config_free(&cfg);
}

static void shape_helpers(void) {
  int64_t s[] = {2, 3, 4};
  uint64_t n = 0;
  CHECK(bk_shape_elements(s, 3, &n) && n == 24);
  CHECK(bk_shape_elements(s, 0, &n) && n == 1);
  int64_t neg[] = {2, -1};
  CHECK(!bk_shape_elements(neg, 2, &n));
  int64_t huge[] = {INT64_MAX, INT64_MAX, 4};
  CHECK(!bk_shape_elements(huge, 3, &n));
  int64_t zero[] = {0, INT64_MAX};
  CHECK(bk_shape_elements(zero, 2, &n) && n == 0);
  char buf[32];
  CHECK_STREQ(bk_shape_format(s, 3, buf, sizeof buf), "[2,3,4]");
  CHECK_STREQ(bk_shape_format(s, 0, buf, sizeof buf), "[]");
  CHECK_STREQ(bk_shape_format(s, 3, buf, 6), "[2...");
  int64_t same[] = {2, 3, 4};
  CHECK(bk_shape_equal(s, 3, same, 3));
  CHECK(!bk_shape_equal(s, 3, same, 2));
  CHECK(bk_shape_equal(NULL, 0, NULL, 0));
  int64_t want[] = {-1, 4};
  int64_t got[] = {7, 4};
  CHECK(bk_shape_matches(want, 2, got, 2));
  CHECK(!bk_shape_matches(want, 2, got, 1));
}

static void datatype_tables(void) {
  CHECK(bk_datatype_from_config("TYPE_STRING") == TRITONSERVER_TYPE_BYTES);
  CHECK(bk_datatype_from_config("TYPE_BF16") == TRITONSERVER_TYPE_BF16);
  CHECK(bk_datatype_from_config("TYPE_INVALID") == TRITONSERVER_TYPE_INVALID);
  CHECK(bk_datatype_from_config("INT32") == TRITONSERVER_TYPE_INVALID);
  CHECK(bk_datatype_from_config(NULL) == TRITONSERVER_TYPE_INVALID);
  CHECK_STREQ(bk_datatype_name(TRITONSERVER_TYPE_FP16), "FP16");
  CHECK_STREQ(bk_datatype_name((TRITONSERVER_DataType)99), "INVALID");
  CHECK(bk_datatype_size(TRITONSERVER_TYPE_INT64) == 8);
  CHECK(bk_datatype_size(TRITONSERVER_TYPE_BYTES) == 0);
}

UNIT_MAIN("model_config", UNIT_CASE(reads_simple), UNIT_CASE(defaults_when_absent),
          UNIT_CASE(errors_name_the_field), UNIT_CASE(checks_shapes),
          UNIT_CASE(shape_helpers), UNIT_CASE(datatype_tables))
