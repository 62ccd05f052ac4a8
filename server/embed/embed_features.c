/* The TRITONSERVER_ServerOptions of features Nereid does not have (rate
 * limiter, response cache, host policies, namespacing, load retries and
 * device limits, repository agents, the buffer manager, compute-capability
 * filtering, CUDA virtual memory). Each accepts the value that asks for
 * nothing, which is Triton's default, so that an application setting
 * Triton's defaults runs unchanged, and refuses with UNSUPPORTED, naming
 * the option and what Nereid lacks, a value that asks for the feature
 * (embed.md, "Options"). Nothing is stored: an accepted value is the
 * behaviour Nereid has. One thread at a time per object (the
 * application's). */
#include <math.h>
#include <string.h>

#include "server/embed/embed.h"

#define NO_FEATURE(fn, ...) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, fn ": " __VA_ARGS__)

/* Every function here checks its options handle first. */
#define OPTIONS_CHECK(fn, o) \
  if ((o) == NULL) return SRV_EMBED_NULL(fn, "options")

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelConfigName(
    TRITONSERVER_ServerOptions *o, const char *name) {
  const char *fn = "TRITONSERVER_ServerOptionsSetModelConfigName";
  OPTIONS_CHECK(fn, o);
  if (name == NULL) return SRV_EMBED_NULL(fn, "model_config_name");
  if (name[0] == '\0') return NULL; /* config.pbtxt, Triton's default */
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetModelConfigName",
                    "'%s': Nereid reads <model>/config.pbtxt only, not "
                    "<model>/configs/<name>.pbtxt",
                    name);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions *o, TRITONSERVER_RateLimitMode mode) {
  const char *fn = "TRITONSERVER_ServerOptionsSetRateLimiterMode";
  OPTIONS_CHECK(fn, o);
  if (mode == TRITONSERVER_RATE_LIMIT_OFF) return NULL;
  if (mode == TRITONSERVER_RATE_LIMIT_EXEC_COUNT)
    return NO_FEATURE("TRITONSERVER_ServerOptionsSetRateLimiterMode",
                      "EXEC_COUNT: Nereid has no rate limiter (instances run whenever "
                      "their scheduler gives them work)");
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: unknown rate limit mode %d", fn,
                       (int)mode);
}

/* Resources only matter to the EXEC_COUNT mode, which is refused: with the
 * limiter off Triton ignores them too. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsAddRateLimiterResource(
    TRITONSERVER_ServerOptions *o, const char *name, const size_t count, const int device) {
  const char *fn = "TRITONSERVER_ServerOptionsAddRateLimiterResource";
  OPTIONS_CHECK(fn, o);
  if (name == NULL) return SRV_EMBED_NULL(fn, "resource_name");
  if (device < -1)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: device %d for resource '%s' (-1 is global, else a GPU id)",
                         fn, device, name);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetResponseCacheByteSize(
    TRITONSERVER_ServerOptions *o, uint64_t size) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetResponseCacheByteSize", o);
  if (size == 0) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetResponseCacheByteSize",
                    "%llu bytes: Nereid has no response cache (0 is the only size)",
                    (unsigned long long)size);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheConfig(TRITONSERVER_ServerOptions *o,
                                                             const char *cache_name,
                                                             const char *config_json) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCacheConfig";
  OPTIONS_CHECK(fn, o);
  if (cache_name == NULL) return SRV_EMBED_NULL(fn, "cache_name");
  if (config_json == NULL) return SRV_EMBED_NULL(fn, "config_json");
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetCacheConfig",
                    "cache '%s': Nereid has no response cache", cache_name);
}

/* Where cache libraries would be found: a search path that asks for no
 * cache by itself. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCacheDirectory";
  OPTIONS_CHECK(fn, o);
  return dir == NULL ? SRV_EMBED_NULL(fn, "cache_dir") : NULL;
}

/* The same for repository agents: a model whose config names one fails to
 * load, with its own error. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetRepoAgentDirectory";
  OPTIONS_CHECK(fn, o);
  return dir == NULL ? SRV_EMBED_NULL(fn, "repoagent_dir") : NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetHostPolicy(TRITONSERVER_ServerOptions *o,
                                                            const char *policy,
                                                            const char *setting,
                                                            const char *value) {
  const char *fn = "TRITONSERVER_ServerOptionsSetHostPolicy";
  OPTIONS_CHECK(fn, o);
  if (policy == NULL) return SRV_EMBED_NULL(fn, "policy_name");
  if (setting == NULL) return SRV_EMBED_NULL(fn, "setting");
  if (value == NULL) return SRV_EMBED_NULL(fn, "value");
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetHostPolicy",
                    "policy '%s' setting '%s': Nereid has no host policies (NUMA nodes, "
                    "CPU affinity)",
                    policy, setting);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelNamespacing(
    TRITONSERVER_ServerOptions *o, bool enable) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetModelNamespacing", o);
  if (!enable) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetModelNamespacing",
                    "true: Nereid serves one model namespace (a name in two "
                    "repositories is a conflict)");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadRetryCount(
    TRITONSERVER_ServerOptions *o, unsigned int count) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetModelLoadRetryCount", o);
  if (count == 0) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetModelLoadRetryCount",
                    "%u: Nereid tries a model load once (0 is the only count)", count);
}

/* A fraction of 1 or more limits nothing. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
    TRITONSERVER_ServerOptions *o, const TRITONSERVER_InstanceGroupKind kind,
    const int device_id, const double fraction) {
  const char *fn = "TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit";
  OPTIONS_CHECK(fn, o);
  if (kind != TRITONSERVER_INSTANCEGROUPKIND_GPU)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: only KIND_GPU devices have a load limit", fn);
  if (device_id < 0 || !(fraction >= 0.0))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: device %d, fraction %g: a GPU id and a fraction >= 0", fn,
                         device_id, fraction);
  if (fraction >= 1.0) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit",
                    "GPU %d at %g: Nereid does not watch device memory while loading",
                    device_id, fraction);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(
    TRITONSERVER_ServerOptions *o, unsigned int count) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetBufferManagerThreadCount", o);
  if (count == 0) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetBufferManagerThreadCount",
                    "%u: Nereid copies tensors on the thread that needs them and has "
                    "no buffer manager threads (0 is the only count)",
                    count);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
    TRITONSERVER_ServerOptions *o, double cc) {
  const char *fn = "TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability";
  OPTIONS_CHECK(fn, o);
  if (!isfinite(cc) || cc < 0.0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: %g is not a compute capability", fn, cc);
  if (cc == 0.0) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability",
                    "%.1f: Nereid uses every GPU it finds (0 is the only minimum)", cc);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(
    TRITONSERVER_ServerOptions *o, int gpu_device, size_t size) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize";
  OPTIONS_CHECK(fn, o);
  if (gpu_device < 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: GPU device %d is negative",
                         fn, gpu_device);
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize",
                    "GPU %d: Nereid reserves no CUDA virtual address space (implicit "
                    "state buffers do not grow in place)",
                    gpu_device);
}

/* Peer access only makes copies between GPUs faster in Triton (a failure
 * to enable it is a warning); Nereid's copies work either way. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    TRITONSERVER_ServerOptions *o, bool enable) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetEnablePeerAccess", o);
  return NULL;
}

/* GPU metrics are on by default in Triton; Nereid renders none, on or off
 * (embed.md). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetGpuMetrics(TRITONSERVER_ServerOptions *o,
                                                            bool gpu_metrics) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetGpuMetrics", o);
  return NULL;
}
