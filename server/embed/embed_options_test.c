/* TRITONSERVER_ServerOptions: every setter with good values, NULL
 * arguments and values out of range, the options of absent features
 * (accepted at Triton's default, refused beyond it), and that the flags
 * reach srv_options_t with the command line's defaults. No server runs.
 * The test's main thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/embed/embed.h"
#include "server/embed/embed_testing.h"

static TRITONSERVER_ServerOptions *options(void) {
  TRITONSERVER_ServerOptions *o = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerOptionsNew(&o)));
  return o;
}

static void test_new_delete(void) {
  FAILS(TRITONSERVER_ServerOptionsNew(NULL), INVALID_ARG, "must not be NULL");
  OK(TRITONSERVER_ServerOptionsDelete(NULL)); /* as Triton: no error */
  TRITONSERVER_ServerOptions *o = options();
  /* Defaults are the command line's. */
  srv_options_t opt;
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_EQ_U64(opt.exit_timeout_secs, 30);
  CHECK_STREQ(opt.model_control_mode, "none");
  CHECK(opt.strict_readiness && opt.exit_on_error && opt.allow_metrics);
  CHECK_EQ_U64(opt.model_load_threads, 4);
  CHECK(opt.strict_model_config); /* the library's default, unlike the command line's */
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsSetStrictModelConfig(o, false));
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK(!opt.strict_model_config);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsSetStrictModelConfig(o, true));
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK(opt.strict_model_config);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

static void test_flags(void) {
  TRITONSERVER_ServerOptions *o = options();
  OK(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, "/models/a"));
  OK(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, "/models/b=c"));
  OK(TRITONSERVER_ServerOptionsSetModelControlMode(o, TRITONSERVER_MODEL_CONTROL_EXPLICIT));
  OK(TRITONSERVER_ServerOptionsSetStartupModel(o, "simple"));
  OK(TRITONSERVER_ServerOptionsSetBackendDirectory(o, "/b"));
  OK(TRITONSERVER_ServerOptionsSetBackendConfig(o, "python", "shm-region-prefix", "x=y"));
  OK(TRITONSERVER_ServerOptionsSetExitOnError(o, false));
  OK(TRITONSERVER_ServerOptionsSetStrictReadiness(o, false));
  OK(TRITONSERVER_ServerOptionsSetExitTimeout(o, 7));
  OK(TRITONSERVER_ServerOptionsSetModelLoadThreadCount(o, 2));
  OK(TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(o, 1024));
  OK(TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(o, 1, 2048));
  OK(TRITONSERVER_ServerOptionsSetMetrics(o, false));
  OK(TRITONSERVER_ServerOptionsSetCpuMetrics(o, false));
  OK(TRITONSERVER_ServerOptionsSetMetricsInterval(o, 500));
  OK(TRITONSERVER_ServerOptionsSetMetricsConfig(o, "", "summary_latencies", "true"));
  OK(TRITONSERVER_ServerOptionsSetServerId(o, "embedded"));
  OK(TRITONSERVER_ServerOptionsSetModelNamespacing(o, true));
  OK(TRITONSERVER_ServerOptionsSetRepoAgentDirectory(o, "/agents"));
  srv_options_t opt;
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK(opt.model_namespacing);
  CHECK_STREQ(opt.repoagent_directory, "/agents");
  CHECK_EQ_U64(opt.model_repository_count, 2);
  CHECK_STREQ(opt.model_repositories[1], "/models/b=c");
  CHECK_STREQ(opt.model_control_mode, "explicit");
  CHECK_EQ_U64(opt.load_model_count, 1);
  CHECK_STREQ(opt.backend_directory, "/b");
  CHECK_STREQ(opt.backend_configs[0], "python,shm-region-prefix=x=y");
  CHECK(!opt.exit_on_error && !opt.strict_readiness);
  CHECK_EQ_U64(opt.exit_timeout_secs, 7);
  CHECK_EQ_U64(opt.model_load_threads, 2);
  CHECK_EQ_U64(opt.pinned_memory_pool_byte_size, 1024);
  CHECK_EQ_U64(srv_options_cuda_pool_bytes(&opt, 1), 2048);
  CHECK(!opt.allow_metrics && !opt.allow_cpu_metrics);
  CHECK_EQ_U64(opt.metrics_interval_ms, 500);
  CHECK_STREQ(opt.metrics_configs[0], "summary_latencies=true");
  CHECK_STREQ(opt.server_id, "embedded");
  srv_options_free(&opt);
  /* Startup models count in explicit mode only, as in Triton. */
  OK(TRITONSERVER_ServerOptionsSetModelControlMode(o, TRITONSERVER_MODEL_CONTROL_POLL));
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_EQ_U64(opt.load_model_count, 0);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

static void test_bad_values(void) {
  TRITONSERVER_ServerOptions *o = options();
  FAILS(TRITONSERVER_ServerOptionsSetExitTimeout(o, 3000000000u), INVALID_ARG,
        "TRITONSERVER_ServerOptionsSetExitTimeout: --exit-timeout-secs expects");
  FAILS(TRITONSERVER_ServerOptionsSetModelLoadThreadCount(o, 0), INVALID_ARG,
        "--model-load-thread-count expects an integer in [1, 256]");
  FAILS(TRITONSERVER_ServerOptionsSetModelControlMode(o, (TRITONSERVER_ModelControlMode)7),
        INVALID_ARG, "unknown model control mode 7");
  FAILS(TRITONSERVER_ServerOptionsSetMetricsInterval(o, 0), INVALID_ARG,
        "--metrics-interval-ms");
  FAILS(TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(o, -1, 1), INVALID_ARG,
        "GPU device -1 is negative");
  FAILS(TRITONSERVER_ServerOptionsSetBackendConfig(o, "", "k", "v"), INVALID_ARG,
        "backend name '' must be non-empty");
  FAILS(TRITONSERVER_ServerOptionsSetBackendConfig(o, "b", "k=", "v"), INVALID_ARG,
        "setting 'k=' must be non-empty, without '='");
  FAILS(TRITONSERVER_ServerOptionsSetMetricsConfig(o, "", "summary_latencies", "maybe"),
        INVALID_ARG, "summary_latencies");
  FAILS(TRITONSERVER_ServerOptionsSetMetricsConfig(o, "", "no_such_setting", "1"),
        INVALID_ARG, "no_such_setting");
  FAILS(TRITONSERVER_ServerOptionsSetLogFormat(o, (TRITONSERVER_LogFormat)9), INVALID_ARG,
        "unknown log format 9");
  FAILS(TRITONSERVER_ServerOptionsSetLogVerbose(o, -1), INVALID_ARG, "negative");
  FAILS(TRITONSERVER_ServerOptionsSetLogFile(o, "/no/such/dir/log"), INVALID_ARG,
        "failed to open log file '/no/such/dir/log'");
  /* A refused value leaves nothing behind: the list still parses. */
  srv_options_t opt;
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_EQ_U64(opt.exit_timeout_secs, 30);
  CHECK_EQ_U64(opt.backend_config_count, 0);
  CHECK_EQ_U64(opt.metrics_config_count, 0);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

static void test_null_arguments(void) {
  TRITONSERVER_ServerOptions *o = options();
  FAILS(TRITONSERVER_ServerOptionsSetModelRepositoryPath(NULL, "/m"), INVALID_ARG,
        "options must not be NULL");
  FAILS(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, NULL), INVALID_ARG,
        "model_repository_path must not be NULL");
  FAILS(TRITONSERVER_ServerOptionsSetExitOnError(NULL, true), INVALID_ARG, "options");
  FAILS(TRITONSERVER_ServerOptionsSetServerId(o, NULL), INVALID_ARG, "server_id");
  FAILS(TRITONSERVER_ServerOptionsSetStartupModel(o, NULL), INVALID_ARG, "model_name");
  FAILS(TRITONSERVER_ServerOptionsSetBackendConfig(o, "b", NULL, "v"), INVALID_ARG,
        "setting");
  FAILS(TRITONSERVER_ServerOptionsSetMetricsConfig(o, NULL, "a", "b"), INVALID_ARG,
        "name");
  FAILS(TRITONSERVER_ServerOptionsSetHostPolicy(o, "p", "s", NULL), INVALID_ARG, "value");
  FAILS(TRITONSERVER_ServerOptionsSetCacheConfig(o, "local", NULL), INVALID_ARG,
        "config_json");
  FAILS(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, NULL, 1, 0), INVALID_ARG,
        "resource_name");
  FAILS(TRITONSERVER_ServerOptionsSetLogFile(o, NULL), INVALID_ARG, "file");
  FAILS(TRITONSERVER_ServerOptionsSetLogInfo(NULL, true), INVALID_ARG, "options");
  FAILS(TRITONSERVER_ServerOptionsSetGpuMetrics(NULL, true), INVALID_ARG, "options");
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

/* Triton's defaults are accepted; what asks for an absent feature is
 * UNSUPPORTED, naming the option. */
static void test_absent_features(void) {
  TRITONSERVER_ServerOptions *o = options();
  OK(TRITONSERVER_ServerOptionsSetResponseCacheByteSize(o, 0));
  OK(TRITONSERVER_ServerOptionsSetCacheDirectory(o, "/opt/tritonserver/caches"));
  OK(TRITONSERVER_ServerOptionsSetRepoAgentDirectory(o, "/opt/tritonserver/repoagents"));
  OK(TRITONSERVER_ServerOptionsSetModelNamespacing(o, false));
  OK(TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(o, TRITONSERVER_INSTANCEGROUPKIND_GPU,
                                                       0, 1.0));
  OK(TRITONSERVER_ServerOptionsSetEnablePeerAccess(o, true));
  FAILS(TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
            o, TRITONSERVER_INSTANCEGROUPKIND_CPU, 0, 0.5),
        INVALID_ARG, "only KIND_GPU");
  FAILS(TRITONSERVER_ServerOptionsSetMetricsConfig(o, "model", "x", "y"), UNSUPPORTED,
        "group 'model'");
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

/* The rate limiter's setters become --rate-limit and --rate-limit-resource;
 * what the command line refuses, they refuse naming the function. */
static void test_rate_limiter(void) {
  TRITONSERVER_ServerOptions *o = options();
  srv_options_t opt;
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK(!srv_options_rate_limited(&opt)); /* OFF, Triton's default */
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsSetRateLimiterMode(o, TRITONSERVER_RATE_LIMIT_EXEC_COUNT));
  OK(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "R1", 4, -1));
  OK(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "R2", 0, 1));
  FAILS(TRITONSERVER_ServerOptionsSetRateLimiterMode(o, (TRITONSERVER_RateLimitMode)5),
        INVALID_ARG, "unknown rate limit mode 5");
  FAILS(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "R1", 1, -2), INVALID_ARG,
        "device -2");
  FAILS(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "R:1", 1, 0), INVALID_ARG,
        "must not hold ':'");
  FAILS(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "", 1, 0), INVALID_ARG,
        "TRITONSERVER_ServerOptionsAddRateLimiterResource: --rate-limit-resource option "
        "format is");
  FAILS(TRITONSERVER_ServerOptionsAddRateLimiterResource(o, "R3", (size_t)1 << 40, 0),
        INVALID_ARG, "Got R3:1099511627776:0");
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK(srv_options_rate_limited(&opt));
  REQUIRE(opt.rate_limit_resource_count == 2);
  CHECK_STREQ(opt.rate_limit_resources[0], "R1:4:-1");
  CHECK_STREQ(opt.rate_limit_resources[1], "R2:0:1");
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsSetRateLimiterMode(o, TRITONSERVER_RATE_LIMIT_OFF));
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK(!srv_options_rate_limited(&opt)); /* the last setting wins */
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

/* tritonserver's flags that the embedding API sets: the values reach
 * srv_options_t with the command line's defaults and bounds. */
static void test_triton_flags(void) {
  TRITONSERVER_ServerOptions *o = options();
  srv_options_t opt;
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_STREQ(opt.server_id, "triton");
  CHECK_STREQ(opt.model_config_name, "");
  CHECK_EQ_U64(opt.model_load_retry_count, 0);
  CHECK(opt.min_compute_capability == 6.0);
  CHECK(opt.allow_gpu_metrics);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsSetModelConfigName(o, "h100"));
  OK(TRITONSERVER_ServerOptionsSetModelLoadRetryCount(o, 3));
  OK(TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(o, 2));
  OK(TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(o, 7.5));
  OK(TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(o, 1, (size_t)1 << 30));
  OK(TRITONSERVER_ServerOptionsSetGpuMetrics(o, false));
  OK(TRITONSERVER_ServerOptionsSetHostPolicy(o, "cpu", "cpu-cores", "0-1,3"));
  OK(TRITONSERVER_ServerOptionsSetHostPolicy(o, "gpu_0", "numa-node", "0"));
  OK(TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(o, TRITONSERVER_INSTANCEGROUPKIND_GPU,
                                                       1, 0.5));
  FAILS(TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
            o, TRITONSERVER_INSTANCEGROUPKIND_GPU, 1, -0.5),
        INVALID_ARG, "a GPU id and a fraction >= 0");
  FAILS(TRITONSERVER_ServerOptionsSetHostPolicy(o, "cpu", "cpu-cores", "1-0"), INVALID_ARG,
        "cpu-cores expects cores and ranges");
  FAILS(TRITONSERVER_ServerOptionsSetHostPolicy(o, "gpu_0", "numa-node", "one"),
        INVALID_ARG,
        "'gpu_0,numa-node=one': numa-node expects a NUMA node number below 1024");
  FAILS(TRITONSERVER_ServerOptionsSetHostPolicy(o, "cpu", "cores", "1"), INVALID_ARG,
        "unknown key 'cores'");
  FAILS(TRITONSERVER_ServerOptionsSetHostPolicy(o, "a,b", "cpu-cores", "1"), INVALID_ARG,
        "must not hold ','");
  FAILS(TRITONSERVER_ServerOptionsSetModelLoadRetryCount(o, 101), INVALID_ARG,
        "--model-load-retry-count expects an integer in [0, 100], got '101'");
  FAILS(TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(o, 257), INVALID_ARG,
        "--buffer-manager-thread-count expects an integer in [0, 256]");
  FAILS(TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(o, __builtin_nan("")),
        INVALID_ARG, "not a compute capability");
  FAILS(TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(o, 101), INVALID_ARG,
        "--min-supported-compute-capability expects a number in [0, 100]");
  FAILS(TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(o, -1, 1), INVALID_ARG,
        "GPU device -1 is negative");
  FAILS(TRITONSERVER_ServerOptionsSetModelConfigName(NULL, "x"), INVALID_ARG, "options");
  FAILS(TRITONSERVER_ServerOptionsSetModelConfigName(o, NULL), INVALID_ARG,
        "model_config_name");
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_STREQ(opt.model_config_name, "h100");
  CHECK_EQ_U64(opt.model_load_retry_count, 3);
  CHECK_EQ_U64(opt.buffer_manager_threads, 2);
  CHECK(opt.min_compute_capability == 7.5);
  REQUIRE(opt.cuda_virtual_address_size_count == 1);
  CHECK_STREQ(opt.cuda_virtual_address_sizes[0], "1:1073741824");
  CHECK(!opt.allow_gpu_metrics);
  CHECK(srv_options_gpu_load_limit(&opt, 1) == 0.5);
  REQUIRE(opt.host_policy_count == 2);
  CHECK_STREQ(opt.host_policies[0], "cpu,cpu-cores=0-1,3");
  CHECK_STREQ(opt.host_policies[1], "gpu_0,numa-node=0");
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

/* The log options change the process's log at once; a file is appended
 * to, and an empty name goes back to stderr. */
static void test_log_file(void) {
  TRITONSERVER_ServerOptions *o = options();
  const char *tmp = getenv("TEST_TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/embed_log.txt", tmp != NULL ? tmp : "/tmp");
  unlink(path);
  OK(TRITONSERVER_ServerOptionsSetLogFile(o, path));
  OK(TRITONSERVER_ServerOptionsSetLogInfo(o, true));
  OK(TRITONSERVER_ServerOptionsSetLogFormat(o, TRITONSERVER_LOG_ISO8601));
  OK(TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, "f.c", 1, "to the file"));
  OK(TRITONSERVER_ServerOptionsSetLogFile(o, ""));
  OK(TRITONSERVER_ServerOptionsSetLogFormat(o, TRITONSERVER_LOG_DEFAULT));
  OK(TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, "f.c", 2, "to stderr"));
  FILE *f = fopen(path, "r");
  REQUIRE(f != NULL);
  char text[1024] = {0};
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  CHECK(n > 0 && strstr(text, "to the file") != NULL);
  CHECK(strstr(text, "to stderr") == NULL);
  OK(TRITONSERVER_ServerOptionsSetLogInfo(o, false));
  CHECK(!TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_INFO));
  OK(TRITONSERVER_ServerOptionsSetLogInfo(o, true));
  OK(TRITONSERVER_ServerOptionsSetLogVerbose(o, 1));
  CHECK(TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE));
  OK(TRITONSERVER_ServerOptionsSetLogVerbose(o, 0));
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

/* The response cache's setters become the command line's cache flags,
 * which srv_options_validate checks at ServerNew. */
static void test_cache(void) {
  TRITONSERVER_ServerOptions *o = options();
  OK(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, "/"));
  OK(TRITONSERVER_ServerOptionsSetCacheConfig(o, "local", "{\"size\": \"1048576\"}"));
  srv_options_t opt;
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  REQUIRE(opt.cache_config_count == 1);
  CHECK_STREQ(opt.cache_configs[0], "local,size=1048576");
  CHECK(srv_options_validate(&opt) == NULL);
  srv_options_free(&opt);
  FAILS(TRITONSERVER_ServerOptionsSetCacheConfig(o, "local", "{}"), INVALID_ARG,
        "must be a JSON object of settings");
  FAILS(TRITONSERVER_ServerOptionsSetCacheConfig(o, "local", "{\"size\": 1, \"x\": []}"),
        INVALID_ARG, "setting 'x' must be a string or an integer");
  FAILS(TRITONSERVER_ServerOptionsSetCacheConfig(o, "", "{\"size\": 1}"), INVALID_ARG,
        "cache name");
  /* A refused setting took back those before it: still one flag. */
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_EQ_U64(opt.cache_config_count, 1);
  srv_options_free(&opt);
  /* A second cache: refused when the server starts, in Triton's words. */
  OK(TRITONSERVER_ServerOptionsSetCacheConfig(o, "redis", "{\"host\": \"localhost\"}"));
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  CHECK(st != NULL &&
        strstr(srv_status_message(st), "found multiple cache configurations") != NULL);
  srv_status_free(st);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
  o = options();
  OK(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, "/"));
  OK(TRITONSERVER_ServerOptionsSetResponseCacheByteSize(o, 4096));
  REQUIRE(srv_embed_options_build(o, &opt) == NULL);
  CHECK_EQ_U64(opt.response_cache_byte_size, 4096);
  CHECK(srv_options_validate(&opt) == NULL);
  srv_options_free(&opt);
  OK(TRITONSERVER_ServerOptionsDelete(o));
}

UNIT_MAIN("embed_options_test", UNIT_CASE(test_new_delete), UNIT_CASE(test_flags),
          UNIT_CASE(test_bad_values), UNIT_CASE(test_null_arguments),
          UNIT_CASE(test_absent_features), UNIT_CASE(test_rate_limiter),
          UNIT_CASE(test_triton_flags), UNIT_CASE(test_log_file), UNIT_CASE(test_cache))
