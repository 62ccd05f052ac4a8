/* Lifecycle of a stateless one-response-per-request backend: the model
 * keeps its parsed config, instances keep a pointer to it, execute runs
 * bk_execute_each. A backend supplies a config check and a respond
 * function; its entry points forward here. Initialize/finalize calls come
 * from the server's loading threads; execute from each instance's thread. */
#ifndef NEREID_BACKENDS_COMMON_SIMPLE_BACKEND_H
#define NEREID_BACKENDS_COMMON_SIMPLE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/common/execute.h"
#include "backends/common/export.h"
#include "backends/common/model_config.h"
#include "triton/core/tritonbackend.h"

typedef struct {
  const char *name; /* the backend's name, for messages */
  /** Backend-specific config check at model load; false with a message. */
  bool (*validate)(const bk_model_config_t *cfg, char *err, size_t err_len);
  /** Fills one response; ctx is the model's const bk_model_config_t. */
  bk_respond_fn *respond;
  /** Reads Triton's identity-backend parameter `execute_delay_ms` (0 to
   *  BK_MAX_EXECUTE_DELAY_MS, else the load fails naming it) and sleeps
   *  that long at the start of each Execute, before any request is read. */
  bool execute_delay;
} bk_simple_backend_t;

/** For TRITONBACKEND_Initialize: UNSUPPORTED unless the server's backend
 * API has our major version and at least our minor version. */
TRITONSERVER_Error *bk_check_api_version(const char *backend_name);

/** For TRITONBACKEND_GetBackendAttribute: these backends compute on the CPU,
 * so a model without instance_group gets CPU instances. */
TRITONSERVER_Error *bk_prefer_cpu_instances(TRITONBACKEND_BackendAttribute *attributes);

TRITONSERVER_Error *bk_simple_model_initialize(const bk_simple_backend_t *backend,
                                               TRITONBACKEND_Model *model);
TRITONSERVER_Error *bk_simple_model_finalize(TRITONBACKEND_Model *model);
TRITONSERVER_Error *bk_simple_instance_initialize(TRITONBACKEND_ModelInstance *instance);
TRITONSERVER_Error *bk_simple_instance_finalize(TRITONBACKEND_ModelInstance *instance);
TRITONSERVER_Error *bk_simple_execute(TRITONBACKEND_ModelInstance *instance,
                                      TRITONBACKEND_Request **requests, uint32_t count);

/** Defines a backend's exported entry points, all forwarding to the
 * functions above for the bk_simple_backend_t named BACKEND: Initialize,
 * GetBackendAttribute, ModelInitialize, ModelFinalize,
 * ModelInstanceInitialize, ModelInstanceFinalize, ModelInstanceExecute.
 * Use once, at file scope, in the backend's only entry-point file. */
#define BK_DEFINE_SIMPLE_BACKEND(BACKEND)                                           \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(                           \
      TRITONBACKEND_Backend *backend) {                                             \
    return bk_check_api_version((BACKEND).name);                                    \
  }                                                                                 \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(                  \
      TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes) { \
    return bk_prefer_cpu_instances(attributes);                                     \
  }                                                                                 \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(                      \
      TRITONBACKEND_Model *model) {                                                 \
    return bk_simple_model_initialize(&(BACKEND), model);                           \
  }                                                                                 \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(                        \
      TRITONBACKEND_Model *model) {                                                 \
    return bk_simple_model_finalize(model);                                         \
  }                                                                                 \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(              \
      TRITONBACKEND_ModelInstance *instance) {                                      \
    return bk_simple_instance_initialize(instance);                                 \
  }                                                                                 \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(                \
      TRITONBACKEND_ModelInstance *instance) {                                      \
    return bk_simple_instance_finalize(instance);                                   \
  }                                                                                 \
  BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(                 \
      TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,      \
      const uint32_t request_count) {                                               \
    return bk_simple_execute(instance, requests, request_count);                    \
  }

#endif
