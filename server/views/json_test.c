/* The converter's conventions (json.h) on messages made by hand: proto
 * names, 64-bit integers as numbers, enums by name, maps as objects, bytes
 * as base64, oneofs, defaults with and without SRV_JSON_ALL_FIELDS, and
 * Nereid's own fields. One thread. */
#include "server/views/json.h"

#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "model_config.upb.h"
#include "test/unit/unit.h"

static void expect(const void *msg, const char *type, unsigned flags,
                   const char *golden) {
  json_t *j = srv_json_from_message(msg, srv_json_message_def(type), flags);
  size_t len;
  char *text = srv_json_text(j, &len);
  CHECK_STREQ(text, golden);
  CHECK_EQ_U64(len, strlen(golden));
  free(text);
  json_decref(j);
}

static upb_StringView sv(const char *s) { return upb_StringView_FromString(s); }

static void integers_enums_and_defaults(void) {
  upb_Arena *a = upb_Arena_New();
  inference_ModelConfig *c = inference_ModelConfig_new(a);
  inference_ModelConfig_set_name(c, sv("m"));
  inference_ModelConfig_set_max_batch_size(c, 0);
  inference_ModelInput *in = inference_ModelConfig_add_input(c, a);
  inference_ModelInput_set_name(in, sv("IN"));
  inference_ModelInput_set_data_type(in, inference_TYPE_FP32);
  inference_ModelInput_add_dims(in, 9007199254740993ll, a); /* 2^53 + 1: exact */
  inference_ModelInput_add_dims(in, -1, a);
  /* proto3's rule: defaults left out; 64-bit numbers unquoted; enum names */
  expect(c, "inference.ModelConfig", 0,
         "{\"name\":\"m\",\"input\":[{\"name\":\"IN\",\"data_type\":\"TYPE_FP32\","
         "\"dims\":[9007199254740993,-1]}]}");
  upb_Arena_Free(a);
}

static void uint64_saturates(void) {
  upb_Arena *a = upb_Arena_New();
  inference_StatisticDuration *d = inference_StatisticDuration_new(a);
  inference_StatisticDuration_set_count(d, UINT64_MAX);
  inference_StatisticDuration_set_ns(d, (1ull << 63) - 1);
  expect(d, "inference.StatisticDuration", 0,
         "{\"count\":9223372036854775807,\"ns\":9223372036854775807}");
  inference_StatisticDuration *z = inference_StatisticDuration_new(a);
  expect(z, "inference.StatisticDuration", 0, "{}");
  expect(z, "inference.StatisticDuration", SRV_JSON_ALL_FIELDS, "{\"count\":0,\"ns\":0}");
  upb_Arena_Free(a);
}

static void maps_oneofs_and_bytes(void) {
  upb_Arena *a = upb_Arena_New();
  inference_ModelInferRequest *r = inference_ModelInferRequest_new(a);
  inference_ModelInferRequest_set_model_name(r, sv("m"));
  inference_InferParameter *p = inference_InferParameter_new(a);
  inference_InferParameter_set_int64_param(p, 0); /* set to its default: printed */
  inference_ModelInferRequest_parameters_set(r, sv("zero"), p, a);
  inference_InferParameter *q = inference_InferParameter_new(a);
  inference_InferParameter_set_string_param(q, sv("x\"y"));
  inference_ModelInferRequest_parameters_set(r, sv("s"), q, a);
  inference_ModelInferRequest_add_raw_input_contents(r, sv("hello"), a);
  json_t *j =
      srv_json_from_message(r, srv_json_message_def("inference.ModelInferRequest"), 0);
  CHECK_STREQ(json_string_value(json_object_get(j, "model_name")), "m");
  json_t *params = json_object_get(j, "parameters");
  REQUIRE(json_is_object(params) && json_object_size(params) == 2);
  json_t *zero = json_object_get(json_object_get(params, "zero"), "int64_param");
  CHECK(json_is_integer(zero) && json_integer_value(zero) == 0);
  CHECK(json_object_size(json_object_get(params, "zero")) == 1); /* one oneof member */
  CHECK_STREQ(
      json_string_value(json_object_get(json_object_get(params, "s"), "string_param")),
      "x\"y");
  CHECK_STREQ(
      json_string_value(json_array_get(json_object_get(j, "raw_input_contents"), 0)),
      "aGVsbG8=");
  json_decref(j);
  upb_Arena_Free(a);
}

static void nereid_fields_only_when_set(void) {
  upb_Arena *a = upb_Arena_New();
  inference_ModelStatistics *s = inference_ModelStatistics_new(a);
  inference_ModelStatistics_set_name(s, sv("m"));
  expect(s, "inference.ModelStatistics", SRV_JSON_ALL_FIELDS,
         "{\"name\":\"m\",\"version\":\"\",\"last_inference\":0,\"inference_count\":0,"
         "\"execution_count\":0,\"batch_stats\":[],\"memory_usage\":[],"
         "\"response_stats\":{}}");
  inference_SequenceStatistics *q =
      inference_ModelStatistics_mutable_sequence_stats(s, a);
  inference_SequenceStatistics_set_active(q, 2);
  inference_EnsembleStepStatistics *e =
      inference_ModelStatistics_add_ensemble_step_stats(s, a);
  inference_EnsembleStepStatistics_set_model_name(e, sv("step"));
  json_t *j = srv_json_from_message(s, srv_json_message_def("inference.ModelStatistics"),
                                    SRV_JSON_ALL_FIELDS);
  /* inside a Nereid message, Triton's rule for its fields again */
  json_t *seq = json_object_get(j, "sequence_stats");
  CHECK(json_integer_value(json_object_get(seq, "active")) == 2);
  CHECK(json_is_integer(json_object_get(seq, "backlog")));
  json_t *step = json_array_get(json_object_get(j, "ensemble_step_stats"), 0);
  CHECK_STREQ(json_string_value(json_object_get(step, "model_name")), "step");
  CHECK(json_object_get(step, "time") == NULL); /* unset sub-message */
  json_decref(j);
  upb_Arena_Free(a);
}

static void strings_that_are_not_utf8(void) {
  upb_Arena *a = upb_Arena_New();
  inference_ServerMetadataResponse *m = inference_ServerMetadataResponse_new(a);
  inference_ServerMetadataResponse_set_name(m, upb_StringView_FromDataAndSize("a\xff"
                                                                              "b",
                                                                              3));
  inference_ServerMetadataResponse_set_version(
      m, upb_StringView_FromDataAndSize("n\0ul", 4));
  expect(m, "inference.ServerMetadataResponse", 0,
         "{\"name\":\"a\xef\xbf\xbd"
         "b\",\"version\":\"n\\u0000ul\"}");
  upb_Arena_Free(a);
}

UNIT_MAIN("json", UNIT_CASE(integers_enums_and_defaults), UNIT_CASE(uint64_saturates),
          UNIT_CASE(maps_oneofs_and_bytes), UNIT_CASE(nereid_fields_only_when_set),
          UNIT_CASE(strings_that_are_not_utf8))
