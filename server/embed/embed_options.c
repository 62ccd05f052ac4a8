/* TRITONSERVER_ServerOptions: the settings of a server an application
 * makes, kept as command-line flags so that srv_options_parse gives them
 * the command line's defaults, ranges and texts. Options of features
 * Nereid does not have are accepted where they ask for nothing (Triton's
 * defaults), and refused naming the option and the reason where they ask
 * for more (embed.md, "Options"). One thread at a time per object (the
 * application's), as in Triton; the log options change the process's log
 * at once, as Triton's do. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/api/error.h"
#include "server/api/log.h"
#include "server/common/host_policy.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/embed/embed.h"
#include "server/metrics/metrics_config.h"

#define NULL_ARG SRV_EMBED_NULL

static void args_push(TRITONSERVER_ServerOptions *o, char *arg) {
  if (o->arg_count == o->arg_cap) {
    size_t cap = o->arg_cap == 0 ? 16 : o->arg_cap * 2;
    char **grown = realloc(o->args, cap * sizeof *grown);
    if (grown == NULL) SRV_FATAL("out of memory");
    o->args = grown;
    o->arg_cap = cap;
  }
  o->args[o->arg_count++] = arg;
}

srv_status_t *srv_embed_options_build(const TRITONSERVER_ServerOptions *o,
                                      srv_options_t *opt) {
  srv_status_t *st = srv_options_parse(opt, (int)o->arg_count, o->args);
  if (st != NULL || strcmp(opt->model_control_mode, "explicit") != 0) return st;
  for (size_t i = 0; i < o->startup_model_count; i++) {
    char **grown = realloc(opt->load_models, (opt->load_model_count + 1) * sizeof *grown);
    if (grown == NULL) SRV_FATAL("out of memory");
    grown[opt->load_model_count++] = srv_strdup(o->startup_models[i]);
    opt->load_models = grown;
  }
  return NULL;
}

/* Kept only when the whole list still parses: the flag's own check
 * (range, form) answers, naming the API function. */
TRITONSERVER_Error *srv_embed_flag_add(TRITONSERVER_ServerOptions *o, const char *fn,
                                       const char *flag, const char *fmt, ...) {
  if (o == NULL) return NULL_ARG(fn, "options");
  char value[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(value, sizeof value, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof value)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: value longer than %zu bytes", fn, sizeof value - 1);
  char *arg = malloc(strlen(flag) + (size_t)n + 4);
  if (arg == NULL) SRV_FATAL("out of memory");
  sprintf(arg, "--%s=%s", flag, value);
  args_push(o, arg);
  srv_options_t opt;
  srv_status_t *st = srv_options_parse(&opt, (int)o->arg_count, o->args);
  srv_options_free(&opt);
  if (st == NULL) return NULL;
  free(o->args[--o->arg_count]);
  TRITONSERVER_Error *err =
      api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: %s", fn, srv_status_message(st));
  srv_status_free(st);
  return err;
}

/* srv_embed_flag_add of --flag=text once the setter's own check (st) passed; its
 * refusal is INVALID_ARG naming the function. */
static TRITONSERVER_Error *checked_flag_add(TRITONSERVER_ServerOptions *o, const char *fn,
                                            srv_status_t *st, const char *flag,
                                            const char *text) {
  if (st == NULL) return srv_embed_flag_add(o, fn, flag, "%s", text);
  TRITONSERVER_Error *err =
      api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: %s", fn, srv_status_message(st));
  srv_status_free(st);
  return err;
}

static const char *bool_text(bool b) { return b ? "true" : "false"; }

TRITONSERVER_Error *TRITONSERVER_ServerOptionsNew(TRITONSERVER_ServerOptions **options) {
  if (options == NULL) return NULL_ARG("TRITONSERVER_ServerOptionsNew", "options");
  TRITONSERVER_ServerOptions *o = calloc(1, sizeof *o);
  if (o == NULL) SRV_FATAL("out of memory");
  args_push(o, srv_strdup("nereid"));
  /* Triton's library, unlike its command line, completes no model config
   * unless told to (TRITONSERVER_ServerOptionsSetStrictModelConfig). */
  args_push(o, srv_strdup("--disable-auto-complete-config=true"));
  *options = o;
  return NULL;
}

/* NULL is no error: Triton deletes a null pointer without complaint. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsDelete(TRITONSERVER_ServerOptions *o) {
  if (o == NULL) return NULL;
  for (size_t i = 0; i < o->arg_count; i++) free(o->args[i]);
  free(o->args);
  for (size_t i = 0; i < o->startup_model_count; i++) free(o->startup_models[i]);
  free(o->startup_models);
  free(o);
  return NULL;
}

/* ---- Settings that are flags ----------------------------------------------- */

/* strict: every model folder needs a complete config.pbtxt; false lets
 * backends complete configs (TRITONBACKEND_ModelAutoCompleteConfig) and a
 * folder without config.pbtxt load. Through the newer flag, which the
 * command line does not warn about. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStrictModelConfig(
    TRITONSERVER_ServerOptions *o, bool strict) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetStrictModelConfig",
                            "disable-auto-complete-config", "%s",
                            strict ? "true" : "false");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelRepositoryPath(
    TRITONSERVER_ServerOptions *o, const char *path) {
  const char *fn = "TRITONSERVER_ServerOptionsSetModelRepositoryPath";
  if (path == NULL) return NULL_ARG(fn, "model_repository_path");
  return srv_embed_flag_add(o, fn, "model-repository", "%s", path);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelControlMode(
    TRITONSERVER_ServerOptions *o, TRITONSERVER_ModelControlMode mode) {
  const char *fn = "TRITONSERVER_ServerOptionsSetModelControlMode";
  static const char *const names[] = {"none", "poll", "explicit"};
  if ((unsigned)mode > TRITONSERVER_MODEL_CONTROL_EXPLICIT)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: unknown model control mode %d",
                         fn, (int)mode);
  return srv_embed_flag_add(o, fn, "model-control-mode", "%s", names[mode]);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBackendDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetBackendDirectory";
  if (dir == NULL) return NULL_ARG(fn, "backend_dir");
  return srv_embed_flag_add(o, fn, "backend-directory", "%s", dir);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBackendConfig(
    TRITONSERVER_ServerOptions *o, const char *backend, const char *setting,
    const char *value) {
  const char *fn = "TRITONSERVER_ServerOptionsSetBackendConfig";
  if (backend == NULL) return NULL_ARG(fn, "backend_name");
  if (setting == NULL) return NULL_ARG(fn, "setting");
  if (value == NULL) return NULL_ARG(fn, "value");
  /* What the flag's <backend>,<key>=<value> could not carry. Triton's
   * global settings (backend "") have no flag form here. */
  if (backend[0] == '\0' || strchr(backend, ',') != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: backend name '%s' must be non-empty, without ','", fn,
                         backend);
  if (setting[0] == '\0' || strchr(setting, '=') != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: setting '%s' must be non-empty, without '='", fn, setting);
  return srv_embed_flag_add(o, fn, "backend-config", "%s,%s=%s", backend, setting, value);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetExitOnError(TRITONSERVER_ServerOptions *o,
                                                             bool exit) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetExitOnError",
                            "exit-on-error", "%s", bool_text(exit));
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStrictReadiness(
    TRITONSERVER_ServerOptions *o, bool strict) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetStrictReadiness",
                            "strict-readiness", "%s", bool_text(strict));
}

/* Each repository a namespace (server/repository/repository.md). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelNamespacing(
    TRITONSERVER_ServerOptions *o, bool enable) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetModelNamespacing",
                            "model-namespacing", "%s", bool_text(enable));
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetExitTimeout(TRITONSERVER_ServerOptions *o,
                                                             unsigned int timeout) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetExitTimeout",
                            "exit-timeout-secs", "%u", timeout);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadThreadCount(
    TRITONSERVER_ServerOptions *o, unsigned int count) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetModelLoadThreadCount",
                            "model-load-thread-count", "%u", count);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(
    TRITONSERVER_ServerOptions *o, uint64_t size) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize",
                            "pinned-memory-pool-byte-size", "%llu",
                            (unsigned long long)size);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
    TRITONSERVER_ServerOptions *o, int gpu_device, uint64_t size) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize";
  if (gpu_device < 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: GPU device %d is negative",
                         fn, gpu_device);
  return srv_embed_flag_add(o, fn, "cuda-memory-pool-byte-size", "%d:%llu", gpu_device,
                            (unsigned long long)size);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetrics(TRITONSERVER_ServerOptions *o,
                                                         bool metrics) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetMetrics", "allow-metrics",
                            "%s", bool_text(metrics));
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCpuMetrics(TRITONSERVER_ServerOptions *o,
                                                            bool cpu_metrics) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetCpuMetrics",
                            "allow-cpu-metrics", "%s", bool_text(cpu_metrics));
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetricsInterval(
    TRITONSERVER_ServerOptions *o, uint64_t interval_ms) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetMetricsInterval",
                            "metrics-interval-ms", "%llu",
                            (unsigned long long)interval_ms);
}

/* Nereid's settings have no group: only the global one ("") exists. The
 * setting is checked now, as the metrics page would read it. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetricsConfig(
    TRITONSERVER_ServerOptions *o, const char *name, const char *setting,
    const char *value) {
  const char *fn = "TRITONSERVER_ServerOptionsSetMetricsConfig";
  if (o == NULL) return NULL_ARG(fn, "options");
  if (name == NULL) return NULL_ARG(fn, "name");
  if (setting == NULL) return NULL_ARG(fn, "setting");
  if (value == NULL) return NULL_ARG(fn, "value");
  if (name[0] != '\0')
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "%s: metrics setting group '%s': Nereid's metrics settings are "
                         "all global (name \"\")",
                         fn, name);
  char text[4096];
  int n = snprintf(text, sizeof text, "%s=%s", setting, value);
  if (n < 0 || (size_t)n >= sizeof text)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: setting too long", fn);
  srv_metrics_config_t scratch;
  srv_metrics_config_init(&scratch);
  return checked_flag_add(o, fn, srv_metrics_config_parse(&scratch, text),
                          "metrics-config", text);
}

/* ---- More of tritonserver's flags (README.md, "Flags") --------------------- */

/* "" is config.pbtxt only; a name reads <model>/configs/<name>.pbtxt where
 * it exists. The name's form is checked by ServerNew (srv_options_validate,
 * the flag's text). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelConfigName(
    TRITONSERVER_ServerOptions *o, const char *name) {
  const char *fn = "TRITONSERVER_ServerOptionsSetModelConfigName";
  if (name == NULL) return NULL_ARG(fn, "model_config_name");
  return srv_embed_flag_add(o, fn, "model-config-name", "%s", name);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadRetryCount(
    TRITONSERVER_ServerOptions *o, unsigned int count) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetModelLoadRetryCount",
                            "model-load-retry-count", "%u", count);
}

/* Accepted and bounded; Nereid copies inputs on the instance's thread
 * whatever the count (README.md, "Flags"). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(
    TRITONSERVER_ServerOptions *o, unsigned int count) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetBufferManagerThreadCount",
                            "buffer-manager-thread-count", "%u", count);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
    TRITONSERVER_ServerOptions *o, double cc) {
  const char *fn = "TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability";
  if (!isfinite(cc))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: %g is not a compute capability", fn, cc);
  return srv_embed_flag_add(o, fn, "min-supported-compute-capability", "%.17g", cc);
}

/* Accepted and checked; nothing in Nereid grows GPU buffers in place. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(
    TRITONSERVER_ServerOptions *o, int gpu_device, size_t size) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize";
  if (gpu_device < 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: GPU device %d is negative",
                         fn, gpu_device);
  return srv_embed_flag_add(o, fn, "cuda-virtual-address-size", "%d:%zu", gpu_device,
                            size);
}

/* --model-load-gpu-limit: loads on that GPU fail while more than the
 * fraction of its memory is in use. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
    TRITONSERVER_ServerOptions *o, const TRITONSERVER_InstanceGroupKind kind,
    const int device_id, const double fraction) {
  const char *fn = "TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit";
  if (o == NULL) return NULL_ARG(fn, "options");
  if (kind != TRITONSERVER_INSTANCEGROUPKIND_GPU)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: only KIND_GPU devices have a load limit", fn);
  if (device_id < 0 || !(fraction >= 0.0) || !isfinite(fraction))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: device %d, fraction %g: a GPU id and a fraction >= 0", fn,
                         device_id, fraction);
  return srv_embed_flag_add(o, fn, "model-load-gpu-limit", "%d:%.17g", device_id,
                            fraction);
}

/* The rate limiter's settings, as --rate-limit and --rate-limit-resource
 * (embed.md, "Options"). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions *o, TRITONSERVER_RateLimitMode mode) {
  const char *fn = "TRITONSERVER_ServerOptionsSetRateLimiterMode";
  if (o == NULL) return NULL_ARG(fn, "options");
  if (mode == TRITONSERVER_RATE_LIMIT_OFF)
    return srv_embed_flag_add(o, fn, "rate-limit", "off");
  if (mode == TRITONSERVER_RATE_LIMIT_EXEC_COUNT)
    return srv_embed_flag_add(o, fn, "rate-limit", "execution_count");
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: unknown rate limit mode %d",
                       fn, (int)mode);
}

/* A resource's count on `device`, or on every device with -1 (a global
 * resource takes the largest count given for its name). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsAddRateLimiterResource(
    TRITONSERVER_ServerOptions *o, const char *name, const size_t count,
    const int device) {
  const char *fn = "TRITONSERVER_ServerOptionsAddRateLimiterResource";
  if (o == NULL) return NULL_ARG(fn, "options");
  if (name == NULL) return NULL_ARG(fn, "resource_name");
  if (device < -1)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: device %d for resource '%s' (-1 is every device, else a "
                         "GPU id)",
                         fn, device, name);
  if (strchr(name, ':') != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: resource name '%s' must not hold ':'", fn, name);
  char text[SRV_RATE_RESOURCE_NAME_MAX + 64];
  snprintf(text, sizeof text, "%.*s:%zu:%d", (int)SRV_RATE_RESOURCE_NAME_MAX + 1, name,
           count, device);
  return checked_flag_add(o, fn, srv_options_rate_resource_check(text),
                          "rate-limit-resource", text);
}

/* --host-policy: cpu-cores sets the CPU affinity of the instances of that
 * policy, numa-node binds their memory to the node. The setting's form is
 * checked now, with the flag's texts; the node against this machine by
 * ServerNew (srv_options_validate). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetHostPolicy(TRITONSERVER_ServerOptions *o,
                                                            const char *policy,
                                                            const char *setting,
                                                            const char *value) {
  const char *fn = "TRITONSERVER_ServerOptionsSetHostPolicy";
  if (o == NULL) return NULL_ARG(fn, "options");
  if (policy == NULL) return NULL_ARG(fn, "policy_name");
  if (setting == NULL) return NULL_ARG(fn, "setting");
  if (value == NULL) return NULL_ARG(fn, "value");
  if (strchr(policy, ',') != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: policy name '%s' must not hold ','", fn, policy);
  char text[1024];
  int n = snprintf(text, sizeof text, "%s,%s=%s", policy, setting, value);
  if (n < 0 || (size_t)n >= sizeof text)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: setting too long", fn);
  char *list[] = {text};
  srv_status_t *st = srv_host_policy_check(list, 1);
  if (st != NULL) {
    TRITONSERVER_Error *err = api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: %s", fn,
                                            srv_status_message(st));
    srv_status_free(st);
    return err;
  }
  return srv_embed_flag_add(o, fn, "host-policy", "%s", text);
}

/* GPU metrics are on by default in Triton; Nereid renders none, on or off
 * (embed.md). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetGpuMetrics(TRITONSERVER_ServerOptions *o,
                                                            bool gpu_metrics) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetGpuMetrics",
                            "allow-gpu-metrics", "%s", bool_text(gpu_metrics));
}

/* ---- Settings kept beside the flags ---------------------------------------- */

/* ServerMetadata's name, tritonserver's --id. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetServerId(TRITONSERVER_ServerOptions *o,
                                                          const char *server_id) {
  const char *fn = "TRITONSERVER_ServerOptionsSetServerId";
  if (server_id == NULL) return NULL_ARG(fn, "server_id");
  return srv_embed_flag_add(o, fn, "id", "%s", server_id);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStartupModel(TRITONSERVER_ServerOptions *o,
                                                              const char *model_name) {
  const char *fn = "TRITONSERVER_ServerOptionsSetStartupModel";
  if (o == NULL) return NULL_ARG(fn, "options");
  if (model_name == NULL) return NULL_ARG(fn, "model_name");
  char **grown =
      realloc(o->startup_models, (o->startup_model_count + 1) * sizeof *grown);
  if (grown == NULL) SRV_FATAL("out of memory");
  grown[o->startup_model_count++] = srv_strdup(model_name);
  o->startup_models = grown;
  return NULL;
}
