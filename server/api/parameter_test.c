/* Tests of TRITONSERVER_Parameter and its api_parameter_* accessors. Main
 * thread. */
#include "server/api/parameter.h"

#include <stdbool.h>
#include <string.h>

#include "test/unit/unit.h"

static void type_strings(void) {
  CHECK_EQ_U64(TRITONSERVER_PARAMETER_STRING, 0);
  CHECK_EQ_U64(TRITONSERVER_PARAMETER_BYTES, 4);
  CHECK_STREQ(TRITONSERVER_ParameterTypeString(TRITONSERVER_PARAMETER_STRING), "STRING");
  CHECK_STREQ(TRITONSERVER_ParameterTypeString(TRITONSERVER_PARAMETER_INT), "INT");
  CHECK_STREQ(TRITONSERVER_ParameterTypeString(TRITONSERVER_PARAMETER_BOOL), "BOOL");
  CHECK_STREQ(TRITONSERVER_ParameterTypeString(TRITONSERVER_PARAMETER_DOUBLE), "DOUBLE");
  CHECK_STREQ(TRITONSERVER_ParameterTypeString(TRITONSERVER_PARAMETER_BYTES), "BYTES");
  CHECK_STREQ(TRITONSERVER_ParameterTypeString((TRITONSERVER_ParameterType)9),
              "<invalid>");
}

static void string_is_copied(void) {
  char name[] = "config";
  char value[] = "{\"max_batch_size\":8}";
  TRITONSERVER_Parameter *p =
      TRITONSERVER_ParameterNew(name, TRITONSERVER_PARAMETER_STRING, value);
  REQUIRE(p != NULL);
  name[0] = value[0] = 'X';
  CHECK_STREQ(api_parameter_name(p), "config");
  CHECK_EQ_U64(api_parameter_type(p), TRITONSERVER_PARAMETER_STRING);
  CHECK_STREQ(api_parameter_value(p), "{\"max_batch_size\":8}");
  CHECK_EQ_U64(api_parameter_byte_size(p), strlen("{\"max_batch_size\":8}"));
  TRITONSERVER_ParameterDelete(p);
}

static void scalars_are_copied(void) {
  int64_t i = -42;
  bool b = true;
  double d = 0.25;
  TRITONSERVER_Parameter *pi =
      TRITONSERVER_ParameterNew("i", TRITONSERVER_PARAMETER_INT, &i);
  TRITONSERVER_Parameter *pb =
      TRITONSERVER_ParameterNew("b", TRITONSERVER_PARAMETER_BOOL, &b);
  TRITONSERVER_Parameter *pd =
      TRITONSERVER_ParameterNew("d", TRITONSERVER_PARAMETER_DOUBLE, &d);
  REQUIRE(pi && pb && pd);
  i = 0, b = false, d = 0;
  CHECK(*(const int64_t *)api_parameter_value(pi) == -42);
  CHECK(*(const bool *)api_parameter_value(pb) == true);
  CHECK(*(const double *)api_parameter_value(pd) == 0.25);
  CHECK_EQ_U64(api_parameter_byte_size(pi), sizeof(int64_t));
  CHECK_EQ_U64(api_parameter_byte_size(pb), sizeof(bool));
  CHECK_EQ_U64(api_parameter_byte_size(pd), sizeof(double));
  CHECK_EQ_U64(api_parameter_type(pd), TRITONSERVER_PARAMETER_DOUBLE);
  TRITONSERVER_ParameterDelete(pi);
  TRITONSERVER_ParameterDelete(pb);
  TRITONSERVER_ParameterDelete(pd);
}

/* BYTES keeps the caller's pointer (Triton: "shallow copy"). */
static void bytes_are_referenced(void) {
  unsigned char data[4] = {1, 2, 3, 4};
  TRITONSERVER_Parameter *p =
      TRITONSERVER_ParameterBytesNew("file:1/model.onnx", data, 4);
  REQUIRE(p != NULL);
  CHECK(api_parameter_value(p) == data);
  CHECK_EQ_U64(api_parameter_byte_size(p), 4);
  CHECK_EQ_U64(api_parameter_type(p), TRITONSERVER_PARAMETER_BYTES);
  CHECK_STREQ(api_parameter_name(p), "file:1/model.onnx");
  TRITONSERVER_ParameterDelete(p);
}

static void new_refuses_bytes_and_nulls(void) {
  int x = 0;
  CHECK(TRITONSERVER_ParameterNew("b", TRITONSERVER_PARAMETER_BYTES, &x) == NULL);
  CHECK(TRITONSERVER_ParameterNew("b", (TRITONSERVER_ParameterType)17, &x) == NULL);
  CHECK(TRITONSERVER_ParameterNew(NULL, TRITONSERVER_PARAMETER_STRING, "v") == NULL);
  CHECK(TRITONSERVER_ParameterNew("n", TRITONSERVER_PARAMETER_INT, NULL) == NULL);
  TRITONSERVER_ParameterDelete(NULL);
}

UNIT_MAIN("api_parameter", UNIT_CASE(type_strings), UNIT_CASE(string_is_copied),
          UNIT_CASE(scalars_are_copied), UNIT_CASE(bytes_are_referenced),
          UNIT_CASE(new_refuses_bytes_and_nulls))
