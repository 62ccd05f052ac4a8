/* Command-line options of nereid: tritonserver's flags where the meaning is
 * the same, plus Nereid's own. Parsed once by the main thread at start-up,
 * read-only afterwards. */
#ifndef NEREID_SERVER_OPTIONS_H
#define NEREID_SERVER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "server/common/status.h"

typedef struct {
  char **model_repositories; /* --model-repository, repeatable */
  size_t model_repository_count;
  char **load_models; /* --load-model, repeatable; "*" loads every model */
  size_t load_model_count;
  char **backend_configs; /* --backend-config=<backend>,<key>=<value>, repeatable */
  size_t backend_config_count;
  char *backend_directory;  /* --backend-directory */
  char *grpc_address;       /* --grpc-address, default 0.0.0.0 */
  int grpc_port;            /* --grpc-port, default 8001; 0 picks a free port */
  int worker_threads;       /* --worker-threads, default 0 = one per core */
  int grpc_threads;         /* --grpc-threads, default 0 = one per two cores */
  int log_verbose;          /* --log-verbose */
  char *log_file;           /* --log-file, NULL: stderr */
  bool log_info;            /* --log-info, default true */
  bool log_warning;         /* --log-warning, default true */
  bool log_error;           /* --log-error, default true */
  char *log_format;         /* --log-format: default (the default) or ISO8601 */
  int exit_timeout_secs;    /* --exit-timeout-secs, default 30 */
  char *model_control_mode; /* --model-control-mode: none (default), explicit, poll */
  int repository_poll_secs; /* --repository-poll-secs, default 15 (poll mode) */
  int model_load_threads;   /* --model-load-thread-count, default 4 */
  bool strict_readiness;    /* --strict-readiness, default true */
  bool exit_on_error;       /* --exit-on-error, default true */
  /* Model config auto-complete (README.md, "Model configuration"). True:
   * backends may not complete configs (TRITONBACKEND_ModelAutoCompleteConfig
   * says false) and a model folder needs its config.pbtxt. The command
   * line's default is false, as tritonserver's; --strict-model-config=<bool>
   * sets it, and --disable-auto-complete-config makes it true whatever
   * --strict-model-config said. An embedding program sets it with
   * TRITONSERVER_ServerOptionsSetStrictModelConfig(strict), whose default
   * in tritonserver's library is true (no auto-complete). Server-side
   * completion of platform, backend and default_model_filename
   * (model/platform.h) runs either way. */
  bool strict_model_config;
  bool disable_auto_complete_config; /* as given, folded into the one above */
  bool allow_grpc;          /* --allow-grpc (only true is supported) */
  bool allow_http;          /* --allow-http, default true */
  char *http_address;       /* --http-address, default 0.0.0.0 */
  int http_port;            /* --http-port, default 8000; 0 picks a free port */
  int http_threads;         /* --http-thread-count, default 8 */
  int http_max_input_size;  /* --http-max-input-size, bytes of a request body */
  bool allow_client_shm;    /* --allow-client-shm, default false (as Triton) */
  bool allow_metrics;       /* --allow-metrics, default true */
  bool allow_cpu_metrics;   /* --allow-cpu-metrics, default true */
  char *metrics_address;    /* --metrics-address, default 0.0.0.0 */
  int metrics_port;         /* --metrics-port, default 8002; 0 picks a free port */
  int metrics_interval_ms;  /* --metrics-interval-ms, default 2000 */
  char **metrics_configs;   /* --metrics-config=<key>=<value>, repeatable */
  size_t metrics_config_count;
  /* --cuda-memory-pool-byte-size=<GPU id>:<bytes>, repeatable; checked by
   * srv_options_validate, read through srv_options_cuda_pool_bytes. */
  char **cuda_memory_pools;
  size_t cuda_memory_pool_count;
  uint64_t pinned_memory_pool_byte_size; /* --pinned-memory-pool-byte-size, 256 MiB */
  bool help;                             /* --help */
  bool version;                          /* --version (Nereid's own) */
  /* Bounds on what one client can make the gRPC frontend hold (README.md,
   * "Limits"). */
  int grpc_max_receive_message_size;     /* bytes, as sent or inflated; INT_MAX */
  int grpc_stream_max_queued_responses;  /* waiting to be written, per stream */
  int grpc_stream_max_queued_bytes;      /* their bytes, per stream */
  int grpc_request_max_queued_responses; /* held for one request */
  int grpc_request_max_queued_bytes;     /* their bytes, for one request */
  /* Restricted groups, "<group>[,<group>...]:<key>=<value>", repeatable;
   * checked by srv_options_validate (server/common/restricted.h). */
  char **grpc_restricted_protocols; /* --grpc-restricted-protocol */
  size_t grpc_restricted_protocol_count;
  char **http_restricted_apis; /* --http-restricted-api */
  size_t http_restricted_api_count;
  /* HTTP/2 and keepalive settings of the gRPC server (README.md, "Limits"),
   * tritonserver's flags and defaults; times in milliseconds. */
  int grpc_keepalive_time_ms;                  /* 7200000 */
  int grpc_keepalive_timeout_ms;               /* 20000 */
  bool grpc_keepalive_permit_without_calls;    /* false */
  int grpc_http2_max_pings_without_data;       /* 2 */
  int grpc_http2_min_recv_ping_interval_ms;    /* 300000 */
  int grpc_http2_max_ping_strikes;             /* 2 */
  int grpc_max_connection_age_ms;              /* 0: none */
  int grpc_max_connection_age_grace_ms;        /* 0: none */
  int grpc_max_concurrent_streams;             /* per connection, 1024 */
  char *grpc_infer_response_compression_level; /* none, low, medium, high */
  /* TLS on the gRPC port (server/grpc/tls.c; checked by
   * srv_tls_check_files). use_ssl_mutual implies use_ssl. */
  bool grpc_use_ssl;                  /* --grpc-use-ssl */
  bool grpc_use_ssl_mutual;           /* --grpc-use-ssl-mutual */
  char *grpc_server_cert;             /* --grpc-server-cert, PEM chain */
  char *grpc_server_key;              /* --grpc-server-key, PEM key */
  char *grpc_root_cert;               /* --grpc-root-cert, PEM CA bundle */
  int grpc_ssl_refresh_interval_secs; /* certificate files re-read, default 60 */
  int grpc_health_port;               /* plaintext grpc.health.v1 only; 0 = none */
  char *grpc_health_address;          /* default: --grpc-address */
  /* Tracing (server/trace/trace_config.h checks and applies them):
   * --trace-config [<mode>,]<key>=<value>, repeatable, and tritonserver's
   * older flags, which --trace-config overrides. */
  char **trace_configs;
  size_t trace_config_count;
  char **trace_levels; /* --trace-level, repeatable */
  size_t trace_level_count;
  char *trace_file;          /* --trace-file */
  char *trace_rate;          /* --trace-rate */
  char *trace_count;         /* --trace-count */
  char *trace_log_frequency; /* --trace-log-frequency */
  /* More of tritonserver's flags (README.md, "Flags" and "Remaining
   * gaps"). */
  char *server_id;            /* --id, default "triton": ServerMetadata's name */
  char *model_config_name;    /* --model-config-name: <model>/configs/<name>.pbtxt */
  int model_load_retry_count; /* --model-load-retry-count, default 0 */
  bool allow_gpu_metrics;     /* --allow-gpu-metrics: NVML's per-GPU metrics */
  bool reuse_grpc_port;       /* --reuse-grpc-port: SO_REUSEPORT */
  bool reuse_http_port;       /* --reuse-http-port: SO_REUSEPORT */
  int buffer_manager_threads; /* --buffer-manager-thread-count: no effect */
  double min_compute_capability; /* --min-supported-compute-capability, 6.0 */
  char **cuda_virtual_address_sizes; /* --cuda-virtual-address-size, <GPU>:<bytes> */
  size_t cuda_virtual_address_size_count;
  char **model_load_gpu_limits; /* --model-load-gpu-limit, <GPU>:<fraction> */
  size_t model_load_gpu_limit_count;
  char **host_policies; /* --host-policy, <name>,<key>=<value> (common/host_policy.h) */
  size_t host_policy_count;
  char *cache_directory;     /* --cache-directory: where cache libraries are */
  char *repoagent_directory; /* --repoagent-directory: where agents are found */
  char *rate_limit;          /* --rate-limit: off or execution_count, any case */
  char **rate_limit_resources; /* --rate-limit-resource, <name>:<count>[:<device>] */
  size_t rate_limit_resource_count;
  bool model_namespacing; /* --model-namespacing */
  /* The response cache (../cache/cache_config.h checks them). */
  uint64_t response_cache_byte_size; /* --response-cache-byte-size: local's size */
  char **cache_configs;              /* --cache-config <cache>,<key>=<value> */
  size_t cache_config_count;
} srv_options_t;

/** --min-supported-compute-capability's default, tritonserver's. */
#define SRV_MIN_COMPUTE_CAPABILITY_DEFAULT 6.0
/** Most retries of a model load (--model-load-retry-count). */
#define SRV_MODEL_LOAD_RETRY_MAX 100
/** Longest --model-config-name (a file name without ".pbtxt"). */
#define SRV_MODEL_CONFIG_NAME_MAX 200
/** Longest --id. */
#define SRV_SERVER_ID_MAX 256

/** Fills opt with defaults, then applies argv. On error returns a status
 *  naming the flag at fault (opt then holds what was parsed so far and must
 *  still be freed). */
srv_status_t *srv_options_parse(srv_options_t *opt, int argc, char **argv);

/** Checks what the flags cannot say alone (e.g. repositories exist). */
srv_status_t *srv_options_validate(const srv_options_t *opt);

/** What a gRPC restricted group's header starts with, before the flag's
 *  key (tritonserver's: gRPC metadata keys are lower case). */
#define SRV_GRPC_RESTRICTED_PREFIX "triton-grpc-protocol-"

/** --grpc-infer-response-compression-level as grpc_compression_level
 *  (0 none, 1 low, 2 medium, 3 high), or -1 when it names none of them. */
int srv_options_compression_level(const srv_options_t *opt);

/** The CUDA memory pool size of `device`: its last
 *  --cuda-memory-pool-byte-size, else Triton's default of 64 MiB. Only
 *  after srv_options_validate accepted opt. */
uint64_t srv_options_cuda_pool_bytes(const srv_options_t *opt, int device);

/** The GPU memory fraction of `device` past which a load fails (its last
 *  --model-load-gpu-limit), else 1.0: no limit. Only after
 *  srv_options_validate accepted opt. */
double srv_options_gpu_load_limit(const srv_options_t *opt, int device);

/** The default --backend-directory for an executable at `exe` (a real
 *  path): `<folder of exe>/../backends` (as tools/install lays it out:
 *  PREFIX/bin/nereid, PREFIX/backends) when that folder exists, else
 *  tritonserver's /opt/tritonserver/backends. The caller frees it. */
char *srv_options_backend_directory_for(const char *exe);

void srv_options_usage(FILE *out);
void srv_options_free(srv_options_t *opt);

/** Longest resource name --rate-limit-resource takes (bytes). */
#define SRV_RATE_RESOURCE_NAME_MAX 1024u

/** Reads one --rate-limit-resource text, <name>:<count>[:<device>]: the
 *  name's length (1 to SRV_RATE_RESOURCE_NAME_MAX bytes before the first
 *  ':'), a count of 0 to INT32_MAX, and a device of -1 (every device, the
 *  default) or a GPU id. False when the text has another form. */
bool srv_options_rate_resource_parse(const char *text, size_t *name_len, uint64_t *count,
                                     int32_t *device);

/** NULL when srv_options_rate_resource_parse reads text, else
 *  INVALID_ARGUMENT with tritonserver's text. */
srv_status_t *srv_options_rate_resource_check(const char *text);

/** Whether --rate-limit asks for the rate limiter (execution_count). */
bool srv_options_rate_limited(const srv_options_t *opt);

#endif
