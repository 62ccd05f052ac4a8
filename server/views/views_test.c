/* Every endpoint's HTTP JSON against golden text, over models made from
 * their configs (model_bare.h) in a registry published by hand, and the
 * repository folders of a temporary directory. The golden texts follow
 * Triton's (tritonserver.cc builds the same keys): metadata shapes as
 * numbers with -1 for the batch, statistics with every field printed, the
 * index as a bare array. One thread. */
#define _GNU_SOURCE /* mkdtemp */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/api/buffer_attributes.h"
#include "server/config/model_config.h"
#include "server/model/model_bare.h"
#include "server/stats/memory_usage.h"
#include "server/views/http_views.h"
#include "server/views/views.h"
#include "test/unit/unit.h"

static const char kSimple[] =
    "backend: 'identity' max_batch_size: 8\n"
    "input [{name: 'IN' data_type: TYPE_INT32 dims: [16]}]\n"
    "output [{name: 'OUT' data_type: TYPE_FP32 dims: [2, -1]}]";

static const char kPlain[] =
    "platform: 'onnxruntime_onnx' backend: 'onnxruntime'\n"
    "input [{name: 'X' data_type: TYPE_STRING dims: [3]}]\n"
    "output [{name: 'Y' data_type: TYPE_BOOL dims: [1]}]";

typedef struct {
  srv_server_t srv;
  srv_options_t opt;
  char dir[64], dir2[64];
  char *roots[2];
  srv_model_t *simple, *plain, *elsewhere;
} fixture_t;

static srv_model_t *bare(const char *name, const char *text) {
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), name, a, err, sizeof err);
  srv_model_t *m = NULL;
  if (c == NULL || srv_model_bare_new(name, c, &m) != NULL) {
    fprintf(stderr, "model %s: its config does not load\n", name);
    abort();
  }
  upb_Arena_Free(a);
  return m;
}

/* The folders of the first root; "dup" is a folder of the second too. */
static const char *const kFolders[] = {"a_never", "broken", "dup",
                                       "plain",   "simple", "zz_gone"};

/* Registry: broken (v1 failed), elsewhere (v1, no folder in the roots: a
 * root unregistered since, say), plain (v1), simple (v1), zz_gone
 * (unloaded). Folders: those of kFolders, a_never never loaded. */
static void fixture_init(fixture_t *f) {
  memset(f, 0, sizeof *f);
  strcpy(f->dir, "/tmp/nereid-views-XXXXXX");
  strcpy(f->dir2, "/tmp/nereid-views-XXXXXX");
  REQUIRE(mkdtemp(f->dir) != NULL);
  REQUIRE(mkdtemp(f->dir2) != NULL);
  char path[128];
  for (size_t i = 0; i < sizeof kFolders / sizeof kFolders[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", f->dir, kFolders[i]);
    REQUIRE(mkdir(path, 0700) == 0);
  }
  snprintf(path, sizeof path, "%s/dup", f->dir2);
  REQUIRE(mkdir(path, 0700) == 0);
  f->roots[0] = f->dir;
  f->roots[1] = f->dir2;
  f->opt.model_repositories = f->roots;
  f->opt.model_repository_count = 2;
  f->srv.options = &f->opt;
  f->srv.registry = srv_registry_new();
  f->simple = bare("simple", kSimple);
  f->plain = bare("plain", kPlain);
  f->elsewhere = bare("elsewhere", kPlain);
  srv_version_failure_t failure = {1, "bad config"};
  srv_registry_entry_t e[5] = {
      {.name = "broken",
       .state = SRV_MODEL_STATE_UNAVAILABLE,
       .reason = "bad config",
       .failures = &failure,
       .failure_count = 1},
      {.name = "elsewhere",
       .state = SRV_MODEL_STATE_READY,
       .versions = &f->elsewhere,
       .version_count = 1},
      {.name = "plain",
       .state = SRV_MODEL_STATE_READY,
       .versions = &f->plain,
       .version_count = 1},
      {.name = "simple",
       .state = SRV_MODEL_STATE_READY,
       .versions = &f->simple,
       .version_count = 1},
      {.name = "zz_gone",
       .state = SRV_MODEL_STATE_UNAVAILABLE,
       .reason = SRV_MODEL_REASON_UNLOADED},
  };
  srv_registry_publish(f->srv.registry, e, 5);
}

static void fixture_free(fixture_t *f) {
  srv_registry_free(f->srv.registry);
  srv_model_bare_free(f->simple);
  srv_model_bare_free(f->plain);
  srv_model_bare_free(f->elsewhere);
  char path[128];
  for (size_t i = 0; i < sizeof kFolders / sizeof kFolders[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", f->dir, kFolders[i]);
    rmdir(path);
  }
  snprintf(path, sizeof path, "%s/dup", f->dir2);
  rmdir(path);
  rmdir(f->dir);
  rmdir(f->dir2);
}

static upb_StringView sv(const char *s) { return upb_StringView_FromString(s); }

static void expect(srv_http_answer_t *a, int code, const char *golden) {
  CHECK_EQ_U64(a->code, code);
  REQUIRE(a->body != NULL);
  CHECK_EQ_U64(a->len, strlen(a->body));
  CHECK_STREQ(a->body, golden);
  CHECK((a->status == NULL) == (code == 200));
  srv_http_answer_free(a);
}

static void server_metadata(void) {
  srv_http_answer_t a;
  srv_http_server_metadata("triton", &a);
  expect(&a, 200,
         "{\"name\":\"triton\",\"version\":\"" TRITON_COMPAT_VERSION
         "\",\"extensions\":["
         "\"model_repository\",\"model_repository(unload_dependents)\","
         "\"model_configuration\",\"sequence\",\"statistics\","
         "\"system_shared_memory\",\"cuda_shared_memory\",\"logging\",\"trace\","
         "\"" NEREID_EXTENSION "\"]}");
}

static void model_metadata(void) {
  fixture_t f;
  fixture_init(&f);
  srv_http_answer_t a;
  srv_http_model_metadata(&f.srv, sv("simple"), sv(""), &a);
  expect(&a, 200,
         "{\"name\":\"simple\",\"versions\":[\"1\"],\"platform\":\"identity\","
         "\"inputs\":[{\"name\":\"IN\",\"datatype\":\"INT32\",\"shape\":[-1,16]}],"
         "\"outputs\":[{\"name\":\"OUT\",\"datatype\":\"FP32\",\"shape\":[-1,2,-1]}]}");
  /* platform wins over backend; no batch dimension without batching */
  srv_http_model_metadata(&f.srv, sv("plain"), sv("1"), &a);
  expect(&a, 200,
         "{\"name\":\"plain\",\"versions\":[\"1\"],\"platform\":\"onnxruntime_onnx\","
         "\"inputs\":[{\"name\":\"X\",\"datatype\":\"BYTES\",\"shape\":[3]}],"
         "\"outputs\":[{\"name\":\"Y\",\"datatype\":\"BOOL\",\"shape\":[1]}]}");
  srv_http_model_metadata(&f.srv, sv("nope"), sv(""), &a);
  CHECK_EQ_U64(a.code, 503); /* UNAVAILABLE, as Triton's GetModel */
  CHECK(a.status != NULL && strstr(a.body, "{\"error\":\"") == a.body);
  CHECK(strstr(a.body, "nope") != NULL);
  srv_http_answer_free(&a);
  srv_http_model_metadata(&f.srv, sv("simple"), sv("x1"), &a);
  expect(&a, 400,
         "{\"error\":\"failed to get model version from specified version string 'x1' "
         "(details: stol), version should be an integral value > 0\"}");
  srv_http_model_metadata(&f.srv, sv("simple"), sv("2"), &a);
  CHECK_EQ_U64(a.code, 503);
  srv_http_answer_free(&a);
  fixture_free(&f);
}

static void model_config(void) {
  fixture_t f;
  fixture_init(&f);
  srv_http_answer_t a;
  srv_http_model_config(&f.srv, sv("simple"), sv("1"), &a);
  size_t len;
  const char *json = srv_model_bare_config_json(f.simple, &len);
  CHECK_EQ_U64(a.code, 200);
  CHECK_EQ_U64(a.len, len);
  CHECK_STREQ(a.body, json);
  /* Triton's conventions: snake_case, 64-bit numbers unquoted, enums by name */
  CHECK(strstr(a.body, "\"max_batch_size\":8") != NULL);
  CHECK(strstr(a.body, "\"dims\":[16]") != NULL);
  CHECK(strstr(a.body, "\"data_type\":\"TYPE_INT32\"") != NULL);
  srv_http_answer_free(&a);
  srv_http_model_config(&f.srv, sv(""), sv(""), &a);
  expect(&a, 400, "{\"error\":\"model name must not be empty\"}");
  fixture_free(&f);
}

#define ZERO "{\"count\":0,\"ns\":0}"
#define ZERO_INFER                                                                  \
  "\"inference_stats\":{\"success\":" ZERO ",\"fail\":" ZERO ",\"queue\":" ZERO     \
  ",\"compute_input\":" ZERO ",\"compute_infer\":" ZERO ",\"compute_output\":" ZERO \
  ",\"cache_hit\":" ZERO ",\"cache_miss\":" ZERO "}"

static void statistics(void) {
  fixture_t f;
  fixture_init(&f);
  srv_stats_t *s = srv_model_stats(f.simple);
  atomic_store(&s->last_inference_ms, 1700000000123ull);
  atomic_store(&s->inference_count, 6);
  atomic_store(&s->execution_count, 2);
  srv_duration_add(&s->success, 5000000000ull); /* > 2^32: a number, not a string */
  srv_duration_add(&s->compute_infer, 7);
  srv_batch_stats_t *b = srv_batch_table_entry(s->batches, 4);
  REQUIRE(b != NULL);
  srv_duration_add(&b->compute_input, 1);
  srv_duration_add(&b->compute_infer, 2);
  srv_duration_add(&b->compute_output, 3);
  /* Batch size 0: what a backend reports for a model that does not batch. */
  srv_batch_stats_t *b0 = srv_batch_table_entry(s->batches, 0);
  REQUIRE(b0 != NULL);
  srv_duration_add(&b0->compute_infer, 9);
  /* Memory: the model's report and an instance's, summed per type and id. */
  TRITONSERVER_BufferAttributes gpu, cpu;
  api_buffer_attributes_describe(&gpu, 300, TRITONSERVER_MEMORY_GPU, 1, NULL);
  api_buffer_attributes_describe(&cpu, 100, TRITONSERVER_MEMORY_CPU, 0, NULL);
  TRITONSERVER_BufferAttributes *usage[2] = {&gpu, &cpu};
  REQUIRE(TRITONBACKEND_ModelReportMemoryUsage(f.simple, usage, 2) == NULL);
  srv_memory_use_t instance_use = {TRITONSERVER_MEMORY_GPU, 1, 20};
  REQUIRE(srv_memory_usage_report(s->memory, &instance_use, &instance_use, 1));
  srv_http_answer_t a;
  srv_http_model_statistics(&f.srv, sv("simple"), sv("1"), &a);
  expect(&a, 200,
         "{\"model_stats\":[{\"name\":\"simple\",\"version\":\"1\","
         "\"last_inference\":1700000000123,\"inference_count\":6,\"execution_count\":2,"
         "\"inference_stats\":{\"success\":{\"count\":1,\"ns\":5000000000},\"fail\":" ZERO
         ",\"queue\":" ZERO ",\"compute_input\":" ZERO
         ",\"compute_infer\":{\"count\":1,\"ns\":7},\"compute_output\":" ZERO
         ",\"cache_hit\":" ZERO ",\"cache_miss\":" ZERO
         "},"
         "\"batch_stats\":[{\"batch_size\":0,\"compute_input\":" ZERO
         ",\"compute_infer\":{\"count\":1,\"ns\":9},\"compute_output\":" ZERO "},"
         "{\"batch_size\":4,\"compute_input\":{\"count\":1,\"ns\":1},"
         "\"compute_infer\":{\"count\":1,\"ns\":2},\"compute_output\":{\"count\":1,"
         "\"ns\":3}}],\"memory_usage\":[{\"type\":\"CPU\",\"id\":0,\"byte_size\":100},"
         "{\"type\":\"GPU\",\"id\":1,\"byte_size\":320}],\"response_stats\":{}}]}");
  /* all models: every ready version, in the registry's order */
  srv_http_model_statistics(&f.srv, sv(""), sv(""), &a);
  CHECK_EQ_U64(a.code, 200);
  const char *plain = strstr(a.body,
                             "{\"name\":\"plain\",\"version\":\"1\",\"last_inference\":0,"
                             "\"inference_count\":0,\"execution_count\":0," ZERO_INFER
                             ",\"batch_stats\":[],\"memory_usage\":[],"
                             "\"response_stats\":{}}");
  const char *simple = strstr(a.body, "{\"name\":\"simple\"");
  CHECK(plain != NULL && simple != NULL && plain < simple);
  CHECK(strstr(a.body, "broken") == NULL && strstr(a.body, "sequence_stats") == NULL);
  srv_http_answer_free(&a);
  srv_http_model_statistics(&f.srv, sv("broken"), sv(""), &a);
  expect(&a, 400, "{\"error\":\"requested model 'broken' is not available\"}");
  srv_http_model_statistics(&f.srv, sv("nope"), sv("1"), &a);
  expect(&a, 400, "{\"error\":\"requested model 'nope' is not available\"}");
  srv_http_model_statistics(&f.srv, sv("simple"), sv("3"), &a);
  expect(&a, 400,
         "{\"error\":\"requested model version is not available for model 'simple'\"}");
  srv_http_model_statistics(&f.srv, sv("simple"), sv("-1"), &a);
  expect(&a, 400,
         "{\"error\":\"invalid model version specified '-1' , version should be an "
         "integral value > 0\"}");
  fixture_free(&f);
}

static void repository_index(void) {
  fixture_t f;
  fixture_init(&f);
  srv_http_answer_t a;
  /* The folders of the roots only, as tritonserver lists them: "elsewhere"
   * serves but has no folder there; "dup" is in both roots. */
  srv_http_repository_index(&f.srv, "", 0, &a);
  expect(&a, 200,
         "[{\"name\":\"a_never\"},"
         "{\"name\":\"broken\",\"version\":\"1\",\"state\":\"UNAVAILABLE\","
         "\"reason\":\"bad config\"},"
         "{\"name\":\"dup\",\"state\":\"UNAVAILABLE\","
         "\"reason\":\"model appears in two or more repositories\"},"
         "{\"name\":\"plain\",\"version\":\"1\",\"state\":\"READY\"},"
         "{\"name\":\"simple\",\"version\":\"1\",\"state\":\"READY\"},"
         "{\"name\":\"zz_gone\",\"state\":\"UNAVAILABLE\",\"reason\":\"unloaded\"}]");
  const char *ready = "{\"ready\": true}";
  srv_http_repository_index(&f.srv, ready, strlen(ready), &a);
  expect(&a, 200,
         "[{\"name\":\"plain\",\"version\":\"1\",\"state\":\"READY\"},"
         "{\"name\":\"simple\",\"version\":\"1\",\"state\":\"READY\"}]");
  const char *not_ready = "{\"ready\": false}";
  srv_http_repository_index(&f.srv, not_ready, strlen(not_ready), &a);
  CHECK(a.code == 200 && strstr(a.body, "a_never") != NULL);
  srv_http_answer_free(&a);
  const char *bad[] = {"{\"ready\": 1}",
                       "{\"ready\": \"true\"}",
                       "[true]",
                       "{",
                       "nul",
                       "{\"ready\":true,\"ready\":false}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    srv_http_repository_index(&f.srv, bad[i], strlen(bad[i]), &a);
    CHECK_EQ_U64(a.code, 400);
    CHECK(a.status != NULL && strncmp(a.body, "{\"error\":", 9) == 0);
    srv_http_answer_free(&a);
  }
  fixture_free(&f);
}

/* The gRPC frontend serializes the same messages. */
static void grpc_messages_are_the_views(void) {
  fixture_t f;
  fixture_init(&f);
  upb_Arena *a = upb_Arena_New();
  inference_RepositoryIndexResponse *idx = srv_view_repository_index(&f.srv, true, a);
  size_t n;
  const inference_RepositoryIndexResponse_ModelIndex *const *rows =
      inference_RepositoryIndexResponse_models(idx, &n);
  REQUIRE(n == 2);
  CHECK(inference_RepositoryIndexResponse_ModelIndex_name(rows[1]).size == 6);
  inference_ModelConfigResponse *c = srv_view_model_config(f.simple, a);
  CHECK(inference_ModelConfig_max_batch_size(inference_ModelConfigResponse_config(c)) ==
        8);
  upb_Arena_Free(a);
  fixture_free(&f);
}

static void model_control(void) {
  fixture_t f;
  fixture_init(&f);
  f.opt.model_control_mode = "explicit";
  CHECK(srv_view_model_control_check(&f.srv) == NULL);
  const char *modes[] = {"none", "poll"};
  for (int i = 0; i < 2; i++) {
    f.opt.model_control_mode = (char *)modes[i];
    srv_status_t *st = srv_view_model_control_check(&f.srv);
    REQUIRE(st != NULL);
    CHECK_EQ_U64(srv_http_status_code(st), 503);
    CHECK_STREQ(srv_status_message(st),
                "explicit model load / unload is not allowed if polling is enabled");
    srv_status_free(st);
  }
  fixture_free(&f);
}

UNIT_MAIN("views", UNIT_CASE(server_metadata), UNIT_CASE(model_metadata),
          UNIT_CASE(model_config), UNIT_CASE(statistics), UNIT_CASE(repository_index),
          UNIT_CASE(grpc_messages_are_the_views), UNIT_CASE(model_control))
