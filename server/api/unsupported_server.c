/* The functions of Triton's C API on the embedding half: server options, server life cycle, model and repository queries that Nereid does not
 * implement yet. Each answers UNSUPPORTED with its own name, so that a
 * backend using it loads (dlopen with RTLD_NOW needs every symbol) and fails
 * clearly if it calls one. Any thread. Functions leave this file as they are
 * implemented elsewhere; the file goes when it is empty. */
#include "server/api/error.h"
#include "triton/core/tritonbackend.h"

#define UNSUPPORTED(name) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, "%s is not supported by Nereid yet", name)

TRITONSERVER_Error *TRITONSERVER_ServerDelete(TRITONSERVER_Server *server) {
  return UNSUPPORTED("TRITONSERVER_ServerDelete");
}

TRITONSERVER_Error *TRITONSERVER_ServerIsLive(TRITONSERVER_Server *server, _Bool *live) {
  return UNSUPPORTED("TRITONSERVER_ServerIsLive");
}

TRITONSERVER_Error *TRITONSERVER_ServerIsReady(TRITONSERVER_Server *server,
                                               _Bool *ready) {
  return UNSUPPORTED("TRITONSERVER_ServerIsReady");
}

TRITONSERVER_Error *TRITONSERVER_ServerLoadModel(TRITONSERVER_Server *server,
                                                 const char *model_name) {
  return UNSUPPORTED("TRITONSERVER_ServerLoadModel");
}

TRITONSERVER_Error *TRITONSERVER_ServerLoadModelWithParameters(
    TRITONSERVER_Server *server, const char *model_name,
    const TRITONSERVER_Parameter **parameters, const uint64_t parameter_count) {
  return UNSUPPORTED("TRITONSERVER_ServerLoadModelWithParameters");
}

TRITONSERVER_Error *TRITONSERVER_ServerMetadata(TRITONSERVER_Server *server,
                                                TRITONSERVER_Message **server_metadata) {
  return UNSUPPORTED("TRITONSERVER_ServerMetadata");
}

TRITONSERVER_Error *TRITONSERVER_ServerMetrics(TRITONSERVER_Server *server,
                                               TRITONSERVER_Metrics **metrics) {
  return UNSUPPORTED("TRITONSERVER_ServerMetrics");
}

TRITONSERVER_Error *TRITONSERVER_ServerModelBatchProperties(TRITONSERVER_Server *server,
                                                            const char *model_name,
                                                            const int64_t model_version,
                                                            uint32_t *flags,
                                                            void **voidp) {
  return UNSUPPORTED("TRITONSERVER_ServerModelBatchProperties");
}

TRITONSERVER_Error *TRITONSERVER_ServerModelConfig(TRITONSERVER_Server *server,
                                                   const char *model_name,
                                                   const int64_t model_version,
                                                   const uint32_t config_version,
                                                   TRITONSERVER_Message **model_config) {
  return UNSUPPORTED("TRITONSERVER_ServerModelConfig");
}

TRITONSERVER_Error *TRITONSERVER_ServerModelIndex(TRITONSERVER_Server *server,
                                                  uint32_t flags,
                                                  TRITONSERVER_Message **model_index) {
  return UNSUPPORTED("TRITONSERVER_ServerModelIndex");
}

TRITONSERVER_Error *TRITONSERVER_ServerModelMetadata(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    TRITONSERVER_Message **model_metadata) {
  return UNSUPPORTED("TRITONSERVER_ServerModelMetadata");
}

TRITONSERVER_Error *TRITONSERVER_ServerModelStatistics(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    TRITONSERVER_Message **model_stats) {
  return UNSUPPORTED("TRITONSERVER_ServerModelStatistics");
}

TRITONSERVER_Error *TRITONSERVER_ServerNew(TRITONSERVER_Server **server,
                                           TRITONSERVER_ServerOptions *options) {
  return UNSUPPORTED("TRITONSERVER_ServerNew");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsAddRateLimiterResource(
    TRITONSERVER_ServerOptions *options, const char *resource_name,
    const size_t resource_count, const int device) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsAddRateLimiterResource");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsDelete(
    TRITONSERVER_ServerOptions *options) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsDelete");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsNew(TRITONSERVER_ServerOptions **options) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsNew");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBackendConfig(
    TRITONSERVER_ServerOptions *options, const char *backend_name, const char *setting,
    const char *value) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetBackendConfig");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBackendDirectory(
    TRITONSERVER_ServerOptions *options, const char *backend_dir) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetBackendDirectory");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(
    TRITONSERVER_ServerOptions *options, unsigned int thread_count) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetBufferManagerThreadCount");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheConfig(
    TRITONSERVER_ServerOptions *options, const char *cache_name,
    const char *config_json) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetCacheConfig");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheDirectory(
    TRITONSERVER_ServerOptions *options, const char *cache_dir) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetCacheDirectory");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCpuMetrics(
    TRITONSERVER_ServerOptions *options, _Bool cpu_metrics) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetCpuMetrics");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
    TRITONSERVER_ServerOptions *options, int gpu_device, uint64_t size) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(
    TRITONSERVER_ServerOptions *options, int gpu_device,
    size_t cuda_virtual_address_size) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    TRITONSERVER_ServerOptions *options, _Bool enable_peer_access) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetEnablePeerAccess");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetExitOnError(
    TRITONSERVER_ServerOptions *options, _Bool exit) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetExitOnError");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetExitTimeout(
    TRITONSERVER_ServerOptions *options, unsigned int timeout) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetExitTimeout");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetGpuMetrics(
    TRITONSERVER_ServerOptions *options, _Bool gpu_metrics) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetGpuMetrics");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetHostPolicy(
    TRITONSERVER_ServerOptions *options, const char *policy_name, const char *setting,
    const char *value) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetHostPolicy");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogError(
    TRITONSERVER_ServerOptions *options, _Bool log) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetLogError");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFile(
    TRITONSERVER_ServerOptions *options, const char *file) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetLogFile");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFormat(
    TRITONSERVER_ServerOptions *options, const TRITONSERVER_LogFormat format) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetLogFormat");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogInfo(
    TRITONSERVER_ServerOptions *options, _Bool log) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetLogInfo");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogVerbose(
    TRITONSERVER_ServerOptions *options, int level) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetLogVerbose");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogWarn(
    TRITONSERVER_ServerOptions *options, _Bool log) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetLogWarn");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetrics(
    TRITONSERVER_ServerOptions *options, _Bool metrics) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetMetrics");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetricsConfig(
    TRITONSERVER_ServerOptions *options, const char *name, const char *setting,
    const char *value) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetMetricsConfig");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetricsInterval(
    TRITONSERVER_ServerOptions *options, uint64_t metrics_interval_ms) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetMetricsInterval");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
    TRITONSERVER_ServerOptions *options, double cc) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelConfigName(
    TRITONSERVER_ServerOptions *options, const char *model_config_name) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelConfigName");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelControlMode(
    TRITONSERVER_ServerOptions *options, TRITONSERVER_ModelControlMode mode) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelControlMode");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
    TRITONSERVER_ServerOptions *options, const TRITONSERVER_InstanceGroupKind kind,
    const int device_id, const double fraction) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadRetryCount(
    TRITONSERVER_ServerOptions *options, unsigned int retry_count) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelLoadRetryCount");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelLoadThreadCount(
    TRITONSERVER_ServerOptions *options, unsigned int thread_count) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelLoadThreadCount");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelNamespacing(
    TRITONSERVER_ServerOptions *options, _Bool enable_namespace) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelNamespacing");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelRepositoryPath(
    TRITONSERVER_ServerOptions *options, const char *model_repository_path) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetModelRepositoryPath");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(
    TRITONSERVER_ServerOptions *options, uint64_t size) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions *options, TRITONSERVER_RateLimitMode mode) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetRateLimiterMode");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    TRITONSERVER_ServerOptions *options, const char *repoagent_dir) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetRepoAgentDirectory");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetResponseCacheByteSize(
    TRITONSERVER_ServerOptions *options, uint64_t size) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetResponseCacheByteSize");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetServerId(
    TRITONSERVER_ServerOptions *options, const char *server_id) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetServerId");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStartupModel(
    TRITONSERVER_ServerOptions *options, const char *model_name) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetStartupModel");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStrictModelConfig(
    TRITONSERVER_ServerOptions *options, _Bool strict) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetStrictModelConfig");
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStrictReadiness(
    TRITONSERVER_ServerOptions *options, _Bool strict) {
  return UNSUPPORTED("TRITONSERVER_ServerOptionsSetStrictReadiness");
}

TRITONSERVER_Error *TRITONSERVER_ServerPollModelRepository(TRITONSERVER_Server *server) {
  return UNSUPPORTED("TRITONSERVER_ServerPollModelRepository");
}

TRITONSERVER_Error *TRITONSERVER_ServerRegisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path,
    const TRITONSERVER_Parameter **name_mapping, const uint32_t mapping_count) {
  return UNSUPPORTED("TRITONSERVER_ServerRegisterModelRepository");
}

TRITONSERVER_Error *TRITONSERVER_ServerSetExitTimeout(TRITONSERVER_Server *server,
                                                      unsigned int timeout) {
  return UNSUPPORTED("TRITONSERVER_ServerSetExitTimeout");
}

TRITONSERVER_Error *TRITONSERVER_ServerStop(TRITONSERVER_Server *server) {
  return UNSUPPORTED("TRITONSERVER_ServerStop");
}

TRITONSERVER_Error *TRITONSERVER_ServerUnloadModel(TRITONSERVER_Server *server,
                                                   const char *model_name) {
  return UNSUPPORTED("TRITONSERVER_ServerUnloadModel");
}

TRITONSERVER_Error *TRITONSERVER_ServerUnloadModelAndDependents(
    TRITONSERVER_Server *server, const char *model_name) {
  return UNSUPPORTED("TRITONSERVER_ServerUnloadModelAndDependents");
}

TRITONSERVER_Error *TRITONSERVER_ServerUnregisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path) {
  return UNSUPPORTED("TRITONSERVER_ServerUnregisterModelRepository");
}
