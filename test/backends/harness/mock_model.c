/* Mock server: backend, model and instance objects, their states, configs
 * and reported statistics. Loading calls come from the test thread;
 * statistics may come from any thread (atomics). */
#include "test/backends/harness/mock_server.h"

TRITONSERVER_Error *TRITONBACKEND_BackendName(TRITONBACKEND_Backend *backend,
                                              const char **name) {
  *name = backend->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendConfig(TRITONBACKEND_Backend *backend,
                                                TRITONSERVER_Message **backend_config) {
  *backend_config = mock_message_new(backend->config_json ? backend->config_json : "{}");
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendState(TRITONBACKEND_Backend *backend,
                                               void **state) {
  *state = backend->state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendSetState(TRITONBACKEND_Backend *backend,
                                                  void *state) {
  backend->state = state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelName(TRITONBACKEND_Model *model,
                                            const char **name) {
  *name = model->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelVersion(TRITONBACKEND_Model *model,
                                               uint64_t *version) {
  *version = model->version;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelConfig(TRITONBACKEND_Model *model,
                                              const uint32_t config_version,
                                              TRITONSERVER_Message **model_config) {
  if (config_version != 1) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED, "config version");
  }
  *model_config = mock_message_new(model->config_json);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelBackend(TRITONBACKEND_Model *model,
                                               TRITONBACKEND_Backend **backend) {
  *backend = model->backend;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelState(TRITONBACKEND_Model *model, void **state) {
  *state = model->state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelSetState(TRITONBACKEND_Model *model, void *state) {
  model->state = state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceName(TRITONBACKEND_ModelInstance *instance,
                                                    const char **name) {
  *name = instance->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_InstanceGroupKind *kind) {
  *kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance *instance, int32_t *device_id) {
  *device_id = 0;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Model **model) {
  *model = instance->model;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance *instance, void **state) {
  *state = instance->state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance *instance, void *state) {
  instance->state = state;
  return NULL;
}

/* Statistics must name a request the backend still holds. */
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  if (request == NULL ||
      !(exec_start_ns <= compute_start_ns && compute_start_ns <= compute_end_ns &&
        compute_end_ns <= exec_end_ns)) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                 "bad statistics timestamps");
  }
  atomic_fetch_add(success ? &instance->stats.success : &instance->stats.fail, 1);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance *instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  if (batch_size == 0 || exec_start_ns == 0 || compute_start_ns < exec_start_ns ||
      compute_end_ns < compute_start_ns || exec_end_ns < compute_end_ns) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "bad batch statistics");
  }
  atomic_fetch_add(&instance->stats.batches, 1);
  atomic_fetch_add(&instance->stats.batch_total, batch_size);
  return NULL;
}
