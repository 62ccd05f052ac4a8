/* Flag parsing: both value forms, repeats, defaults, and precise errors. */
#include "server/options.h"

#include "server/common/restricted.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/unit.h"

static srv_status_t *parse(srv_options_t *opt, char **argv) {
  int argc = 0;
  while (argv[argc] != NULL) argc++;
  return srv_options_parse(opt, argc, argv);
}

static void defaults_match_tritonserver(void) {
  srv_options_t opt;
  char *argv[] = {"nereid", NULL};
  CHECK(parse(&opt, argv) == NULL);
  CHECK_EQ_U64(opt.grpc_port, 8001);
  CHECK_STREQ(opt.grpc_address, "0.0.0.0");
  CHECK_EQ_U64(opt.exit_timeout_secs, 30);
  CHECK_EQ_U64(opt.repository_poll_secs, 15);
  CHECK_EQ_U64(opt.model_load_threads, 4);
  CHECK(opt.allow_grpc && opt.allow_http && opt.allow_metrics);
  /* tritonserver's fixed gRPC limit (INT32_MAX). */
  CHECK_EQ_U64(opt.grpc_max_receive_message_size, 2147483647);
  /* Nereid's own bounds (tritonserver has none). */
  CHECK_EQ_U64(opt.grpc_stream_max_queued_responses, 262144);
  CHECK_EQ_U64(opt.grpc_stream_max_queued_bytes, 256u << 20);
  CHECK_EQ_U64(opt.grpc_request_max_queued_responses, 65536);
  CHECK_EQ_U64(opt.grpc_request_max_queued_bytes, 64u << 20);
  srv_options_free(&opt);
}

static void both_value_forms_and_repeats(void) {
  srv_options_t opt;
  char *argv[] = {"nereid",
                  "--model-repository=/a",
                  "--model-repository",
                  "/b",
                  "--grpc-port",
                  "9000",
                  "--log-verbose=2",
                  "--worker-threads=3",
                  "--grpc-threads=2",
                  "--model-store=/c",
                  NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  CHECK_EQ_U64(opt.model_repository_count, 3);
  CHECK_STREQ(opt.model_repositories[0], "/a");
  CHECK_STREQ(opt.model_repositories[1], "/b");
  CHECK_STREQ(opt.model_repositories[2], "/c");
  CHECK_EQ_U64(opt.grpc_port, 9000);
  CHECK_EQ_U64(opt.log_verbose, 2);
  CHECK_EQ_U64(opt.worker_threads, 3);
  CHECK_EQ_U64(opt.grpc_threads, 2);
  srv_options_free(&opt);
}

static void expect_error(char **argv, grpc_status_code code, const char *needle) {
  srv_options_t opt;
  srv_status_t *st = parse(&opt, argv);
  CHECK(st != NULL);
  if (st != NULL) {
    CHECK_EQ_U64(srv_status_code(st), code);
    if (strstr(srv_status_message(st), needle) == NULL) {
      fprintf(stderr, "  message '%s' lacks '%s'\n", srv_status_message(st), needle);
      CHECK(0);
    }
    srv_status_free(st);
  }
  srv_options_free(&opt);
}

static void bad_flags_name_the_flag(void) {
  char *unknown[] = {"nereid", "--no-such-flag=1", NULL};
  expect_error(unknown, GRPC_STATUS_INVALID_ARGUMENT, "--no-such-flag");
  char *port[] = {"nereid", "--grpc-port=70000", NULL};
  expect_error(port, GRPC_STATUS_INVALID_ARGUMENT, "--grpc-port");
  char *nan[] = {"nereid", "--grpc-port=80a", NULL};
  expect_error(nan, GRPC_STATUS_INVALID_ARGUMENT, "80a");
  char *missing[] = {"nereid", "--grpc-port", NULL};
  expect_error(missing, GRPC_STATUS_INVALID_ARGUMENT, "needs a value");
  char *positional[] = {"nereid", "models", NULL};
  expect_error(positional, GRPC_STATUS_INVALID_ARGUMENT, "models");
  char *boolean[] = {"nereid", "--allow-http=maybe", NULL};
  expect_error(boolean, GRPC_STATUS_INVALID_ARGUMENT, "maybe");
}

static void limit_flags(void) {
  srv_options_t opt;
  char *argv[] = {"nereid",
                  "--grpc-max-receive-message-size=1048576",
                  "--grpc-stream-max-queued-responses",
                  "100",
                  "--grpc-stream-max-queued-bytes=4096",
                  "--grpc-request-max-queued-responses=10",
                  "--grpc-request-max-queued-bytes=2048",
                  NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  CHECK_EQ_U64(opt.grpc_max_receive_message_size, 1048576);
  CHECK_EQ_U64(opt.grpc_stream_max_queued_responses, 100);
  CHECK_EQ_U64(opt.grpc_stream_max_queued_bytes, 4096);
  CHECK_EQ_U64(opt.grpc_request_max_queued_responses, 10);
  CHECK_EQ_U64(opt.grpc_request_max_queued_bytes, 2048);
  srv_options_free(&opt);
  char *no_queue[] = {"nereid", "--grpc-request-max-queued-responses=0", NULL};
  expect_error(no_queue, GRPC_STATUS_INVALID_ARGUMENT,
               "--grpc-request-max-queued-responses");
  /* A limit of zero would refuse everything: not a value. */
  char *zero[] = {"nereid", "--grpc-max-receive-message-size=0", NULL};
  expect_error(zero, GRPC_STATUS_INVALID_ARGUMENT, "--grpc-max-receive-message-size");
  char *big[] = {"nereid", "--grpc-max-receive-message-size=2147483648", NULL};
  expect_error(big, GRPC_STATUS_INVALID_ARGUMENT, "--grpc-max-receive-message-size");
}

static void validate_checks_repositories(void) {
  srv_options_t opt;
  char *none[] = {"nereid", NULL};
  REQUIRE(parse(&opt, none) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  CHECK(st != NULL && strstr(srv_status_message(st), "--model-repository") != NULL);
  srv_status_free(st);
  srv_options_free(&opt);

  char *missing[] = {"nereid", "--model-repository=/no/such/dir", NULL};
  REQUIRE(parse(&opt, missing) == NULL);
  st = srv_options_validate(&opt);
  CHECK(st != NULL && srv_status_code(st) == GRPC_STATUS_NOT_FOUND);
  CHECK(st != NULL && strstr(srv_status_message(st), "/no/such/dir") != NULL);
  srv_status_free(st);
  srv_options_free(&opt);

  char *ok[] = {"nereid", "--model-repository=/", NULL};
  REQUIRE(parse(&opt, ok) == NULL);
  st = srv_options_validate(&opt);
  CHECK(st == NULL);
  srv_status_free(st);
  srv_options_free(&opt);
}

static void log_flags(void) {
  srv_options_t opt;
  char *none[] = {"nereid", "--model-repository=/", NULL};
  REQUIRE(parse(&opt, none) == NULL);
  CHECK(opt.log_info && opt.log_warning && opt.log_error);
  CHECK_STREQ(opt.log_format, "default");
  CHECK(opt.log_file == NULL);
  srv_options_free(&opt);

  char *set[] = {"nereid",          "--model-repository=/", "--log-info=false",
                 "--log-warning",   "false",                "--log-error=0",
                 "--log-format",    "ISO8601",              "--log-file=/tmp/x.log",
                 NULL};
  REQUIRE(parse(&opt, set) == NULL);
  CHECK(!opt.log_info && !opt.log_warning && !opt.log_error);
  CHECK_STREQ(opt.log_format, "ISO8601");
  CHECK_STREQ(opt.log_file, "/tmp/x.log");
  CHECK(srv_options_validate(&opt) == NULL);
  srv_options_free(&opt);

  /* tritonserver's text for a format it does not know. */
  char *bad[] = {"nereid", "--model-repository=/", "--log-format=iso8601", NULL};
  REQUIRE(parse(&opt, bad) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(srv_status_message(st), "invalid argument for --log-format, got: iso8601");
  srv_status_free(st);
  srv_options_free(&opt);
}

static void model_control_flags(void) {
  srv_options_t opt;
  char *none[] = {"nereid", "--model-repository=/", NULL};
  REQUIRE(parse(&opt, none) == NULL);
  CHECK_STREQ(opt.model_control_mode, "none");
  CHECK(opt.strict_readiness && opt.exit_on_error);
  CHECK(srv_options_validate(&opt) == NULL);
  srv_options_free(&opt);

  char *relaxed[] = {"nereid", "--strict-readiness=false", "--exit-on-error", "false",
                     NULL};
  REQUIRE(parse(&opt, relaxed) == NULL);
  CHECK(!opt.strict_readiness && !opt.exit_on_error);
  srv_options_free(&opt);

  char *explicit_mode[] = {"nereid", "--model-repository=/",
                           "--model-control-mode=explicit", NULL};
  REQUIRE(parse(&opt, explicit_mode) == NULL);
  CHECK(srv_options_validate(&opt) == NULL);
  CHECK_EQ_U64(opt.load_model_count, 0);
  srv_options_free(&opt);

  char *with_loads[] = {"nereid",
                        "--model-repository=/",
                        "--model-control-mode",
                        "explicit",
                        "--load-model=a",
                        "--load-model",
                        "*",
                        "--model-load-thread-count=2",
                        NULL};
  REQUIRE(parse(&opt, with_loads) == NULL);
  CHECK(srv_options_validate(&opt) == NULL);
  REQUIRE(opt.load_model_count == 2);
  CHECK_STREQ(opt.load_models[0], "a");
  CHECK_STREQ(opt.load_models[1], "*");
  CHECK(opt.model_load_threads == 2);
  srv_options_free(&opt);

  char *poll_mode[] = {"nereid", "--model-repository=/", "--model-control-mode=poll",
                       "--repository-poll-secs=3", NULL};
  REQUIRE(parse(&opt, poll_mode) == NULL);
  CHECK(srv_options_validate(&opt) == NULL);
  CHECK(opt.repository_poll_secs == 3);
  srv_options_free(&opt);

  /* --load-model means something only in explicit mode, as in tritonserver. */
  char *stray_load[] = {"nereid", "--model-repository=/", "--load-model=a", NULL};
  REQUIRE(parse(&opt, stray_load) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  CHECK(st != NULL && strstr(srv_status_message(st), "--load-model") != NULL);
  srv_status_free(st);
  srv_options_free(&opt);

  char *zero_poll[] = {"nereid", "--repository-poll-secs=0", NULL};
  st = parse(&opt, zero_poll);
  CHECK(st != NULL);
  srv_status_free(st);
  srv_options_free(&opt);

  char *bogus[] = {"nereid", "--model-repository=/", "--model-control-mode=often", NULL};
  REQUIRE(parse(&opt, bogus) == NULL);
  st = srv_options_validate(&opt);
  CHECK(st != NULL && strstr(srv_status_message(st), "often") != NULL);
  srv_status_free(st);
  srv_options_free(&opt);
}

static void memory_pool_flags(void) {
  srv_options_t opt;
  char *defaults[] = {"nereid", "--model-repository=/", NULL};
  REQUIRE(parse(&opt, defaults) == NULL);
  /* tritonserver's defaults: 64 MiB per GPU, 256 MiB pinned. */
  CHECK_EQ_U64(srv_options_cuda_pool_bytes(&opt, 0), 64u << 20);
  CHECK_EQ_U64(srv_options_cuda_pool_bytes(&opt, 3), 64u << 20);
  CHECK_EQ_U64(opt.pinned_memory_pool_byte_size, 256u << 20);
  srv_options_free(&opt);

  char *set[] = {"nereid",
                 "--model-repository=/",
                 "--cuda-memory-pool-byte-size=0:1024",
                 "--cuda-memory-pool-byte-size",
                 "1:0",
                 "--cuda-memory-pool-byte-size=0:8589934592",
                 "--pinned-memory-pool-byte-size=4294967296",
                 NULL};
  REQUIRE(parse(&opt, set) == NULL);
  CHECK(srv_options_validate(&opt) == NULL);
  CHECK_EQ_U64(srv_options_cuda_pool_bytes(&opt, 0), 8589934592ull); /* the last wins */
  CHECK_EQ_U64(srv_options_cuda_pool_bytes(&opt, 1), 0);
  CHECK_EQ_U64(srv_options_cuda_pool_bytes(&opt, 2), 64u << 20);
  CHECK_EQ_U64(opt.pinned_memory_pool_byte_size, 4294967296ull);
  srv_options_free(&opt);

  const char *bad[] = {"0", "0:", ":5", "a:5", "0:5x", "-1:5", "0:-5", "99999999999:1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char flag[64];
    snprintf(flag, sizeof flag, "--cuda-memory-pool-byte-size=%s", bad[i]);
    char *argv[] = {"nereid", "--model-repository=/", flag, NULL};
    REQUIRE(parse(&opt, argv) == NULL);
    srv_status_t *st = srv_options_validate(&opt);
    CHECK(st != NULL && strstr(srv_status_message(st), "<GPU id>:<bytes>") != NULL);
    srv_status_free(st);
    srv_options_free(&opt);
  }
  char *negative[] = {"nereid", "--pinned-memory-pool-byte-size=-1", NULL};
  expect_error(negative, GRPC_STATUS_INVALID_ARGUMENT, "--pinned-memory-pool-byte-size");
  char *huge[] = {"nereid", "--pinned-memory-pool-byte-size=18446744073709551616", NULL};
  expect_error(huge, GRPC_STATUS_INVALID_ARGUMENT, "--pinned-memory-pool-byte-size");
}

/* validate's message for one flag value, "" when accepted. */
static void expect_validate(const char *flag, const char *needle) {
  srv_options_t opt;
  char *argv[] = {"nereid", "--model-repository=/", (char *)flag, NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  if (needle[0] == '\0') {
    CHECK(st == NULL);
  } else {
    CHECK(st != NULL && strstr(srv_status_message(st), needle) != NULL);
    if (st != NULL && strstr(srv_status_message(st), needle) == NULL)
      fprintf(stderr, "  message '%s' lacks '%s'\n", srv_status_message(st), needle);
  }
  srv_status_free(st);
  srv_options_free(&opt);
}

/* Triton's syntax, rules and texts for --grpc-restricted-protocol and
 * --http-restricted-api. */
static void restricted_flags(void) {
  srv_options_t opt;
  char *argv[] = {"nereid",
                  "--model-repository=/",
                  "--grpc-restricted-protocol=health,inference:infer-key=a=b",
                  "--grpc-restricted-protocol",
                  "model-repository:Admin=secret",
                  "--http-restricted-api=shared-memory,statistics:k=v",
                  NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  CHECK(srv_options_validate(&opt) == NULL);
  srv_restrictions_t r;
  REQUIRE(srv_restrictions_parse(&r, opt.grpc_restricted_protocols,
                                 opt.grpc_restricted_protocol_count,
                                 "grpc-restricted-protocol", SRV_GRPC_RESTRICTED_PREFIX,
                                 "protocol") == NULL);
  const srv_restriction_t *h = srv_restrictions_get(&r, SRV_GROUP_HEALTH);
  REQUIRE(h != NULL);
  CHECK_STREQ(h->key, "triton-grpc-protocol-infer-key");
  CHECK_STREQ(h->value, "a=b"); /* the first '=' ends the key */
  CHECK(srv_restriction_matches(h, "a=b", 3) && !srv_restriction_matches(h, "a=", 2));
  CHECK(srv_restrictions_get(&r, SRV_GROUP_INFERENCE) != NULL);
  CHECK_STREQ(srv_restrictions_get(&r, SRV_GROUP_MODEL_REPOSITORY)->key,
              "triton-grpc-protocol-Admin");
  CHECK(srv_restrictions_get(&r, SRV_GROUP_METADATA) == NULL);
  CHECK(srv_restrictions_get(&r, SRV_GROUP_NONE) == NULL);
  srv_restrictions_free(&r);
  srv_options_free(&opt);

  expect_validate("--http-restricted-api=health:k=v", "");
  const char *format =
      "--grpc-restricted-protocol option format is "
      "'<config name>:<setting>=<value>'. Got ";
  const char *bad[] = {"health", "health:k", ":k=v", "health:=v", "health:k="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char flag[96], needle[160];
    snprintf(flag, sizeof flag, "--grpc-restricted-protocol=%s", bad[i]);
    snprintf(needle, sizeof needle, "%s%s", format, bad[i]);
    expect_validate(flag, needle);
    expect_validate(flag, "Bad option: \"--grpc-restricted-protocol\".");
  }
  expect_validate("--grpc-restricted-protocol=healthy:k=v",
                  "unknown restricted protocol 'healthy'");
  expect_validate("--grpc-restricted-protocol=health,,metadata:k=v",
                  "unknown restricted protocol ''");
  expect_validate("--http-restricted-api=metrics:k=v",
                  "unknown restricted api 'metrics'");
  expect_validate(
      "--http-restricted-api=trace,trace:k=v",
      "restricted api 'trace' can not be specified in multiple config groups");
  /* A group once across repeats too. */
  char *twice[] = {"nereid", "--model-repository=/",
                   "--grpc-restricted-protocol=logging:a=1",
                   "--grpc-restricted-protocol=statistics,logging:b=2", NULL};
  REQUIRE(parse(&opt, twice) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  CHECK(st != NULL && strstr(srv_status_message(st),
                             "restricted protocol 'logging' can not be specified in "
                             "multiple config groups") != NULL);
  srv_status_free(st);
  srv_options_free(&opt);
  /* Every group name, in Triton's spelling. */
  expect_validate(
      "--grpc-restricted-protocol=health,metadata,inference,shared-memory,"
      "model-config,model-repository,statistics,trace,logging:k=v",
      "");
}

/* tritonserver's keepalive defaults; the compression level's values. */
static void transport_flags(void) {
  srv_options_t opt;
  char *argv[] = {"nereid", NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  CHECK_EQ_U64(opt.grpc_keepalive_time_ms, 7200000);
  CHECK_EQ_U64(opt.grpc_keepalive_timeout_ms, 20000);
  CHECK(!opt.grpc_keepalive_permit_without_calls);
  CHECK_EQ_U64(opt.grpc_http2_max_pings_without_data, 2);
  CHECK_EQ_U64(opt.grpc_http2_min_recv_ping_interval_ms, 300000);
  CHECK_EQ_U64(opt.grpc_http2_max_ping_strikes, 2);
  CHECK_EQ_U64(opt.grpc_max_connection_age_ms, 0);
  CHECK_EQ_U64(opt.grpc_max_connection_age_grace_ms, 0);
  CHECK_EQ_U64(opt.grpc_max_concurrent_streams, 1024);
  CHECK_EQ_U64(srv_options_compression_level(&opt), 0);
  srv_options_free(&opt);

  char *set[] = {"nereid",
                 "--grpc-keepalive-time=1000",
                 "--grpc-keepalive-timeout=500",
                 "--grpc-keepalive-permit-without-calls=1",
                 "--grpc-http2-max-pings-without-data=0",
                 "--grpc-http2-min-recv-ping-interval-without-data=10000",
                 "--grpc-http2-max-ping-strikes=0",
                 "--grpc-max-connection-age=60000",
                 "--grpc-max-connection-age-grace=5000",
                 "--grpc-max-concurrent-streams=8",
                 "--grpc-infer-response-compression-level=HIGH",
                 NULL};
  REQUIRE(parse(&opt, set) == NULL);
  CHECK(opt.grpc_keepalive_permit_without_calls);
  CHECK_EQ_U64(opt.grpc_http2_max_pings_without_data, 0);
  CHECK_EQ_U64(opt.grpc_http2_min_recv_ping_interval_ms, 10000);
  CHECK_EQ_U64(opt.grpc_max_connection_age_ms, 60000);
  CHECK_EQ_U64(opt.grpc_max_concurrent_streams, 8);
  CHECK_EQ_U64(srv_options_compression_level(&opt), 3);
  srv_options_free(&opt);

  expect_validate("--grpc-infer-response-compression-level=low", "");
  expect_validate("--grpc-infer-response-compression-level=medium", "");
  expect_validate("--grpc-infer-response-compression-level=max",
                  "invalid argument for --grpc_infer_response_compression_level");
  char *zero[] = {"nereid", "--grpc-max-concurrent-streams=0", NULL};
  expect_error(zero, GRPC_STATUS_INVALID_ARGUMENT, "--grpc-max-concurrent-streams");
  char *neg[] = {"nereid", "--grpc-keepalive-time=-5", NULL};
  expect_error(neg, GRPC_STATUS_INVALID_ARGUMENT, "--grpc-keepalive-time");
}

/* The default --backend-directory: the installation's backends folder
 * beside bin/ when it exists (tools/install's layout), else tritonserver's. */
static void default_backend_directory(void) {
  char root[] = "/tmp/options_test_XXXXXX";
  REQUIRE(mkdtemp(root) != NULL);
  char bin[PATH_MAX], backends[PATH_MAX], exe[PATH_MAX];
  snprintf(bin, sizeof bin, "%s/bin", root);
  snprintf(backends, sizeof backends, "%s/backends", root);
  snprintf(exe, sizeof exe, "%s/nereid", bin);
  REQUIRE(mkdir(bin, 0700) == 0);

  char *dir = srv_options_backend_directory_for(exe);
  CHECK_STREQ(dir, "/opt/tritonserver/backends"); /* no backends folder yet */
  free(dir);
  REQUIRE(mkdir(backends, 0700) == 0);
  dir = srv_options_backend_directory_for(exe);
  CHECK_STREQ(dir, backends);
  free(dir);
  const char *odd[] = {NULL, "nereid", "/nereid", ""};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    dir = srv_options_backend_directory_for(odd[i]);
    CHECK_STREQ(dir, "/opt/tritonserver/backends");
    free(dir);
  }

  /* parse's default is the rule applied to this very executable. */
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  self[n] = '\0';
  srv_options_t opt;
  char *argv[] = {"nereid", NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  dir = srv_options_backend_directory_for(self);
  CHECK_STREQ(opt.backend_directory, dir);
  CHECK_STREQ(opt.repoagent_directory, "/opt/tritonserver/repoagents"); /* Triton's */
  free(dir);
  srv_options_free(&opt);
  char *flag[] = {"nereid", "--backend-directory=/x", "--repoagent-directory=/a", NULL};
  REQUIRE(parse(&opt, flag) == NULL);
  CHECK_STREQ(opt.backend_directory, "/x");
  CHECK_STREQ(opt.repoagent_directory, "/a");
  srv_options_free(&opt);

  CHECK(rmdir(backends) == 0 && rmdir(bin) == 0 && rmdir(root) == 0);
}

/* Auto-complete: on by default on the command line, as tritonserver; the
 * older --strict-model-config and the newer flag, which wins. */
static void auto_complete_flags(void) {
  srv_options_t opt;
  struct {
    const char *flags[3];
    bool strict;
  } cases[] = {
      {{NULL}, false},
      {{"--disable-auto-complete-config", NULL}, true},
      {{"--disable-auto-complete-config=false", NULL}, false},
      {{"--strict-model-config=true", NULL}, true},
      {{"--strict-model-config", "false", NULL}, false},
      {{"--strict-model-config=false", "--disable-auto-complete-config", NULL}, true},
      {{"--disable-auto-complete-config", "--strict-model-config=false", NULL}, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[4] = {"nereid"};
    for (int k = 0; k < 3 && cases[i].flags[k] != NULL; k++)
      argv[k + 1] = (char *)cases[i].flags[k];
    REQUIRE(parse(&opt, argv) == NULL);
    if (opt.strict_model_config != cases[i].strict)
      fprintf(stderr, "  case %zu: strict_model_config is %d\n", i,
              (int)opt.strict_model_config);
    CHECK(opt.strict_model_config == cases[i].strict);
    srv_options_free(&opt);
  }
  char *bad[] = {"nereid", "--strict-model-config=maybe", NULL};
  expect_error(bad, GRPC_STATUS_INVALID_ARGUMENT, "--strict-model-config");
}

/* tritonserver's other flags: defaults, values, bounds, and the features
 * Nereid lacks refused naming the feature, not as unknown flags. */
static void triton_flags(void) {
  srv_options_t opt;
  char *none[] = {"nereid", NULL};
  REQUIRE(parse(&opt, none) == NULL);
  CHECK_STREQ(opt.server_id, "triton");
  CHECK_STREQ(opt.model_config_name, "");
  CHECK_EQ_U64(opt.model_load_retry_count, 0);
  CHECK(opt.allow_gpu_metrics && !opt.reuse_grpc_port && !opt.reuse_http_port);
  CHECK(opt.min_compute_capability == 6.0);
  CHECK_STREQ(opt.rate_limit, "off");
  srv_options_free(&opt);
  char *argv[] = {"nereid",
                  "--id=edge-7",
                  "--model-config-name=h100",
                  "--model-load-retry-count=3",
                  "--allow-gpu-metrics=false",
                  "--reuse-grpc-port=true",
                  "--reuse-http-port",
                  "--buffer-manager-thread-count=4",
                  "--min-supported-compute-capability=7.5",
                  "--cuda-virtual-address-size=0:1073741824",
                  "--model-load-gpu-limit=0:1.0",
                  "--cache-directory=/opt/tritonserver/caches",
                  "--repoagent-directory=/opt/tritonserver/repoagents",
                  "--rate-limit=off",
                  "--response-cache-byte-size=0",
                  "--model-namespacing=false",
                  "--model-repository=/",
                  NULL};
  REQUIRE(parse(&opt, argv) == NULL);
  CHECK_STREQ(opt.server_id, "edge-7");
  CHECK_STREQ(opt.model_config_name, "h100");
  CHECK_EQ_U64(opt.model_load_retry_count, 3);
  CHECK(!opt.allow_gpu_metrics && opt.reuse_grpc_port && opt.reuse_http_port);
  CHECK_EQ_U64(opt.buffer_manager_threads, 4);
  CHECK(opt.min_compute_capability == 7.5);
  CHECK(srv_options_validate(&opt) == NULL);
  srv_options_free(&opt);
  char *retry[] = {"nereid", "--model-load-retry-count=101", NULL};
  expect_error(retry, GRPC_STATUS_INVALID_ARGUMENT,
               "--model-load-retry-count expects an integer in [0, 100], got '101'");
  char *cc[] = {"nereid", "--min-supported-compute-capability=7.x", NULL};
  expect_error(cc, GRPC_STATUS_INVALID_ARGUMENT,
               "--min-supported-compute-capability expects a number in [0, 100], got "
               "'7.x'");
  char *bm[] = {"nereid", "--buffer-manager-thread-count=-1", NULL};
  expect_error(bm, GRPC_STATUS_INVALID_ARGUMENT, "--buffer-manager-thread-count");
  expect_validate("--model-config-name=../x",
                  "--model-config-name '../x': expected a file name");
  expect_validate("--cuda-virtual-address-size=0", "--cuda-virtual-address-size '0'");
  expect_validate("--model-load-gpu-limit=0:x", "expected <GPU id>:<fraction>");
  expect_validate("--model-load-gpu-limit=0:0.5", "");
  char *limits[] = {"nereid", "--model-load-gpu-limit=1:0.5",
                    "--model-load-gpu-limit=1:0.25", NULL};
  REQUIRE(parse(&opt, limits) == NULL);
  CHECK(srv_options_gpu_load_limit(&opt, 1) == 0.25); /* the last one */
  CHECK(srv_options_gpu_load_limit(&opt, 0) == 1.0);
  srv_options_free(&opt);
  expect_validate("--model-repository=s3://bucket/models", "local folders only");
  expect_validate("--model-repository=gs://bucket/models", "no s3://, gs:// or as://");
  expect_validate("--model-repository=as://account/container", "copy the repository");
  expect_validate("--host-policy=gpu_0,numa-nodes=1", "unknown key 'numa-nodes'");
  expect_validate("--host-policy=gpu_0,numa-node=1024", "numa-node expects a NUMA node");
  /* No machine has node 1000; without NUMA memory policies the refusal
   * names the setting as well. */
  expect_validate("--host-policy=gpu_0,numa-node=1000", "'gpu_0,numa-node=1000': ");
  expect_validate("--host-policy=gpu_0,cpu-cores=0-3", "");
  expect_validate("--model-namespacing=true", "");
  /* The rate limiter: the mode in any case, as tritonserver reads it;
   * resources in Triton's two forms, and every bad form refused with
   * tritonserver's text. */
  expect_validate("--rate-limit=execution_count", "");
  expect_validate("--rate-limit=EXECUTION_COUNT", "");
  expect_validate("--rate-limit=Off", "");
  expect_validate("--rate-limit=sometimes",
                  "invalid argument for --rate-limit: expected off or execution_count, "
                  "got 'sometimes'");
  expect_validate("--rate-limit-resource=R1:4", "");
  expect_validate("--rate-limit-resource=R1:4:0", "");
  expect_validate("--rate-limit-resource=R1:4:-1", "");
  const char *bad_resources[] = {"R1",      ":4",      "R1:-4",    "R1:4:1:2",
                                 "R1:4:-2", "R1:four", "R1:4:gpu", "R1:2147483648"};
  for (size_t i = 0; i < sizeof bad_resources / sizeof *bad_resources; i++) {
    char flag[64], needle[128];
    snprintf(flag, sizeof flag, "--rate-limit-resource=%s", bad_resources[i]);
    snprintf(needle, sizeof needle,
             "--rate-limit-resource option format is '<resource_name>:<count>:<device>' "
             "or '<resource_name>:<count>'. Got %s ",
             bad_resources[i]);
    expect_validate(flag, needle);
  }
  char *rl[] = {"nereid", "--model-repository=/", "--rate-limit=Execution_Count", NULL};
  REQUIRE(parse(&opt, rl) == NULL);
  CHECK(srv_options_rate_limited(&opt));
  srv_options_free(&opt);
  char *rl_off[] = {"nereid", "--model-repository=/", NULL};
  REQUIRE(parse(&opt, rl_off) == NULL);
  CHECK(!srv_options_rate_limited(&opt));
  srv_options_free(&opt);
  /* The response cache: accepted now; its own checks (../cache/) answer. */
  expect_validate("--response-cache-byte-size=1024", "");
  expect_validate("--cache-config=local,size=1048576", "");
  expect_validate("--cache-config=redis,host=localhost", ""); /* a library: at start */
  expect_validate("--cache-config=size=1", "No cache specified.");
  char *both[] = {"nereid", "--model-repository=/", "--response-cache-byte-size=12345",
                  "--cache-config=local,size=67890", NULL};
  REQUIRE(parse(&opt, both) == NULL);
  srv_status_t *cst = srv_options_validate(&opt);
  CHECK(cst != NULL && strstr(srv_status_message(cst), "Incompatible flags") != NULL);
  srv_status_free(cst);
  srv_options_free(&opt);
  /* Namespacing and the rate limiter work; a bad form is INVALID_ARGUMENT. */
  char *ns[] = {"nereid", "--model-repository=/", "--model-namespacing", NULL};
  REQUIRE(parse(&opt, ns) == NULL);
  CHECK(opt.model_namespacing);
  CHECK(srv_options_validate(&opt) == NULL);
  srv_options_free(&opt);
  char *rate[] = {"nereid", "--model-repository=/", "--rate-limit=often", NULL};
  REQUIRE(parse(&opt, rate) == NULL);
  srv_status_t *st = srv_options_validate(&opt);
  CHECK(st != NULL && srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
  srv_status_free(st);
  srv_options_free(&opt);
}

UNIT_MAIN("options",
          UNIT_CASE(triton_flags),
          UNIT_CASE(default_backend_directory),
          UNIT_CASE(restricted_flags),
          UNIT_CASE(transport_flags),
          UNIT_CASE(memory_pool_flags),
          UNIT_CASE(model_control_flags),
          UNIT_CASE(limit_flags),
          UNIT_CASE(defaults_match_tritonserver),
          UNIT_CASE(both_value_forms_and_repeats),
          UNIT_CASE(bad_flags_name_the_flag),
          UNIT_CASE(validate_checks_repositories),
          UNIT_CASE(auto_complete_flags),
          UNIT_CASE(log_flags))
