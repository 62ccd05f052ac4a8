/* tritonserver's flags and Nereid's own, as one table that options.c
 * parses and prints (options_flags.h). Read-only data. */
#include "server/options_flags.h"

#include <limits.h>
#include <stdint.h>

#include "server/common/restricted.h"

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
#define LIST_CHECK(list, count)                                                          \
  _Static_assert(                                                                        \
      offsetof(srv_options_t, count) == offsetof(srv_options_t, list) + sizeof(char **), \
      "count must follow its list")
LIST_CHECK(cuda_virtual_address_sizes, cuda_virtual_address_size_count);
LIST_CHECK(model_load_gpu_limits, model_load_gpu_limit_count);
LIST_CHECK(host_policies, host_policy_count);
LIST_CHECK(rate_limit_resources, rate_limit_resource_count);
LIST_CHECK(cache_configs, cache_config_count);
LIST_CHECK(trace_configs, trace_config_count);
LIST_CHECK(trace_levels, trace_level_count);

const flag_t srv_option_flags[] = {
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
     "Serve gRPC (default true; false: HTTP and metrics only)."},
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
     "Bytes of the page-locked host memory pool, created when a GPU exists; with "
     "--host-policy numa-node settings one pool of this size on each NUMA node they "
     "name; 0 means no pool (default 268435456, as tritonserver)."},
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
     "Per-GPU utilization, memory, power and energy metrics, read from NVML where "
     "it and a GPU exist (default true)."},
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
    {"min-supported-compute-capability", FLAG_DOUBLE, OPT(min_compute_capability), 0, 100,
     "GPUs whose CUDA compute capability is lower are not used: KIND_GPU groups "
     "leave them out, and a group that lists one fails to load (default 6.0, as "
     "tritonserver)."},
    {"cuda-virtual-address-size", FLAG_STRING_LIST, OPT(cuda_virtual_address_sizes), 0, 0,
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
     "group's host_policy, else cpu, gpu_<N> or model); numa-node=<node> binds "
     "their memory to that NUMA node (and, without cpu-cores, runs them on its "
     "CPUs)."},
    {"cache-directory", FLAG_STRING, OPT(cache_directory), 0, 0,
     "Folder of response cache libraries: --cache-config=<name>,... loads "
     "<dir>/<name>/libtritoncache_<name>.so (default /opt/tritonserver/caches); "
     "local is built in."},
    {"repoagent-directory", FLAG_STRING, OPT(repoagent_directory), 0, 0,
     "Folder of repository agents: a model whose config names agent <name> loads "
     "<dir>/<name>/libtritonrepoagent_<name>.so (default /opt/tritonserver/repoagents)."},
    {"model-namespacing", FLAG_BOOL, OPT(model_namespacing), 0, 0,
     "Each repository is a model namespace: the same model name may be in several "
     "repositories; a request by a name found in more than one fails (default "
     "false)."},
    {"rate-limit", FLAG_STRING, OPT(rate_limit), 0, 0,
     "off (the default) or execution_count: an instance then runs only while the "
     "resources its instance group's rate_limiter asks for are free, waiting "
     "instances taken by fewest runs times priority, then arrival."},
    {"rate-limit-resource", FLAG_STRING_LIST, OPT(rate_limit_resources), 0, 0,
     "<name>:<count>[:<device>]: copies of a rate limiter resource, on one GPU or "
     "(no device, -1) on every device; a global resource takes the largest count "
     "given for its name. Without any, a resource has the largest count one "
     "instance asks for."},
    {"response-cache-byte-size", FLAG_U64, OPT(response_cache_byte_size), 0, 0,
     "Deprecated: the same as --cache-config=local,size=<bytes> (default 0: no "
     "cache)."},
    {"cache-config", FLAG_STRING_LIST, OPT(cache_configs), 0, 0,
     "<cache>,<key>=<value>, repeatable: the response cache shared by models whose "
     "config sets response_cache { enable: true }: local,size=<bytes> (built in), or "
     "a cache library's name and settings."},
    {"help", FLAG_BOOL, OPT(help), 0, 0, "Print this help and exit."},
    {"version", FLAG_BOOL, OPT(version), 0, 0,
     "Print Nereid's version, and the Triton release it answers as, and exit."},
};

const size_t srv_option_flag_count = sizeof srv_option_flags / sizeof srv_option_flags[0];
