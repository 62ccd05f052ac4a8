/* The embedding API against real servers: TRITONSERVER_ServerNew on a
 * temporary repository with the built-in backends, every question and
 * model-control call with good and bad arguments, an inference through
 * TRITONSERVER_ServerInferAsync, poll mode, the start-up errors, stop and
 * delete, and the calls on a server the API did not make (the nereid
 * process's, as backends get it). Servers run one after another here
 * (several at once: embed_multi_test); the
 * main thread drives them, callbacks arrive on the runtime's threads. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/embed/embed.h"
#include "server/embed/embed_testing.h"

static char repo[PATH_MAX], broken_repo[PATH_MAX], cache_repo[PATH_MAX], backends[PATH_MAX];

/* ---- The repositories ------------------------------------------------------- */

static char *file_read(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  static char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

static bool repositories_make(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(repo, sizeof repo, "%s/embed_repo_XXXXXX", tmp ? tmp : "/tmp");
  snprintf(broken_repo, sizeof broken_repo, "%s/embed_broken_XXXXXX", tmp ? tmp : "/tmp");
  snprintf(cache_repo, sizeof cache_repo, "%s/embed_cache_XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(repo) == NULL || mkdtemp(broken_repo) == NULL || mkdtemp(cache_repo) == NULL)
    return false;
  if (realpath("backends", backends) == NULL) return false;
  char *simple = file_read("examples/models/simple/config.pbtxt");
  if (simple == NULL || !embed_model_add(repo, "simple", simple)) return false;
  /* The same model with the response cache on (file_read's buffer has room). */
  strcat(simple, "response_cache { enable: true }\n");
  return embed_model_add(cache_repo, "simple", simple) &&
         embed_model_add(broken_repo, "broken", "backend: \"no_such_backend\"\n");
}

/* ---- Servers ---------------------------------------------------------------- */

static TRITONSERVER_ServerOptions *options_for(const char *root,
                                               TRITONSERVER_ModelControlMode mode) {
  TRITONSERVER_ServerOptions *o = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerOptionsNew(&o)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, root)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetBackendDirectory(o, backends)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetModelControlMode(o, mode)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetExitTimeout(o, 10)));
  return o;
}

static TRITONSERVER_Server *server_new(TRITONSERVER_ServerOptions *o) {
  TRITONSERVER_Server *s = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerNew(&s, o)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsDelete(o)));
  return s;
}

/* The JSON of the message the call put in *pm (read here, after the call:
 * an argument's order of evaluation is not defined), copied; the message
 * is deleted. */
static char *message_text(TRITONSERVER_Error *err, TRITONSERVER_Message **pm) {
  TRITONSERVER_Message *m = *pm;
  static char text[65536];
  text[0] = '\0';
  if (!embed_ok(err)) return text;
  const char *base;
  size_t size;
  if (embed_ok(TRITONSERVER_MessageSerializeToJson(m, &base, &size)))
    snprintf(text, sizeof text, "%.*s", (int)size, base);
  TRITONSERVER_MessageDelete(m);
  return text;
}

#define CONTAINS(text, part)                                                    \
  do {                                                                          \
    const char *t_ = (text);                                                    \
    if (strstr(t_, part) == NULL) {                                             \
      fprintf(stderr, "  %s:%d: '%s' not in: %.600s\n", __FILE__, __LINE__, part, \
              t_);                                                              \
      CHECK(false);                                                             \
    }                                                                           \
  } while (0)

static bool model_ready(TRITONSERVER_Server *s, const char *name) {
  bool ready = false;
  CHECK(embed_ok(TRITONSERVER_ServerModelIsReady(s, name, -1, &ready)));
  return ready;
}

/* One inference of `simple`: sums and differences come back. */
static void infer_simple(TRITONSERVER_Server *s) {
  static int32_t in0[16], in1[16];
  for (int i = 0; i < 16; i++) {
    in0[i] = i;
    in1[i] = 2;
  }
  const char *names[] = {"INPUT0", "INPUT1"};
  const int32_t *data[] = {in0, in1};
  embed_call_t c;
  REQUIRE(embed_call_send(&c, s, "simple", names, data, 2, 16));
  embed_call_wait(&c);
  CHECK(!c.failed);
  const int32_t *sum = embed_call_output(&c, "OUTPUT0");
  const int32_t *diff = embed_call_output(&c, "OUTPUT1");
  REQUIRE(sum != NULL && diff != NULL);
  for (int i = 0; i < 16; i++) CHECK(sum[i] == i + 2 && diff[i] == i - 2);
  CHECK(c.callback_blocking_refused);
}

/* ---- Cases ------------------------------------------------------------------ */

static void test_new_errors(void) {
  TRITONSERVER_Server *s = NULL;
  TRITONSERVER_ServerOptions *o = NULL;
  OK(TRITONSERVER_ServerOptionsNew(&o));
  FAILS(TRITONSERVER_ServerNew(NULL, o), INVALID_ARG, "server must not be NULL");
  FAILS(TRITONSERVER_ServerNew(&s, NULL), INVALID_ARG, "options must not be NULL");
  FAILS(TRITONSERVER_ServerNew(&s, o), INVALID_ARG, "--model-repository must be specified");
  OK(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, "/no/such/repository"));
  FAILS(TRITONSERVER_ServerNew(&s, o), NOT_FOUND, "/no/such/repository");
  /* A NUMA node this machine lacks: ServerNew names the setting. */
  OK(TRITONSERVER_ServerOptionsSetHostPolicy(o, "gpu_0", "numa-node", "1000"));
  FAILS(TRITONSERVER_ServerNew(&s, o), INVALID_ARG,
        "--host-policy 'gpu_0,numa-node=1000'");
  OK(TRITONSERVER_ServerOptionsDelete(o));
  /* A model that fails at start-up stops the server (exit on error)... */
  o = options_for(broken_repo, TRITONSERVER_MODEL_CONTROL_NONE);
  FAILS(TRITONSERVER_ServerNew(&s, o), INTERNAL, "failed to load all models");
  CHECK(s == NULL);
  /* ...unless told otherwise: it serves, not ready under strict readiness. */
  OK(TRITONSERVER_ServerOptionsSetExitOnError(o, false));
  s = server_new(o);
  REQUIRE(s != NULL);
  bool live = false, ready = true;
  OK(TRITONSERVER_ServerIsLive(s, &live));
  OK(TRITONSERVER_ServerIsReady(s, &ready));
  CHECK(live && !ready);
  TRITONSERVER_Message *m;
  CONTAINS(message_text(TRITONSERVER_ServerModelIndex(s, 0, &m), &m),
           "\"name\":\"broken\",\"version\":\"1\",\"state\":\"UNAVAILABLE\"");
  OK(TRITONSERVER_ServerDelete(s));
  /* Without strict readiness it is ready. */
  o = options_for(broken_repo, TRITONSERVER_MODEL_CONTROL_NONE);
  OK(TRITONSERVER_ServerOptionsSetExitOnError(o, false));
  OK(TRITONSERVER_ServerOptionsSetStrictReadiness(o, false));
  s = server_new(o);
  REQUIRE(s != NULL);
  OK(TRITONSERVER_ServerIsReady(s, &ready));
  CHECK(ready);
  OK(TRITONSERVER_ServerDelete(s));
}

static void queries_check(TRITONSERVER_Server *s) {
  TRITONSERVER_Message *m;
  CONTAINS(message_text(TRITONSERVER_ServerModelMetadata(s, "simple", -1, &m), &m),
           "{\"name\":\"simple\",\"versions\":[\"1\"],\"platform\":\"addsub\"");
  CONTAINS(message_text(TRITONSERVER_ServerModelMetadata(s, "simple", 1, &m), &m),
           "\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":[-1,16]}");
  FAILS(TRITONSERVER_ServerModelMetadata(s, "simple", 2, &m), UNAVAILABLE,
        "'simple' version 2 is not found");
  FAILS(TRITONSERVER_ServerModelMetadata(s, "simple", -5, &m), INVALID_ARG,
        "invalid model version specified '-5'");
  FAILS(TRITONSERVER_ServerModelMetadata(s, "nosuch", -1, &m), UNAVAILABLE,
        "Request for unknown model: 'nosuch' is not found");
  FAILS(TRITONSERVER_ServerModelMetadata(s, "", -1, &m), INVALID_ARG,
        "model name must not be empty");
  FAILS(TRITONSERVER_ServerModelMetadata(s, NULL, -1, &m), INVALID_ARG, "model_name");
  FAILS(TRITONSERVER_ServerModelMetadata(s, "simple", -1, NULL), INVALID_ARG, "message");
  FAILS(TRITONSERVER_ServerModelMetadata(NULL, "simple", -1, &m), INVALID_ARG, "server");
  CONTAINS(message_text(TRITONSERVER_ServerModelConfig(s, "simple", -1, 1, &m), &m),
           "\"max_batch_size\":8");
  FAILS(TRITONSERVER_ServerModelConfig(s, "simple", -1, 2, &m), INVALID_ARG,
        "model configuration version 2");
  uint32_t flags = 0;
  void *voidp = &flags;
  OK(TRITONSERVER_ServerModelBatchProperties(s, "simple", -1, &flags, &voidp));
  CHECK(flags == TRITONSERVER_BATCH_FIRST_DIM && voidp == NULL);
  FAILS(TRITONSERVER_ServerModelBatchProperties(s, "nosuch", -1, &flags, NULL), UNAVAILABLE,
        "'nosuch'");
  FAILS(TRITONSERVER_ServerModelBatchProperties(s, "simple", -1, NULL, NULL), INVALID_ARG,
        "flags");
  OK(TRITONSERVER_ServerModelTransactionProperties(s, "simple", -1, &flags, NULL));
  CHECK(flags == TRITONSERVER_TXN_ONE_TO_ONE);
  FAILS(TRITONSERVER_ServerModelTransactionProperties(s, "simple", -1, NULL, NULL),
        INVALID_ARG, "txn_flags must not be NULL");
  FAILS(TRITONSERVER_ServerModelTransactionProperties(NULL, "simple", -1, &flags, NULL),
        INVALID_ARG, "server must not be NULL");
  bool ready = false;
  FAILS(TRITONSERVER_ServerModelIsReady(NULL, "simple", -1, &ready), INVALID_ARG,
        "server must not be NULL");
  FAILS(TRITONSERVER_ServerModelIsReady(s, "simple", -1, NULL), INVALID_ARG,
        "ready must not be NULL");
  FAILS(TRITONSERVER_ServerModelStatistics(s, "nosuch", -1, &m), INVALID_ARG,
        "requested model 'nosuch' is not available");
  CONTAINS(message_text(TRITONSERVER_ServerModelIndex(s, TRITONSERVER_INDEX_FLAG_READY, &m),
                        &m),
           "[{\"name\":\"simple\",\"version\":\"1\",\"state\":\"READY\"}]");
}

/* `simple`'s statistics once they report one execution: the backend
 * reports its batch after sending the response. */
static const char *stats_after_one_execution(TRITONSERVER_Server *s) {
  TRITONSERVER_Message *m;
  const char *stats = "";
  for (int i = 0; i < 200 && strstr(stats, "\"execution_count\":1") == NULL; i++) {
    if (i > 0) usleep(10000);
    stats = message_text(TRITONSERVER_ServerModelStatistics(s, "simple", 1, &m), &m);
  }
  return stats;
}

static void stats_and_metrics_check(TRITONSERVER_Server *s) {
  TRITONSERVER_Message *m;
  const char *stats = stats_after_one_execution(s);
  CONTAINS(stats, "{\"model_stats\":[{\"name\":\"simple\",\"version\":\"1\"");
  CONTAINS(stats, "\"inference_count\":1,\"execution_count\":1");
  CONTAINS(stats, "\"success\":{\"count\":1,");
  CONTAINS(message_text(TRITONSERVER_ServerModelStatistics(s, "", -1, &m), &m),
           "\"name\":\"simple\"");
  TRITONSERVER_Metrics *metrics = NULL;
  REQUIRE(embed_ok(TRITONSERVER_ServerMetrics(s, &metrics)));
  const char *base;
  size_t size;
  OK(TRITONSERVER_MetricsFormatted(metrics, TRITONSERVER_METRIC_PROMETHEUS, &base, &size));
  char *page = strndup(base, size);
  CONTAINS(page, "nv_inference_request_success{model=\"simple\",version=\"1\"} 1");
  CONTAINS(page, "nv_cpu_memory_total_bytes");
  /* The stand-in NVML (test/nvml_mock, on LD_LIBRARY_PATH) lists GPUs. */
  CONTAINS(page, "# TYPE nv_gpu_utilization gauge");
  CONTAINS(page, "nv_gpu_memory_total_bytes{gpu_uuid=\"");
  free(page);
  TRITONSERVER_MetricsDelete(metrics);
  FAILS(TRITONSERVER_ServerMetrics(s, NULL), INVALID_ARG, "metrics");
}

static void loads_with_parameters_check(TRITONSERVER_Server *s) {
  FAILS(TRITONSERVER_ServerLoadModelWithParameters(s, "simple", NULL, 1), INVALID_ARG,
        "load parameters are not provided while parameter count is non-zero");
  const char *config =
      "{\"backend\":\"addsub\",\"max_batch_size\":4,\"input\":["
      "{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]},"
      "{\"name\":\"INPUT1\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]}],\"output\":["
      "{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]},"
      "{\"name\":\"OUTPUT1\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]}]}";
  TRITONSERVER_Parameter *p[3];
  p[0] = TRITONSERVER_ParameterNew("config", TRITONSERVER_PARAMETER_STRING, config);
  p[1] = TRITONSERVER_ParameterBytesNew("file:1/weights.bin", "abc", 3);
  double d = 1.5;
  p[2] = TRITONSERVER_ParameterNew("ratio", TRITONSERVER_PARAMETER_DOUBLE, &d);
  const TRITONSERVER_Parameter **params = (const TRITONSERVER_Parameter **)p;
  /* Files without a config: refused as Triton refuses them, with its answer
   * (the reason goes to the log). */
  FAILS(TRITONSERVER_ServerLoadModelWithParameters(s, "simple", params + 1, 1), INTERNAL,
        "failed to load 'simple', failed to poll from model repository");
  FAILS(TRITONSERVER_ServerLoadModelWithParameters(s, "simple", params + 2, 1), INVALID_ARG,
        "parameter 'ratio' has a type no load parameter has");
  const TRITONSERVER_Parameter *twice[] = {p[0], p[0]};
  FAILS(TRITONSERVER_ServerLoadModelWithParameters(s, "simple", twice, 2), INVALID_ARG,
        "parameter 'config' given twice");
  OK(TRITONSERVER_ServerLoadModelWithParameters(s, "simple", params, 1));
  TRITONSERVER_Message *m;
  CONTAINS(message_text(TRITONSERVER_ServerModelConfig(s, "simple", -1, 1, &m), &m),
           "\"max_batch_size\":4");
  /* The config and a file: the model loads from a private folder. */
  OK(TRITONSERVER_ServerLoadModelWithParameters(s, "simple", params, 2));
  CHECK(model_ready(s, "simple"));
  for (int i = 0; i < 3; i++) TRITONSERVER_ParameterDelete(p[i]);
}

static void model_control_check(TRITONSERVER_Server *s) {
  FAILS(TRITONSERVER_ServerLoadModel(s, "nosuch"), INTERNAL,
        "failed to load 'nosuch', failed to poll from model repository");
  FAILS(TRITONSERVER_ServerLoadModel(s, "a/../b"), INVALID_ARG, "a/../b");
  FAILS(TRITONSERVER_ServerLoadModel(s, NULL), INVALID_ARG, "model_name");
  FAILS(TRITONSERVER_ServerLoadModel(NULL, "simple"), INVALID_ARG, "server");
  FAILS(TRITONSERVER_ServerUnloadModel(s, NULL), INVALID_ARG, "model_name");
  OK(TRITONSERVER_ServerUnloadModel(s, "never_loaded")); /* as Triton */
  OK(TRITONSERVER_ServerUnloadModel(s, "simple"));
  CHECK(!model_ready(s, "simple"));
  TRITONSERVER_Message *m;
  CONTAINS(message_text(TRITONSERVER_ServerModelIndex(s, 0, &m), &m),
           "{\"name\":\"simple\",\"state\":\"UNAVAILABLE\",\"reason\":\"unloaded\"}");
  FAILS(TRITONSERVER_ServerModelMetadata(s, "simple", -1, &m), UNAVAILABLE, "'simple'");
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));
  OK(TRITONSERVER_ServerUnloadModelAndDependents(s, "simple"));
  CHECK(!model_ready(s, "simple"));
  FAILS(TRITONSERVER_ServerPollModelRepository(s), UNAVAILABLE, "polling is disabled");
  FAILS(TRITONSERVER_ServerRegisterModelRepository(s, repo, NULL, 1), INVALID_ARG,
        "model mappings are not provided while mapping count is non-zero");
  TRITONSERVER_Parameter *map[2] = {
      TRITONSERVER_ParameterNew("dir_a", TRITONSERVER_PARAMETER_STRING, "m"),
      TRITONSERVER_ParameterNew("dir_b", TRITONSERVER_PARAMETER_STRING, "m")};
  FAILS(TRITONSERVER_ServerRegisterModelRepository(
            s, repo, (const TRITONSERVER_Parameter **)map, 2),
        INVALID_ARG, "there is a conflicting mapping for 'm'");
  TRITONSERVER_ParameterDelete(map[0]);
  TRITONSERVER_ParameterDelete(map[1]);
  FAILS(TRITONSERVER_ServerUnregisterModelRepository(s, NULL), INVALID_ARG,
        "repository_path");
}

/* Explicit mode, the whole life: questions, an inference, loads and
 * unloads, then stop and delete. */
static void test_explicit(void) {
  TRITONSERVER_ServerOptions *o = options_for(repo, TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  OK(TRITONSERVER_ServerOptionsSetServerId(o, "embedded"));
  TRITONSERVER_Server *s = server_new(o);
  REQUIRE(s != NULL);
  bool live = false, ready = false;
  OK(TRITONSERVER_ServerIsLive(s, &live));
  OK(TRITONSERVER_ServerIsReady(s, &ready));
  CHECK(live && ready);
  FAILS(TRITONSERVER_ServerIsLive(s, NULL), INVALID_ARG, "live");
  FAILS(TRITONSERVER_ServerIsReady(NULL, &ready), INVALID_ARG, "server");
  TRITONSERVER_Message *m;
  const char *md = message_text(TRITONSERVER_ServerMetadata(s, &m), &m);
  CONTAINS(md, "{\"name\":\"embedded\",\"version\":");
  CONTAINS(md, "\"model_repository\"");
  CONTAINS(message_text(TRITONSERVER_ServerModelIndex(s, 0, &m), &m),
           "[{\"name\":\"simple\"}]");
  FAILS(TRITONSERVER_ServerModelIndex(s, 0, NULL), INVALID_ARG, "repository_index");
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));
  CHECK(model_ready(s, "simple"));
  queries_check(s);
  infer_simple(s);
  stats_and_metrics_check(s);
  loads_with_parameters_check(s);
  model_control_check(s);
  OK(TRITONSERVER_ServerSetExitTimeout(s, 3));
  OK(TRITONSERVER_ServerSetExitTimeout(NULL, 3));
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));
  OK(TRITONSERVER_ServerStop(s));
  OK(TRITONSERVER_ServerStop(s)); /* twice: no error, as Triton */
  FAILS(TRITONSERVER_ServerIsLive(s, &live), UNAVAILABLE, "Server exiting");
  CHECK(!live);
  FAILS(TRITONSERVER_ServerIsReady(s, &ready), UNAVAILABLE, "Server exiting");
  FAILS(TRITONSERVER_ServerLoadModel(s, "simple"), UNAVAILABLE, "Server exiting");
  FAILS(TRITONSERVER_ServerMetadata(s, &m), UNAVAILABLE, "Server exiting");
  OK(TRITONSERVER_ServerDelete(s));
  OK(TRITONSERVER_ServerDelete(NULL));
  OK(TRITONSERVER_ServerStop(NULL));
}

/* The response cache set up through SetCacheConfig: the second of two
 * equal requests is answered from it, without running the backend. */
static void test_cache(void) {
  TRITONSERVER_ServerOptions *o = options_for(cache_repo, TRITONSERVER_MODEL_CONTROL_NONE);
  OK(TRITONSERVER_ServerOptionsSetCacheConfig(o, "local", "{\"size\": 1048576}"));
  TRITONSERVER_Server *s = server_new(o);
  REQUIRE(s != NULL);
  infer_simple(s);
  infer_simple(s);
  const char *stats = stats_after_one_execution(s);
  CONTAINS(stats, "\"inference_count\":1,\"execution_count\":1");
  CONTAINS(stats, "\"success\":{\"count\":2,");
  CONTAINS(stats, "\"cache_hit\":{\"count\":1,");
  CONTAINS(stats, "\"cache_miss\":{\"count\":1,");
  OK(TRITONSERVER_ServerStop(s));
  OK(TRITONSERVER_ServerDelete(s));
  /* A cache library that is not there: ServerNew says where it looked. */
  o = options_for(cache_repo, TRITONSERVER_MODEL_CONTROL_NONE);
  OK(TRITONSERVER_ServerOptionsSetCacheConfig(o, "redis", "{\"host\": \"localhost\"}"));
  OK(TRITONSERVER_ServerOptionsSetCacheDirectory(o, cache_repo));
  TRITONSERVER_Server *none = NULL;
  FAILS(TRITONSERVER_ServerNew(&none, o), INVALID_ARG,
        "unable to find 'libtritoncache_redis.so' for cache. Searched: ");
  CHECK(none == NULL);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

/* Mode none loads everything and refuses client loads; startup models
 * load in explicit mode. */
static void test_modes(void) {
  TRITONSERVER_Server *s =
      server_new(options_for(repo, TRITONSERVER_MODEL_CONTROL_NONE));
  REQUIRE(s != NULL);
  CHECK(model_ready(s, "simple"));
  FAILS(TRITONSERVER_ServerLoadModel(s, "simple"), UNAVAILABLE,
        "explicit model load / unload is not allowed if polling is enabled");
  FAILS(TRITONSERVER_ServerUnloadModel(s, "simple"), UNAVAILABLE, "not allowed");
  FAILS(TRITONSERVER_ServerRegisterModelRepository(s, repo, NULL, 0), UNSUPPORTED,
        "repository registration is not allowed if model control mode is not EXPLICIT");
  OK(TRITONSERVER_ServerDelete(s)); /* stops it first */
  TRITONSERVER_ServerOptions *o = options_for(repo, TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  OK(TRITONSERVER_ServerOptionsSetStartupModel(o, "simple"));
  s = server_new(o);
  REQUIRE(s != NULL);
  CHECK(model_ready(s, "simple"));
  OK(TRITONSERVER_ServerDelete(s));
}

/* simple's config without its name: a folder of any name serves it. */
static char *simple_unnamed(void) {
  char *text = strdup(file_read("examples/models/simple/config.pbtxt"));
  char *name = strstr(text, "name: \"simple\"");
  if (name != NULL) memset(name, ' ', strlen("name: \"simple\""));
  return text;
}

/* Explicit mode: a root registered at run time, with a folder served under
 * another name; then unregistered. */
static void test_register(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  char extra[PATH_MAX], missing[PATH_MAX + 16];
  snprintf(extra, sizeof extra, "%s/embed_extra_XXXXXX", tmp ? tmp : "/tmp");
  REQUIRE(mkdtemp(extra) != NULL);
  snprintf(missing, sizeof missing, "%s/missing", extra);
  char *config = simple_unnamed();
  REQUIRE(embed_model_add(extra, "other", config) && embed_model_add(extra, "folder_x", config));
  free(config);
  TRITONSERVER_Server *s =
      server_new(options_for(repo, TRITONSERVER_MODEL_CONTROL_EXPLICIT));
  REQUIRE(s != NULL);
  FAILS(TRITONSERVER_ServerLoadModel(s, "other"), INTERNAL,
        "failed to load 'other', failed to poll from model repository");
  TRITONSERVER_Parameter *map =
      TRITONSERVER_ParameterNew("folder_x", TRITONSERVER_PARAMETER_STRING, "mapped");
  const TRITONSERVER_Parameter *maps[] = {map};
  OK(TRITONSERVER_ServerRegisterModelRepository(s, extra, maps, 1));
  FAILS(TRITONSERVER_ServerRegisterModelRepository(s, extra, NULL, 0), ALREADY_EXISTS,
        "has already been registered");
  FAILS(TRITONSERVER_ServerRegisterModelRepository(s, missing, NULL, 0), INVALID_ARG,
        "repository not found");
  FAILS(TRITONSERVER_ServerRegisterModelRepository(s, broken_repo, maps, 1), ALREADY_EXISTS,
        "conflicting mapping for 'mapped'");
  OK(TRITONSERVER_ServerLoadModel(s, "other"));
  OK(TRITONSERVER_ServerLoadModel(s, "mapped"));
  CHECK(model_ready(s, "other") && model_ready(s, "mapped"));
  FAILS(TRITONSERVER_ServerLoadModel(s, "folder_x"), INTERNAL,
        "failed to load 'folder_x', failed to poll from model repository");
  TRITONSERVER_Message *m;
  CONTAINS(message_text(TRITONSERVER_ServerModelConfig(s, "mapped", -1, 1, &m), &m),
           "\"name\":\"mapped\"");
  const char *index = message_text(TRITONSERVER_ServerModelIndex(s, 0, &m), &m);
  CONTAINS(index, "{\"name\":\"mapped\",\"version\":\"1\",\"state\":\"READY\"}");
  CONTAINS(index, "{\"name\":\"other\",\"version\":\"1\",\"state\":\"READY\"}");
  CHECK(strstr(index, "folder_x") == NULL);
  OK(TRITONSERVER_ServerUnregisterModelRepository(s, extra));
  FAILS(TRITONSERVER_ServerUnregisterModelRepository(s, extra), INVALID_ARG,
        "repository not found");
  CHECK(model_ready(s, "other")); /* loaded models stay, as in Triton */
  /* ... and serve, but the index lists the folders of the roots left, as
   * Triton's does: neither "other" nor "mapped", ready or not. */
  index = message_text(TRITONSERVER_ServerModelIndex(s, 0, &m), &m);
  CHECK(strstr(index, "other") == NULL && strstr(index, "mapped") == NULL);
  CONTAINS(index, "{\"name\":\"simple\"");
  index = message_text(
      TRITONSERVER_ServerModelIndex(s, TRITONSERVER_INDEX_FLAG_READY, &m), &m);
  CHECK(strstr(index, "other") == NULL && strstr(index, "mapped") == NULL);
  OK(TRITONSERVER_ServerUnloadModel(s, "other"));
  FAILS(TRITONSERVER_ServerLoadModel(s, "other"), INTERNAL,
        "failed to load 'other', failed to poll from model repository");
  TRITONSERVER_ParameterDelete(map);
  OK(TRITONSERVER_ServerDelete(s));
}

/* An ensemble `name` of one step, model `step`, with simple's interface. */
static const char *ensemble_of(const char *name, const char *step) {
  static char text[2048];
  snprintf(text, sizeof text,
           "name: \"%s\"\nplatform: \"ensemble\"\nmax_batch_size: 8\n"
           "input [ { name: \"INPUT0\" data_type: TYPE_INT32 dims: [ 16 ] },\n"
           "  { name: \"INPUT1\" data_type: TYPE_INT32 dims: [ 16 ] } ]\n"
           "output [ { name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ 16 ] },\n"
           "  { name: \"OUTPUT1\" data_type: TYPE_INT32 dims: [ 16 ] } ]\n"
           "ensemble_scheduling { step [ { model_name: \"%s\" model_version: -1\n"
           "  input_map { key: \"INPUT0\" value: \"INPUT0\" }\n"
           "  input_map { key: \"INPUT1\" value: \"INPUT1\" }\n"
           "  output_map { key: \"OUTPUT0\" value: \"OUTPUT0\" }\n"
           "  output_map { key: \"OUTPUT1\" value: \"OUTPUT1\" } } ] }\n",
           name, step);
  return text;
}

/* Explicit mode with namespaces: a registered root is a namespace of its
 * own, its mapped names included (tritonserver's identifier of a mapped
 * model is its root and the mapped name), until it is unregistered. */
static void test_register_namespaces(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  char base[PATH_MAX], extra[PATH_MAX], want[2 * PATH_MAX + 64];
  snprintf(base, sizeof base, "%s/embed_ns_base_XXXXXX", tmp ? tmp : "/tmp");
  snprintf(extra, sizeof extra, "%s/embed_ns_extra_XXXXXX", tmp ? tmp : "/tmp");
  REQUIRE(mkdtemp(base) != NULL && mkdtemp(extra) != NULL);
  char *simple = strdup(file_read("examples/models/simple/config.pbtxt"));
  char *unnamed = simple_unnamed();
  const char *bad = "name: \"bad\"\nbackend: \"no_such_backend\"\n";
  REQUIRE(embed_model_add(base, "simple", simple) && embed_model_add(base, "bad", bad) &&
          embed_model_add(extra, "simple", simple) &&
          embed_model_add(extra, "bad", bad) &&
          embed_model_add(extra, "folder_x", unnamed) &&
          embed_model_add(extra, "ens_x", ensemble_of("ens_x", "mapped")));
  free(simple);
  free(unnamed);
  TRITONSERVER_ServerOptions *o = options_for(base, TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  OK(TRITONSERVER_ServerOptionsSetModelNamespacing(o, true));
  TRITONSERVER_Server *s = server_new(o);
  REQUIRE(s != NULL);
  TRITONSERVER_Parameter *map =
      TRITONSERVER_ParameterNew("folder_x", TRITONSERVER_PARAMETER_STRING, "mapped");
  const TRITONSERVER_Parameter *maps[] = {map};
  OK(TRITONSERVER_ServerRegisterModelRepository(s, extra, maps, 1));
  /* One name in both roots: two models, no conflict, and a name alone
   * cannot tell them apart. */
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));
  CHECK(!model_ready(s, "simple"));
  TRITONSERVER_Message *m;
  FAILS(TRITONSERVER_ServerModelConfig(s, "simple", -1, 1, &m), INVALID_ARG,
        "There are 2 identifiers of model 'simple' in global map, model namespace must "
        "be provided to resolve ambiguity.");
  /* The mapped name lives in the registered root's namespace: the ensemble
   * there binds its step to it. */
  OK(TRITONSERVER_ServerLoadModel(s, "ens_x"));
  CHECK(model_ready(s, "ens_x") && model_ready(s, "mapped"));
  const char *config =
      message_text(TRITONSERVER_ServerModelConfig(s, "ens_x", -1, 1, &m), &m);
  snprintf(want, sizeof want, "\"model_namespace\":\"%s\"", extra);
  CONTAINS(config, want);
  CONTAINS(message_text(TRITONSERVER_ServerModelConfig(s, "mapped", -1, 1, &m), &m),
           "\"name\":\"mapped\"");
  /* A load failing in both roots lists both, each model by identifier. */
  char both[4 * PATH_MAX];
  snprintf(both, sizeof both,
           "load failed for model '%s::bad': version 1 is at UNAVAILABLE state: Invalid "
           "argument: unable to find backend library for backend 'no_such_backend', try "
           "specifying runtime on the model configuration.",
           base);
  FAILS(TRITONSERVER_ServerLoadModel(s, "bad"), INVALID_ARG, both);
  snprintf(both, sizeof both,
           "load failed for model '%s::bad': version 1 is at UNAVAILABLE state: Invalid "
           "argument: unable to find backend library",
           extra);
  FAILS(TRITONSERVER_ServerLoadModel(s, "bad"), INVALID_ARG, both);
  /* Unregistered: its loaded models stay (still ambiguous), its names go. */
  OK(TRITONSERVER_ServerUnregisterModelRepository(s, extra));
  CHECK(model_ready(s, "mapped") && !model_ready(s, "simple"));
  OK(TRITONSERVER_ServerUnloadModel(s, "ens_x"));
  OK(TRITONSERVER_ServerUnloadModel(s, "mapped"));
  FAILS(TRITONSERVER_ServerLoadModel(s, "mapped"), INTERNAL,
        "failed to load 'mapped', failed to poll from model repository");
  OK(TRITONSERVER_ServerUnloadModel(s, "simple")); /* in both namespaces */
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));   /* the base root's alone */
  CHECK(model_ready(s, "simple"));
  infer_simple(s);
  TRITONSERVER_ParameterDelete(map);
  OK(TRITONSERVER_ServerDelete(s));
}

/* Poll mode polls when asked (no timer): a new folder loads, a removed one
 * unloads. */
static void test_poll(void) {
  TRITONSERVER_Server *s =
      server_new(options_for(repo, TRITONSERVER_MODEL_CONTROL_POLL));
  REQUIRE(s != NULL);
  CHECK(model_ready(s, "simple"));
  char *simple = simple_unnamed();
  REQUIRE(embed_model_add(repo, "simple_copy", simple));
  free(simple);
  CHECK(!model_ready(s, "simple_copy"));
  OK(TRITONSERVER_ServerPollModelRepository(s));
  CHECK(model_ready(s, "simple_copy"));
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/simple_copy/config.pbtxt", repo);
  unlink(path);
  snprintf(path, sizeof path, "%s/simple_copy/1", repo);
  rmdir(path);
  snprintf(path, sizeof path, "%s/simple_copy", repo);
  rmdir(path);
  OK(TRITONSERVER_ServerPollModelRepository(s));
  CHECK(!model_ready(s, "simple_copy"));
  FAILS(TRITONSERVER_ServerLoadModel(s, "simple"), UNAVAILABLE, "not allowed");
  OK(TRITONSERVER_ServerDelete(s));
}

/* `simple` (unnamed: the folder names it) whose instance asks for `count`
 * of the rate limiter's R. */
static bool limited_simple_add(const char *root, const char *name, int count) {
  char *text = simple_unnamed();
  char *group = strstr(text, "instance_group");
  if (group != NULL) *group = '\0';
  char config[8192];
  snprintf(config, sizeof config,
           "%sinstance_group [ { kind: KIND_CPU rate_limiter { resources [ { name: \"R\" "
           "count: %d } ] } } ]\n",
           text, count);
  free(text);
  return group != NULL && embed_model_add(root, name, config);
}

/* The rate limiter set through the options: a model whose instance asks
 * for more of R than AddRateLimiterResource gives fails to load with
 * Triton's text; one within it serves; stop and delete end the limiter. */
static void test_rate_limiter(void) {
  char rl_repo[PATH_MAX];
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(rl_repo, sizeof rl_repo, "%s/embed_rl_XXXXXX", tmp ? tmp : "/tmp");
  REQUIRE(mkdtemp(rl_repo) != NULL);
  REQUIRE(limited_simple_add(rl_repo, "simple", 1));
  REQUIRE(limited_simple_add(rl_repo, "greedy", 2));
  TRITONSERVER_ServerOptions *o =
      options_for(rl_repo, TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  OK(TRITONSERVER_ServerOptionsSetRateLimiterMode(o, TRITONSERVER_RATE_LIMIT_EXEC_COUNT));
  OK(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "R", 1, -1));
  TRITONSERVER_Server *s = server_new(o);
  REQUIRE(s != NULL);
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));
  infer_simple(s); /* through the limiter */
  infer_simple(s);
  TRITONSERVER_Error *err = TRITONSERVER_ServerLoadModel(s, "greedy");
  REQUIRE(err != NULL);
  CONTAINS(
      TRITONSERVER_ErrorMessage(err),
      "Resource count for \"R\" is limited to 1 which will prevent scheduling of one "
      "or more model instances, the minimum required count is 2");
  TRITONSERVER_ErrorDelete(err);
  CHECK(!model_ready(s, "greedy"));
  OK(TRITONSERVER_ServerUnloadModel(s, "simple"));
  OK(TRITONSERVER_ServerLoadModel(s, "simple")); /* its old tickets are gone */
  infer_simple(s);
  OK(TRITONSERVER_ServerStop(s));
  OK(TRITONSERVER_ServerDelete(s));
}

/* A server the API did not make (as TRITONBACKEND_ModelServer gives the
 * nereid process's): questions and model control work, stopping does not. */
static void test_process_server(void) {
  srv_options_t opt;
  char repo_flag[PATH_MAX + 32], backend_flag[PATH_MAX + 32];
  snprintf(repo_flag, sizeof repo_flag, "--model-repository=%s", repo);
  snprintf(backend_flag, sizeof backend_flag, "--backend-directory=%s", backends);
  char *argv[] = {"nereid", repo_flag, backend_flag, "--model-control-mode=explicit", NULL};
  REQUIRE(srv_options_parse(&opt, 4, argv) == NULL);
  srv_server_t srv;
  bool all_loaded;
  REQUIRE(srv_core_start(&srv, &opt, &all_loaded) == NULL);
  TRITONSERVER_Server *s = (TRITONSERVER_Server *)&srv;
  FAILS(TRITONSERVER_ServerLoadModel(s, "simple"), UNAVAILABLE, "Server not ready");
  atomic_store(&srv.state, SRV_STATE_READY);
  OK(TRITONSERVER_ServerLoadModel(s, "simple"));
  CHECK(model_ready(s, "simple"));
  TRITONSERVER_Message *m;
  CONTAINS(message_text(TRITONSERVER_ServerMetadata(s, &m), &m), "{\"name\":\"triton\"");
  FAILS(TRITONSERVER_ServerStop(s), UNSUPPORTED, "the nereid process's server");
  FAILS(TRITONSERVER_ServerDelete(s), UNSUPPORTED, "the nereid process's server");
  FAILS(TRITONSERVER_ServerSetExitTimeout(s, 1), UNSUPPORTED, "--exit-timeout-secs");
  OK(TRITONSERVER_ServerUnloadModel(s, "simple"));
  srv_core_stop(&srv);
  srv_core_free(&srv);
  srv_options_free(&opt);
}

int main(void) {
  if (!repositories_make()) {
    fprintf(stderr, "embed_test: cannot make the repositories\n");
    return 1;
  }
  static const unit_case_t cases[] = {
      UNIT_CASE(test_new_errors),
      UNIT_CASE(test_explicit),
      UNIT_CASE(test_modes),
      UNIT_CASE(test_register),
      UNIT_CASE(test_register_namespaces),
      UNIT_CASE(test_poll),
      UNIT_CASE(test_process_server),
      UNIT_CASE(test_cache),
      UNIT_CASE(test_rate_limiter),
  };
  return unit_run("embed_test", cases, sizeof cases / sizeof cases[0]);
}
