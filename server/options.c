/* Command-line parsing (see options.h): a table of flags, each with its kind
 * and where its value goes. Main thread only. */
#include "server/options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/common/host_policy.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/common/restricted.h"

typedef enum {
  FLAG_STRING,
  FLAG_STRING_LIST, /* offset: the char ** list; its count follows it */
  FLAG_INT,
  FLAG_BOOL,
  FLAG_U64,    /* uint64_t in [min, UINT64_MAX] */
  FLAG_DOUBLE, /* double in [min, max] */
} flag_kind_t;

typedef struct {
  const char *name;
  flag_kind_t kind;
  size_t offset; /* of the value in srv_options_t */
  long min, max; /* FLAG_INT range */
  const char *help;
} flag_t;

#define OPT(field) offsetof(srv_options_t, field)

/* FLAG_STRING_LIST finds a list's count right after the list. */
_Static_assert(offsetof(srv_options_t, model_repository_count) ==
                   offsetof(srv_options_t, model_repositories) + sizeof(char **),
               "count must follow its list");
_Static_assert(offsetof(srv_options_t, load_model_count) ==
                   offsetof(srv_options_t, load_models) + sizeof(char **),
               "count must follow its list");
_Static_assert(offsetof(srv_options_t, backend_config_count) ==
                   offsetof(srv_options_t, backend_configs) + sizeof(char **),
               "count must follow its list");
_Static_assert(offsetof(srv_options_t, cuda_memory_pool_count) ==
                   offsetof(srv_options_t, cuda_memory_pools) + sizeof(char **),
               "count must follow its list");
_Static_assert(offsetof(srv_options_t, grpc_restricted_protocol_count) ==
                   offsetof(srv_options_t, grpc_restricted_protocols) + sizeof(char **),
               "count must follow its list");
_Static_assert(offsetof(srv_options_t, http_restricted_api_count) ==
                   offsetof(srv_options_t, http_restricted_apis) + sizeof(char **),
               "count must follow its list");
_Static_assert(offsetof(srv_options_t, metrics_config_count) ==
                   offsetof(srv_options_t, metrics_configs) + sizeof(char **),
               "count must follow its list");
#define LIST_CHECK(list, count)                                              \
  _Static_assert(offsetof(srv_options_t, count) ==                           \
                     offsetof(srv_options_t, list) + sizeof(char **),        \
                 "count must follow its list")
LIST_CHECK(cuda_virtual_address_sizes, cuda_virtual_address_size_count);
LIST_CHECK(model_load_gpu_limits, model_load_gpu_limit_count);
LIST_CHECK(host_policies, host_policy_count);
LIST_CHECK(rate_limit_resources, rate_limit_resource_count);
LIST_CHECK(cache_configs, cache_config_count);
LIST_CHECK(trace_configs, trace_config_count);
LIST_CHECK(trace_levels, trace_level_count);

static const flag_t flags[] = {
    {"model-repository", FLAG_STRING_LIST, OPT(model_repositories), 0, 0,
     "Path of a model repository; repeat for several."},
    {"model-store", FLAG_STRING_LIST, OPT(model_repositories), 0, 0,
     "Same as --model-repository (tritonserver's older name)."},
    {"backend-config", FLAG_STRING_LIST, OPT(backend_configs), 0, 0,
     "Setting for one backend, <backend>,<key>=<value>; repeatable. The backend "
     "reads it from TRITONBACKEND_BackendConfig."},
    {"backend-directory", FLAG_STRING, OPT(backend_directory), 0, 0,
     "Folder of backends, <dir>/<name>/libtriton_<name>.so (default: the "
     "installation's own, <folder of the nereid executable>/../backends, when that "
     "folder exists, else /opt/tritonserver/backends as tritonserver)."},
    {"grpc-address", FLAG_STRING, OPT(grpc_address), 0, 0,
     "Address the gRPC service binds to (default 0.0.0.0)."},
    {"model-control-mode", FLAG_STRING, OPT(model_control_mode), 0, 0,
     "How models are loaded: none (all at start-up, the default); explicit (at "
     "start-up only those named by --load-model, then by RepositoryModelLoad / "
     "Unload); poll (all at start-up, then the repositories are rescanned every "
     "--repository-poll-secs: changed models reload, new ones load, removed ones "
     "unload)."},
    {"load-model", FLAG_STRING_LIST, OPT(load_models), 0, 0,
     "Model to load at start-up in explicit mode; repeatable; '*' loads all."},
    {"repository-poll-secs", FLAG_INT, OPT(repository_poll_secs), 1, 86400,
     "Seconds between two scans of the repositories in poll mode (default 15)."},
    {"model-load-thread-count", FLAG_INT, OPT(model_load_threads), 1, 256,
     "Threads that load and unload models in parallel (default 4)."},
    {"strict-readiness", FLAG_BOOL, OPT(strict_readiness), 0, 0,
     "Ready only when every model is ready (default true)."},
    {"exit-on-error", FLAG_BOOL, OPT(exit_on_error), 0, 0,
     "Exit when a model fails to load at start-up (default true, as tritonserver)."},
    /* Model config auto-complete: these two rows together. */
    {"disable-auto-complete-config", FLAG_BOOL, OPT(disable_auto_complete_config), 0, 0,
     "Backends may not complete model configs, and every model folder needs its "
     "config.pbtxt (default: they may, and a folder without one is completed from "
     "its model file)."},
    {"strict-model-config", FLAG_BOOL, OPT(strict_model_config), 0, 0,
     "Deprecated, as in tritonserver: true is --disable-auto-complete-config, false "
     "(the default) lets backends complete model configs."},
    {"grpc-port", FLAG_INT, OPT(grpc_port), 0, 65535,
     "Port of the gRPC service (default 8001; 0 picks a free port)."},
    {"worker-threads", FLAG_INT, OPT(worker_threads), 0, 1024,
     "Actor worker threads (default 0: one per core)."},
    {"grpc-threads", FLAG_INT, OPT(grpc_threads), 0, 1024,
     "Completion queues of the gRPC frontend, one thread each (default 0: one per "
     "two cores, at least one)."},
    {"log-verbose", FLAG_INT, OPT(log_verbose), 0, INT_MAX,
     "Verbose logging level; 0 turns it off (default 0)."},
    {"log-info", FLAG_BOOL, OPT(log_info), 0, 0, "Log INFO lines (default true)."},
    {"log-warning", FLAG_BOOL, OPT(log_warning), 0, 0,
     "Log WARNING lines (default true)."},
    {"log-error", FLAG_BOOL, OPT(log_error), 0, 0, "Log ERROR lines (default true)."},
    {"log-format", FLAG_STRING, OPT(log_format), 0, 0,
     "Layout of log lines: default (\"I1120 22:39:22.123456 <tid> file.c:42] ...\") or "
     "ISO8601 (\"2026-11-20T22:39:22Z I <tid> file.c:42] ...\")."},
    {"log-file", FLAG_STRING, OPT(log_file), 0, 0,
     "File the log is appended to instead of stderr (created if missing). The "
     "LogSettings RPC and /v2/logging cannot change it, as in Triton."},
    {"exit-timeout-secs", FLAG_INT, OPT(exit_timeout_secs), 0, INT_MAX,
     "Seconds that shutdown waits for in-flight calls (default 30)."},
    {"grpc-max-receive-message-size", FLAG_INT, OPT(grpc_max_receive_message_size), 1,
     INT_MAX,
     "Largest request message in bytes, on the wire and once decompressed; past it "
     "the call (or the stream's request) fails RESOURCE_EXHAUSTED (default "
     "2147483647, tritonserver's fixed limit)."},
    {"grpc-stream-max-queued-responses", FLAG_INT, OPT(grpc_stream_max_queued_responses),
     1, INT_MAX,
     "Responses that may wait to be written on one ModelStreamInfer stream; past it "
     "the request whose response does not fit ends with a resource-exhausted error "
     "and is cancelled (default 262144)."},
    {"grpc-stream-max-queued-bytes", FLAG_INT, OPT(grpc_stream_max_queued_bytes), 1,
     INT_MAX,
     "Bytes of responses that may wait to be written on one ModelStreamInfer stream "
     "(default 268435456)."},
    {"grpc-request-max-queued-responses", FLAG_INT,
     OPT(grpc_request_max_queued_responses), 1, INT_MAX,
     "Responses of one request that the frontend may hold: waiting to be written on a "
     "stream, or kept for a nereid_aggregate_responses reply (default 65536)."},
    {"grpc-request-max-queued-bytes", FLAG_INT, OPT(grpc_request_max_queued_bytes), 1,
     INT_MAX,
     "Bytes of responses of one request that the frontend may hold (default "
     "67108864)."},
    {"grpc-restricted-protocol", FLAG_STRING_LIST, OPT(grpc_restricted_protocols), 0, 0,
     "<protocols>:<key>=<value>: the comma-separated protocol groups answer only calls "
     "whose metadata has triton-grpc-protocol-<key> set to <value>, else UNAVAILABLE; "
     "repeatable, each group once. Groups: health, metadata, inference, "
     "shared-memory, model-config, model-repository, statistics, trace, logging "
     "(grpc.health.v1 is never restricted)."},
    {"http-restricted-api", FLAG_STRING_LIST, OPT(http_restricted_apis), 0, 0,
     "<apis>:<key>=<value>: the comma-separated API groups (as "
     "--grpc-restricted-protocol) answer only requests with header <key>: <value>, "
     "else 403; repeatable, each group once."},
    {"grpc-keepalive-time", FLAG_INT, OPT(grpc_keepalive_time_ms), 1, INT_MAX,
     "Milliseconds after which the server pings an idle transport (default 7200000, "
     "2 hours)."},
    {"grpc-keepalive-timeout", FLAG_INT, OPT(grpc_keepalive_timeout_ms), 1, INT_MAX,
     "Milliseconds the server waits for a ping's acknowledgement before it closes the "
     "connection (default 20000)."},
    {"grpc-keepalive-permit-without-calls", FLAG_BOOL,
     OPT(grpc_keepalive_permit_without_calls), 0, 0,
     "Let clients ping while no call is in flight without a ping strike (default "
     "false)."},
    {"grpc-http2-max-pings-without-data", FLAG_INT,
     OPT(grpc_http2_max_pings_without_data), 0, INT_MAX,
     "Pings the server sends while it has no data to send; 0: no limit (default 2)."},
    {"grpc-http2-min-recv-ping-interval-without-data", FLAG_INT,
     OPT(grpc_http2_min_recv_ping_interval_ms), 0, INT_MAX,
     "Milliseconds that must separate two client pings while no data flows; a ping "
     "sooner is a ping strike (default 300000)."},
    {"grpc-http2-max-ping-strikes", FLAG_INT, OPT(grpc_http2_max_ping_strikes), 0,
     INT_MAX,
     "Ping strikes after which the server sends GOAWAY (too_many_pings) and closes the "
     "connection; 0: no limit (default 2)."},
    {"grpc-max-connection-age", FLAG_INT, OPT(grpc_max_connection_age_ms), 1, INT_MAX,
     "Milliseconds after which the server asks a connection to go (GOAWAY), so that "
     "clients rebalance (default: none)."},
    {"grpc-max-connection-age-grace", FLAG_INT, OPT(grpc_max_connection_age_grace_ms), 1,
     INT_MAX,
     "Milliseconds that calls of an aged connection get to finish before it is closed "
     "(default: none, they may finish)."},
    {"grpc-max-concurrent-streams", FLAG_INT, OPT(grpc_max_concurrent_streams), 1,
     INT_MAX,
     "Calls one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_"
     "STREAMS); more wait in the client (default 1024)."},
    {"grpc-infer-response-compression-level", FLAG_STRING,
     OPT(grpc_infer_response_compression_level), 0, 0,
     "Compression of ModelInfer and ModelStreamInfer responses: none, low, medium or "
     "high; the algorithm is one the client accepts (default none)."},
    {"grpc-use-ssl", FLAG_BOOL, OPT(grpc_use_ssl), 0, 0,
     "Use SSL/TLS on the gRPC port; needs --grpc-server-cert and --grpc-server-key "
     "(default false)."},
    {"grpc-use-ssl-mutual", FLAG_BOOL, OPT(grpc_use_ssl_mutual), 0, 0,
     "Use mutual SSL/TLS on the gRPC port: implies --grpc-use-ssl, and every client "
     "must present a certificate that --grpc-root-cert verifies (default false)."},
    {"grpc-server-cert", FLAG_STRING, OPT(grpc_server_cert), 0, 0,
     "File holding the PEM-encoded server certificate (chain)."},
    {"grpc-server-key", FLAG_STRING, OPT(grpc_server_key), 0, 0,
     "File holding the PEM-encoded server key."},
    {"grpc-root-cert", FLAG_STRING, OPT(grpc_root_cert), 0, 0,
     "File holding the PEM-encoded root certificate(s) that client certificates must "
     "chain to (required by --grpc-use-ssl-mutual)."},
    {"grpc-ssl-refresh-interval-secs", FLAG_INT, OPT(grpc_ssl_refresh_interval_secs), 1,
     86400,
     "Seconds between two reads of the certificate and key files: changed files serve "
     "new connections without a restart (default 60; Nereid's own)."},
    {"grpc-health-port", FLAG_INT, OPT(grpc_health_port), 0, 65535,
     "A plaintext port beside the TLS gRPC port on which only grpc.health.v1.Health "
     "answers, for Kubernetes gRPC probes; needs --grpc-use-ssl (default 0: none; "
     "Nereid's own)."},
    {"grpc-health-address", FLAG_STRING, OPT(grpc_health_address), 0, 0,
     "Address of the plaintext health port (default: --grpc-address; Nereid's own)."},
    {"allow-grpc", FLAG_BOOL, OPT(allow_grpc), 0, 0,
     "Serve gRPC (default true; gRPC cannot be turned off yet)."},
    {"allow-http", FLAG_BOOL, OPT(allow_http), 0, 0,
     "Serve HTTP/REST, KServe v2 with Triton's extensions (default true)."},
    {"http-address", FLAG_STRING, OPT(http_address), 0, 0,
     "Address of the HTTP service (default 0.0.0.0)."},
    {"http-port", FLAG_INT, OPT(http_port), 0, 65535,
     "Port of the HTTP service (default 8000; 0 picks a free port)."},
    {"http-thread-count", FLAG_INT, OPT(http_threads), 1, 256,
     "Event-loop threads of the HTTP service (default 8)."},
    {"http-max-input-size", FLAG_INT, OPT(http_max_input_size), 1, INT_MAX,
     "Largest HTTP request body in bytes; past it the request gets 413 (default "
     "67108864)."},
    {"allow-client-shm", FLAG_BOOL, OPT(allow_client_shm), 0, 0,
     "Let clients register system and CUDA shared-memory regions and use them for "
     "tensors (default false, as Triton since 26.04)."},
    {"allow-metrics", FLAG_BOOL, OPT(allow_metrics), 0, 0,
     "Serve Prometheus metrics at /metrics (default true)."},
    {"allow-cpu-metrics", FLAG_BOOL, OPT(allow_cpu_metrics), 0, 0,
     "Report CPU utilization and memory (default true)."},
    {"metrics-address", FLAG_STRING, OPT(metrics_address), 0, 0,
     "Address of the metrics service (default 0.0.0.0)."},
    {"metrics-port", FLAG_INT, OPT(metrics_port), 0, 65535,
     "Port of the metrics service (default 8002; 0 picks a free port)."},
    {"metrics-interval-ms", FLAG_INT, OPT(metrics_interval_ms), 1, 3600000,
     "Milliseconds between two samples of the CPU utilization (default 2000)."},
    {"metrics-config", FLAG_STRING_LIST, OPT(metrics_configs), 0, 0,
     "A metrics setting <key>=<value> (server/metrics/metrics.md); repeatable."},
    {"cuda-memory-pool-byte-size", FLAG_STRING_LIST, OPT(cuda_memory_pools), 0, 0,
     "<GPU id>:<bytes>: the CUDA memory pool of that GPU, from which backends and "
     "the server take GPU memory; repeatable; 0 means no pool (default 64 MiB per "
     "GPU, as tritonserver)."},
    {"pinned-memory-pool-byte-size", FLAG_U64, OPT(pinned_memory_pool_byte_size), 0, 0,
     "Bytes of the page-locked host memory pool, created when a GPU exists; 0 means "
     "no pool (default 268435456, as tritonserver)."},
    /* Tracing: values are checked by srv_trace_config_check. */
    {"trace-config", FLAG_STRING_LIST, OPT(trace_configs), 0, 0,
     "A trace setting [<mode>,]<key>=<value>, repeatable: level=OFF|TIMESTAMPS|TENSORS "
     "(repeat for several), rate=<N> (every N-th request, default 1000), "
     "count=<N> (traces left, -1: no limit), triton,file=<path>, "
     "triton,log-frequency=<N> (N traces per file <path>.<i>; 0: one file). Mode "
     "opentelemetry is not built."},
    {"trace-file", FLAG_STRING, OPT(trace_file), 0, 0,
     "Deprecated: --trace-config triton,file=<path>."},
    {"trace-level", FLAG_STRING_LIST, OPT(trace_levels), 0, 0,
     "Deprecated: --trace-config level=<level>."},
    {"trace-rate", FLAG_STRING, OPT(trace_rate), 0, 0,
     "Deprecated: --trace-config rate=<N>."},
    {"trace-count", FLAG_STRING, OPT(trace_count), 0, 0,
     "Deprecated: --trace-config count=<N>."},
    {"trace-log-frequency", FLAG_STRING, OPT(trace_log_frequency), 0, 0,
     "Deprecated: --trace-config triton,log-frequency=<N>."},
    /* More of tritonserver's flags (README.md, "Flags", "Remaining gaps"). */
    {"id", FLAG_STRING, OPT(server_id), 0, 0,
     "Identifier of this server: the name that ServerMetadata answers (default "
     "triton, as tritonserver)."},
    {"model-config-name", FLAG_STRING, OPT(model_config_name), 0, 0,
     "Config of every model: <model>/configs/<name>.pbtxt where that file exists, "
     "else <model>/config.pbtxt (default: empty, config.pbtxt only)."},
    {"model-load-retry-count", FLAG_INT, OPT(model_load_retry_count), 0,
     SRV_MODEL_LOAD_RETRY_MAX,
     "Times a model version whose load failed (backend, model or instance "
     "initialization) is loaded again before the load fails (default 0)."},
    {"allow-gpu-metrics", FLAG_BOOL, OPT(allow_gpu_metrics), 0, 0,
     "Accepted for tritonserver's command lines; Nereid reports no GPU metrics, on "
     "or off (default true)."},
    {"reuse-grpc-port", FLAG_BOOL, OPT(reuse_grpc_port), 0, 0,
     "Bind the gRPC port with SO_REUSEPORT, so that several servers share it "
     "(default false)."},
    {"reuse-http-port", FLAG_BOOL, OPT(reuse_http_port), 0, 0,
     "Bind the HTTP port with SO_REUSEPORT, so that several servers share it "
     "(default false)."},
    {"buffer-manager-thread-count", FLAG_INT, OPT(buffer_manager_threads), 0, 256,
     "Accepted for tritonserver's command lines: tritonserver's threads that copy "
     "inputs in parallel. Nereid copies inputs on the instance's own thread, whatever "
     "the count; results are the same (default 0)."},
    {"min-supported-compute-capability", FLAG_DOUBLE, OPT(min_compute_capability), 0,
     100,
     "GPUs whose CUDA compute capability is lower are not used: KIND_GPU groups "
     "leave them out, and a group that lists one fails to load (default 6.0, as "
     "tritonserver)."},
    {"cuda-virtual-address-size", FLAG_STRING_LIST, OPT(cuda_virtual_address_sizes), 0,
     0,
     "<GPU id>:<bytes>: tritonserver's virtual address space for growable GPU "
     "buffers of that GPU; repeatable. Accepted and checked; Nereid's implicit state "
     "buffers do not grow in place, so it changes nothing."},
    {"model-load-gpu-limit", FLAG_STRING_LIST, OPT(model_load_gpu_limits), 0, 0,
     "<GPU id>:<fraction>, repeatable: a model with instances on that GPU fails to "
     "load while more than that fraction of the GPU's memory is in use (default: "
     "no limit)."},
    {"host-policy", FLAG_STRING_LIST, OPT(host_policies), 0, 0,
     "<policy>,<key>=<value>, repeatable: cpu-cores=<cores, e.g. 0-3,6> sets the "
     "CPU affinity of the threads of instances with that host policy (an instance "
     "group's host_policy, else cpu, gpu_<N> or model); numa-node is refused "
     "(Nereid binds no memory to NUMA nodes)."},
    {"cache-directory", FLAG_STRING, OPT(cache_directory), 0, 0,
     "Folder of response cache libraries; accepted, no cache is ever loaded."},
    {"repoagent-directory", FLAG_STRING, OPT(repoagent_directory), 0, 0,
     "Folder of repository agents; accepted, a model whose config names an agent "
     "fails to load."},
    {"model-namespacing", FLAG_BOOL, OPT(model_namespacing), 0, 0,
     "Refused when true: Nereid serves one model namespace, a model name found in "
     "two repositories is a conflict (default false)."},
    {"rate-limit", FLAG_STRING, OPT(rate_limit), 0, 0,
     "off only (the default): Nereid has no rate limiter; execution_count is "
     "refused."},
    {"rate-limit-resource", FLAG_STRING_LIST, OPT(rate_limit_resources), 0, 0,
     "<name>:<count>[:<device>]: refused, Nereid has no rate limiter."},
    {"response-cache-byte-size", FLAG_U64, OPT(response_cache_byte_size), 0, 0,
     "0 only (the default): Nereid has no response cache."},
    {"cache-config", FLAG_STRING_LIST, OPT(cache_configs), 0, 0,
     "<cache>,<key>=<value>: refused, Nereid has no response cache."},
    {"help", FLAG_BOOL, OPT(help), 0, 0, "Print this help and exit."},
    {"version", FLAG_BOOL, OPT(version), 0, 0,
     "Print Nereid's version, and the Triton release it answers as, and exit."},
};

static const flag_t *flag_find(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
      return &flags[i];
  return NULL;
}

static srv_status_t *parse_bool(const char *name, const char *value, bool *out) {
  if (!strcmp(value, "true") || !strcmp(value, "1")) {
    *out = true;
  } else if (!strcmp(value, "false") || !strcmp(value, "0")) {
    *out = false;
  } else {
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--%s expects true or false, got '%s'", name, value);
  }
  return NULL;
}

/* Decimal digits only: strtoull alone takes "-1" and leading blanks. */
static bool parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

/* "<GPU id>:<bytes>" of --cuda-memory-pool-byte-size. */
static bool pool_setting_parse(const char *c, int *device, uint64_t *bytes) {
  const char *colon = strchr(c, ':');
  char id[16];
  if (colon == NULL || (size_t)(colon - c) >= sizeof id) return false;
  memcpy(id, c, (size_t)(colon - c));
  id[colon - c] = '\0';
  uint64_t d;
  if (!parse_u64(id, &d) || d > INT32_MAX || !parse_u64(colon + 1, bytes)) return false;
  *device = (int)d;
  return true;
}

static srv_status_t *flag_set(srv_options_t *opt, const flag_t *f, const char *value) {
  void *slot = (char *)opt + f->offset;
  switch (f->kind) {
    case FLAG_STRING:
      free(*(char **)slot);
      *(char **)slot = srv_strdup(value);
      return NULL;
    case FLAG_STRING_LIST: {
      char ***list = slot;
      size_t *count = (size_t *)((char *)slot + sizeof(char **));
      char **grown = realloc(*list, (*count + 1) * sizeof *grown);
      if (grown == NULL) SRV_FATAL("out of memory");
      grown[*count] = srv_strdup(value);
      *list = grown;
      *count += 1;
      return NULL;
    }
    case FLAG_INT: {
      char *end;
      errno = 0;
      long v = strtol(value, &end, 10);
      if (errno != 0 || end == value || *end != '\0' || v < f->min || v > f->max)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--%s expects an integer in [%ld, %ld], got '%s'", f->name,
                              f->min, f->max, value);
      *(int *)slot = (int)v;
      return NULL;
    }
    case FLAG_BOOL:
      return parse_bool(f->name, value, (bool *)slot);
    case FLAG_DOUBLE: {
      char *end;
      errno = 0;
      double v = strtod(value, &end);
      if (errno != 0 || end == value || *end != '\0' || !(v >= (double)f->min) ||
          !(v <= (double)f->max))
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--%s expects a number in [%ld, %ld], got '%s'", f->name,
                              f->min, f->max, value);
      *(double *)slot = v;
      return NULL;
    }
    case FLAG_U64: {
      uint64_t v;
      if (!parse_u64(value, &v) || v < (uint64_t)f->min)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--%s expects an integer in [%ld, %llu], got '%s'", f->name,
                              f->min, (unsigned long long)UINT64_MAX, value);
      *(uint64_t *)slot = v;
      return NULL;
    }
  }
  return NULL;
}

char *srv_options_backend_directory_for(const char *exe) {
  /* tools/install's layout: PREFIX/bin/nereid beside PREFIX/backends. The
   * executable's real path (/proc/self/exe has symlinks resolved), so a
   * symlink to nereid elsewhere still finds the installation's backends. */
  char dir[PATH_MAX];
  char *up = NULL;
  if (exe != NULL && snprintf(dir, sizeof dir, "%s", exe) < (int)sizeof dir) {
    char *slash = strrchr(dir, '/'); /* PREFIX/bin/|nereid */
    if (slash != NULL && slash != dir) {
      *slash = '\0';
      up = strrchr(dir, '/'); /* PREFIX/|bin */
    }
  }
  struct stat sb;
  if (up != NULL && (size_t)(up - dir) + sizeof "/backends" <= sizeof dir) {
    memcpy(up, "/backends", sizeof "/backends");
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) return srv_strdup(dir);
  }
  return srv_strdup("/opt/tritonserver/backends");
}

static char *default_backend_directory(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return srv_options_backend_directory_for(NULL);
  exe[n] = '\0';
  return srv_options_backend_directory_for(exe);
}

static void options_defaults(srv_options_t *opt) {
  memset(opt, 0, sizeof *opt);
  opt->grpc_address = srv_strdup("0.0.0.0");
  opt->backend_directory = default_backend_directory();
  opt->grpc_port = 8001;
  opt->http_address = srv_strdup("0.0.0.0");
  opt->http_port = 8000;
  opt->http_threads = 8;
  opt->http_max_input_size = 64 << 20;
  opt->allow_cpu_metrics = true;
  opt->metrics_address = srv_strdup("0.0.0.0");
  opt->metrics_port = 8002;
  opt->metrics_interval_ms = 2000;
  opt->exit_timeout_secs = 30;
  opt->grpc_max_receive_message_size = INT_MAX;
  opt->grpc_stream_max_queued_responses = 262144;
  opt->grpc_stream_max_queued_bytes = 256 << 20;
  opt->grpc_request_max_queued_responses = 65536;
  opt->grpc_request_max_queued_bytes = 64 << 20;
  opt->grpc_keepalive_time_ms = 7200000;
  opt->grpc_keepalive_timeout_ms = 20000;
  opt->grpc_http2_max_pings_without_data = 2;
  opt->grpc_http2_min_recv_ping_interval_ms = 300000;
  opt->grpc_http2_max_ping_strikes = 2;
  opt->grpc_max_concurrent_streams = 1024;
  opt->grpc_infer_response_compression_level = srv_strdup("none");
  opt->grpc_ssl_refresh_interval_secs = 60;
  opt->repository_poll_secs = 15;
  opt->model_load_threads = 4;
  opt->allow_grpc = true;
  opt->allow_http = true;
  opt->allow_metrics = true;
  opt->model_control_mode = srv_strdup("none");
  opt->strict_readiness = true;
  opt->exit_on_error = true;
  opt->pinned_memory_pool_byte_size = 256ull << 20;
  opt->log_info = true;
  opt->log_warning = true;
  opt->log_error = true;
  opt->log_format = srv_strdup("default");
  opt->server_id = srv_strdup("triton");
  opt->model_config_name = srv_strdup("");
  opt->allow_gpu_metrics = true;
  opt->min_compute_capability = SRV_MIN_COMPUTE_CAPABILITY_DEFAULT;
  opt->rate_limit = srv_strdup("off");
}

srv_status_t *srv_options_parse(srv_options_t *opt, int argc, char **argv) {
  options_defaults(opt);
  bool strict_given = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "--", 2) != 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "unexpected argument '%s' (flags start with --)", arg);
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const flag_t *f = flag_find(name, len);
    if (f == NULL)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "unknown flag '--%.*s'",
                            (int)len, name);
    const char *value = eq ? eq + 1 : NULL;
    if (value == NULL && f->kind == FLAG_BOOL) {
      /* "--flag false", as tritonserver takes it; a bare flag turns it on. */
      bool next_is_bool =
          i + 1 < argc &&
          (!strcmp(argv[i + 1], "true") || !strcmp(argv[i + 1], "false") ||
           !strcmp(argv[i + 1], "1") || !strcmp(argv[i + 1], "0"));
      value = next_is_bool ? argv[++i] : "true";
    } else if (value == NULL) {
      if (i + 1 >= argc)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "flag '--%s' needs a value",
                              f->name);
      value = argv[++i];
    }
    srv_status_t *st = flag_set(opt, f, value);
    if (st != NULL) return st;
    if (f->offset == OPT(strict_model_config)) {
      strict_given = true;
      SRV_WARN(
          "'--strict-model-config' has been deprecated! Please use "
          "'--disable-auto-complete-config' instead.");
    }
  }
  /* tritonserver's rule: the newer flag wins over the older one. */
  if (opt->disable_auto_complete_config) {
    if (strict_given && !opt->strict_model_config)
      SRV_WARN(
          "Overriding deprecated '--strict-model-config' from False to True in favor "
          "of '--disable-auto-complete-config'!");
    opt->strict_model_config = true;
  }
  return NULL;
}

/* Parses both restriction flags once, for their errors; each frontend
 * parses its own again when it starts. Triton's texts, after "Bad option". */
static srv_status_t *restrictions_validate(const srv_options_t *opt) {
  srv_restrictions_t r;
  srv_status_t *st = srv_restrictions_parse(
      &r, opt->grpc_restricted_protocols, opt->grpc_restricted_protocol_count,
      "grpc-restricted-protocol", SRV_GRPC_RESTRICTED_PREFIX, "protocol");
  srv_restrictions_free(&r);
  const char *flag = "grpc-restricted-protocol";
  if (st == NULL) {
    st = srv_restrictions_parse(&r, opt->http_restricted_apis,
                                opt->http_restricted_api_count, "http-restricted-api", "",
                                "api");
    srv_restrictions_free(&r);
    flag = "http-restricted-api";
  }
  if (st == NULL) return NULL;
  srv_status_t *bad = srv_status_new(srv_status_code(st), "Bad option: \"--%s\".\n%s",
                                     flag, srv_status_message(st));
  srv_status_free(st);
  return bad;
}

int srv_options_compression_level(const srv_options_t *opt) {
  static const char *const levels[] = {"none", "low", "medium", "high"};
  for (int i = 0; i < 4; i++)
    if (strcasecmp(opt->grpc_infer_response_compression_level, levels[i]) == 0) return i;
  return -1;
}

#define LACKS(...) srv_status_new(GRPC_STATUS_UNIMPLEMENTED, __VA_ARGS__)
#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* "<GPU id>:<fraction>" of --model-load-gpu-limit. */
static bool gpu_limit_parse(const char *c, int *device, double *fraction) {
  const char *colon = strchr(c, ':');
  char id[16];
  uint64_t d;
  if (colon == NULL || (size_t)(colon - c) >= sizeof id) return false;
  memcpy(id, c, (size_t)(colon - c));
  id[colon - c] = '\0';
  if (!parse_u64(id, &d) || d > INT32_MAX || colon[1] < '0' || colon[1] > '9') return false;
  *device = (int)d;
  char *end;
  errno = 0;
  *fraction = strtod(colon + 1, &end);
  return errno == 0 && *end == '\0' && *fraction >= 0.0;
}

/* tritonserver's flags for what Nereid has in part or not at all: the
 * form first, then what asks for a missing feature, naming it. */
static srv_status_t *triton_flags_validate(const srv_options_t *opt) {
  if (strlen(opt->server_id) > SRV_SERVER_ID_MAX)
    return BAD("--id is longer than %d bytes", SRV_SERVER_ID_MAX);
  const char *cn = opt->model_config_name;
  if (strlen(cn) > SRV_MODEL_CONFIG_NAME_MAX || strchr(cn, '/') != NULL ||
      strcmp(cn, ".") == 0 || strcmp(cn, "..") == 0)
    return BAD("--model-config-name '%.*s': expected a file name of at most %d bytes "
               "(without '/'), read as <model>/configs/<name>.pbtxt",
               SRV_MODEL_CONFIG_NAME_MAX, cn, SRV_MODEL_CONFIG_NAME_MAX);
  for (size_t i = 0; i < opt->cuda_virtual_address_size_count; i++) {
    int device;
    uint64_t bytes;
    if (!pool_setting_parse(opt->cuda_virtual_address_sizes[i], &device, &bytes))
      return BAD("--cuda-virtual-address-size '%s': expected <GPU id>:<bytes>, both "
                 "non-negative integers",
                 opt->cuda_virtual_address_sizes[i]);
  }
  for (size_t i = 0; i < opt->model_load_gpu_limit_count; i++) {
    double fraction;
    int device;
    const char *c = opt->model_load_gpu_limits[i];
    if (!gpu_limit_parse(c, &device, &fraction))
      return BAD("--model-load-gpu-limit '%s': expected <GPU id>:<fraction>, a fraction "
                 ">= 0",
                 c);
  }
  srv_status_t *st = srv_host_policy_check(opt->host_policies, opt->host_policy_count);
  if (st != NULL) return st;
  if (opt->model_namespacing)
    return LACKS("--model-namespacing=true: Nereid has no model namespaces (a model name "
                 "found in two repositories is a conflict)");
  if (strcmp(opt->rate_limit, "execution_count") == 0)
    return LACKS("--rate-limit=execution_count: Nereid has no rate limiter (instances run "
                 "whenever their scheduler gives them work; only 'off' is accepted)");
  if (strcmp(opt->rate_limit, "off") != 0)
    return BAD("--rate-limit expects off or execution_count, got '%s'", opt->rate_limit);
  if (opt->rate_limit_resource_count > 0)
    return LACKS("--rate-limit-resource '%s': Nereid has no rate limiter",
                 opt->rate_limit_resources[0]);
  if (opt->response_cache_byte_size > 0)
    return LACKS("--response-cache-byte-size=%llu: Nereid has no response cache (only 0 "
                 "is accepted)",
                 (unsigned long long)opt->response_cache_byte_size);
  if (opt->cache_config_count > 0)
    return LACKS("--cache-config '%s': Nereid has no response cache",
                 opt->cache_configs[0]);
  return NULL;
}

srv_status_t *srv_options_validate(const srv_options_t *opt) {
  if (!opt->allow_grpc)
    return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                          "--allow-grpc=false: gRPC is Nereid's only protocol so far");
  srv_status_t *tst = triton_flags_validate(opt);
  if (tst != NULL) return tst;
  for (size_t i = 0; i < opt->backend_config_count; i++) {
    const char *c = opt->backend_configs[i];
    const char *comma = strchr(c, ',');
    if (comma == NULL || comma == c || strchr(comma, '=') == NULL || comma[1] == '=')
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--backend-config '%s': expected <backend>,<key>=<value>", c);
  }
  for (size_t i = 0; i < opt->cuda_memory_pool_count; i++) {
    int device;
    uint64_t bytes;
    if (!pool_setting_parse(opt->cuda_memory_pools[i], &device, &bytes))
      return srv_status_new(
          GRPC_STATUS_INVALID_ARGUMENT,
          "--cuda-memory-pool-byte-size '%s': expected <GPU id>:<bytes>, "
          "both non-negative integers",
          opt->cuda_memory_pools[i]);
  }
  srv_status_t *st = restrictions_validate(opt);
  if (st != NULL) return st;
  srv_log_format_t log_format;
  if (!srv_log_format_parse(opt->log_format, &log_format))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid argument for --log-format, got: %s", opt->log_format);
  if (srv_options_compression_level(opt) < 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid argument for --grpc_infer_response_compression_level");
  const char *mode = opt->model_control_mode;
  if (strcmp(mode, "none") != 0 && strcmp(mode, "explicit") != 0 &&
      strcmp(mode, "poll") != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--model-control-mode expects none, explicit or poll, got '%s'",
                          mode);
  if (opt->load_model_count > 0 && strcmp(mode, "explicit") != 0)
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "--load-model is only allowed with --model-control-mode=explicit");
  if (opt->model_repository_count == 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--model-repository must be specified");
  for (size_t i = 0; i < opt->model_repository_count; i++) {
    struct stat sb;
    const char *path = opt->model_repositories[i];
    if (stat(path, &sb) != 0)
      return srv_status_new(GRPC_STATUS_NOT_FOUND,
                            "failed to stat model repository '%s': %s", path,
                            strerror(errno));
    if (!S_ISDIR(sb.st_mode))
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "model repository '%s' is not a directory", path);
  }
  return NULL;
}

double srv_options_gpu_load_limit(const srv_options_t *opt, int device) {
  double limit = 1.0;
  for (size_t i = 0; i < opt->model_load_gpu_limit_count; i++) {
    int d;
    double f;
    if (gpu_limit_parse(opt->model_load_gpu_limits[i], &d, &f) && d == device) limit = f;
  }
  return limit;
}

uint64_t srv_options_cuda_pool_bytes(const srv_options_t *opt, int device) {
  uint64_t bytes = 64ull << 20;
  /* The last setting for a device wins, as a later flag overrides. */
  for (size_t i = 0; i < opt->cuda_memory_pool_count; i++) {
    int d;
    uint64_t b;
    if (pool_setting_parse(opt->cuda_memory_pools[i], &d, &b) && d == device) bytes = b;
  }
  return bytes;
}

void srv_options_usage(FILE *out) {
  fprintf(out, "Usage: nereid --model-repository=PATH [flags]\n\nFlags:\n");
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    const char *arg = flags[i].kind == FLAG_BOOL ? "[=true|false]" : "=VALUE";
    fprintf(out, "  --%s%s\n      %s\n", flags[i].name, arg, flags[i].help);
  }
}

void srv_options_free(srv_options_t *opt) {
  for (size_t i = 0; i < opt->model_repository_count; i++)
    free(opt->model_repositories[i]);
  free(opt->model_repositories);
  for (size_t i = 0; i < opt->load_model_count; i++) free(opt->load_models[i]);
  free(opt->load_models);
  for (size_t i = 0; i < opt->backend_config_count; i++) free(opt->backend_configs[i]);
  free(opt->backend_configs);
  free(opt->grpc_address);
  free(opt->http_address);
  free(opt->metrics_address);
  for (size_t i = 0; i < opt->metrics_config_count; i++) free(opt->metrics_configs[i]);
  free(opt->metrics_configs);
  for (size_t i = 0; i < opt->cuda_memory_pool_count; i++)
    free(opt->cuda_memory_pools[i]);
  free(opt->cuda_memory_pools);
  for (size_t i = 0; i < opt->grpc_restricted_protocol_count; i++)
    free(opt->grpc_restricted_protocols[i]);
  free(opt->grpc_restricted_protocols);
  for (size_t i = 0; i < opt->http_restricted_api_count; i++)
    free(opt->http_restricted_apis[i]);
  free(opt->http_restricted_apis);
  free(opt->grpc_infer_response_compression_level);
  free(opt->backend_directory);
  free(opt->model_control_mode);
  free(opt->grpc_server_cert);
  free(opt->grpc_server_key);
  free(opt->grpc_root_cert);
  free(opt->grpc_health_address);
  free(opt->log_file);
  free(opt->log_format);
  for (size_t i = 0; i < opt->trace_config_count; i++) free(opt->trace_configs[i]);
  free(opt->trace_configs);
  for (size_t i = 0; i < opt->trace_level_count; i++) free(opt->trace_levels[i]);
  free(opt->trace_levels);
  free(opt->trace_file);
  free(opt->trace_rate);
  free(opt->trace_count);
  free(opt->trace_log_frequency);
  free(opt->server_id);
  free(opt->model_config_name);
  free(opt->cache_directory);
  free(opt->repoagent_directory);
  free(opt->rate_limit);
  char **lists[] = {opt->cuda_virtual_address_sizes, opt->model_load_gpu_limits,
                    opt->host_policies, opt->rate_limit_resources, opt->cache_configs};
  size_t counts[] = {opt->cuda_virtual_address_size_count,
                     opt->model_load_gpu_limit_count, opt->host_policy_count,
                     opt->rate_limit_resource_count, opt->cache_config_count};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (size_t i = 0; i < counts[l]; i++) free(lists[l][i]);
    free(lists[l]);
  }
  memset(opt, 0, sizeof *opt);
}
