/* Models made from a config alone (model_bare.h), and through them the
 * config checks of loading (model_check.c) that fuzzing reached: what a
 * valid config gives requests, and configs refused with their reasons.
 * One thread. */
#include "server/model/model_bare.h"

#include <stdio.h>
#include <string.h>

#include "server/cuda/cuda.h"

#include "server/config/model_config.h"
#include "test/unit/unit.h"

static const char kSimple[] =
    "backend: 'b' max_batch_size: 8\n"
    "input [{name: 'IN' data_type: TYPE_INT32 dims: [16]},\n"
    "       {name: 'OPT' data_type: TYPE_STRING dims: [-1] optional: true}]\n"
    "output [{name: 'OUT' data_type: TYPE_FP16 dims: [2, -1]}]\n"
    "dynamic_batching {preferred_batch_size: [4]}";

/* Makes model `name` from config text `text` (len bytes), which parses. */
static srv_status_t *bare_from(const char *name, const char *text, size_t len,
                               srv_model_t **out) {
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, len, "test", a, err, sizeof err);
  if (c == NULL) {
    upb_Arena_Free(a);
    return srv_status_new(GRPC_STATUS_INTERNAL, "config does not parse: %s", err);
  }
  srv_status_t *st = srv_model_bare_new(name, c, out);
  upb_Arena_Free(a);
  return st;
}

static void described_as_loaded(void) {
  srv_model_t *m;
  REQUIRE(bare_from("simple", kSimple, strlen(kSimple), &m) == NULL);
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  CHECK_STREQ(d.name, "simple");
  CHECK_STREQ(d.version_string, "1");
  CHECK_EQ_U64(d.max_batch_size, 8);
  REQUIRE(d.input_count == 2 && d.output_count == 1);
  CHECK_STREQ(d.inputs[0].name, "IN");
  CHECK_EQ_U64(d.inputs[0].datatype, TRITONSERVER_TYPE_INT32);
  CHECK(d.inputs[1].optional && d.inputs[1].datatype == TRITONSERVER_TYPE_BYTES);
  CHECK(d.output_names[0] == d.outputs[0].name);
  size_t len;
  const char *json = srv_model_bare_config_json(m, &len);
  CHECK(strlen(json) == len && strstr(json, "\"name\":\"simple\"") != NULL);
  CHECK(strstr(json, "\"kind\":\"KIND_CPU\"") != NULL); /* completed */
  srv_model_bare_free(m);
}

static void expect_refused(const char *text, size_t len, const char *why) {
  srv_model_t *m = (srv_model_t *)&m;
  srv_status_t *st = bare_from("m", text, len, &m);
  REQUIRE(st != NULL);
  CHECK(m == NULL);
  CHECK_STREQ(srv_status_message(st), why);
  srv_status_free(st);
}

/* A tensor name with a NUL would be cut short wherever it is a C string
 * (pbtxt_fuzz found "\0" taken as an input named ""). */
static void nul_in_a_tensor_name(void) {
  static const char in[] =
      "backend: 'b' input [{name: 'A\\000B' data_type: TYPE_INT32 dims: [1]}]";
  expect_refused(in, sizeof in - 1, "model 'm': the name of an input holds a NUL byte");
  static const char out[] =
      "backend: 'b' output [{name: '\\000' data_type: TYPE_INT32 dims: [1]}]";
  expect_refused(out, sizeof out - 1,
                 "model 'm': the name of an output holds a NUL byte");
}

/* Kinds are an open enum (config_json_fuzz found kind 6 accepted). */
static void unknown_instance_kind(void) {
  static const char text[] = "backend: 'b' instance_group [{kind: 6}]";
  expect_refused(text, sizeof text - 1,
                 "model 'm': instance group 'm' has kind 6, which is none of KIND_AUTO, "
                 "KIND_GPU, KIND_CPU, KIND_MODEL");
}

/* KIND_GPU needs a GPU; with GPUs, the ids it lists must exist and a group
 * that lists none gets them all. */
static void gpu_groups(void) {
  const char *why = NULL;
  int gpus = srv_cuda_device_count(&why);
  static const char any[] = "backend: 'b' instance_group [{kind: KIND_GPU count: 2}]";
  static const char bad_id[] =
      "backend: 'b' instance_group [{kind: KIND_GPU gpus: [999]}]";
  srv_model_t *m = NULL;
  if (gpus == 0) {
    printf("  (no GPU: %s)\n", why);
    char expected[512];
    snprintf(expected, sizeof expected,
             "model 'm': instance group 'm' asks for KIND_GPU, but no GPU is available "
             "to this server: %s",
             why);
    expect_refused(any, sizeof any - 1, expected);
    expect_refused(bad_id, sizeof bad_id - 1, expected);
    /* KIND_AUTO is KIND_CPU without GPUs. */
    REQUIRE(bare_from("m", "backend: 'b'", 12, &m) == NULL);
    size_t len;
    CHECK(strstr(srv_model_bare_config_json(m, &len), "\"kind\":\"KIND_CPU\"") != NULL);
    srv_model_bare_free(m);
    return;
  }
  srv_status_t *st = bare_from("m", bad_id, sizeof bad_id - 1, &m);
  REQUIRE(st != NULL);
  CHECK(strstr(srv_status_message(st),
               "instance group m of model m specifies invalid or unsupported gpu id 999. "
               "GPUs with at least the minimum required CUDA compute compatibility of "
               "6.000000 are: 0") != NULL);
  srv_status_free(st);
  REQUIRE(bare_from("m", any, sizeof any - 1, &m) == NULL);
  size_t len;
  const char *json = srv_model_bare_config_json(m, &len);
  CHECK(strstr(json, "\"kind\":\"KIND_GPU\"") != NULL);
  CHECK(strstr(json, "\"gpus\":[0") != NULL);
  srv_model_bare_free(m);
  /* KIND_AUTO is KIND_GPU with GPUs, as Triton. */
  REQUIRE(bare_from("m", "backend: 'b'", 12, &m) == NULL);
  CHECK(strstr(srv_model_bare_config_json(m, &len), "\"kind\":\"KIND_GPU\"") != NULL);
  srv_model_bare_free(m);
}

static void scheduling_checked(void) {
  static const char text[] =
      "backend: 'b' max_batch_size: 2 dynamic_batching {preferred_batch_size: [4]}";
  expect_refused(text, sizeof text - 1,
                 "model 'm': dynamic batching preferred size 4 exceeds max_batch_size 2");
}

/* Model `m` from `text` is accepted, and its config's JSON holds each of
 * the NULL-terminated `needles`. */
static void expect_json(const char *text, const char *const *needles) {
  srv_model_t *m;
  srv_status_t *st = bare_from("m", text, strlen(text), &m);
  if (st != NULL) fprintf(stderr, "  refused: %s\n", srv_status_message(st));
  REQUIRE(st == NULL);
  size_t len;
  const char *json = srv_model_bare_config_json(m, &len);
  for (size_t i = 0; needles[i] != NULL; i++) {
    if (strstr(json, needles[i]) == NULL)
      fprintf(stderr, "  no %s in %s\n", needles[i], json);
    CHECK(strstr(json, needles[i]) != NULL);
  }
  srv_model_bare_free(m);
}

/* tritonserver's NormalizeModelConfig defaults, and what it leaves alone. */
static void normalized_as_tritonserver(void) {
  static const char *const batching[] = {
      "\"version_policy\":{\"latest\":{\"num_versions\":1}}",
      "\"preferred_batch_size\":[8]", "\"input_pinned_memory\":{\"enable\":true}",
      "\"output_pinned_memory\":{\"enable\":true}", NULL};
  expect_json(
      "backend: 'b' max_batch_size: 8 dynamic_batching {}"
      " input {name: 'I' data_type: TYPE_INT32 dims: 1}",
      batching);
  /* Given values stay; no preferred size without batching. */
  static const char *const given[] = {"\"preferred_batch_size\":[]",
                                      "\"version_policy\":{\"all\":{}}",
                                      "\"input_pinned_memory\":{\"enable\":false}",
                                      "\"output_pinned_memory\":{\"enable\":true}", NULL};
  expect_json(
      "backend: 'b' dynamic_batching {} version_policy {all {}}"
      " optimization {input_pinned_memory {enable: false}}",
      given);
  static const char *const sequence[] = {
      "\"max_sequence_idle_microseconds\":1000000",
      "\"oldest\":{\"max_candidate_sequences\":0,\"preferred_batch_size\":[4]", NULL};
  expect_json(
      "backend: 'b' max_batch_size: 4 sequence_batching {oldest {}}"
      " input {name: 'I' data_type: TYPE_INT32 dims: 1}",
      sequence);
  /* Platform and default file name, as tritonserver completes them. */
  static const char *const torch[] = {"\"platform\":\"pytorch_libtorch\"",
                                      "\"default_model_filename\":\"model.pt\"", NULL};
  expect_json("backend: 'pytorch'", torch);
}

UNIT_MAIN("model_bare", UNIT_CASE(normalized_as_tritonserver),
          UNIT_CASE(described_as_loaded), UNIT_CASE(nul_in_a_tensor_name),
          UNIT_CASE(unknown_instance_kind), UNIT_CASE(gpu_groups),
          UNIT_CASE(scheduling_checked))
