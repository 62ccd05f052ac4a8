/* Shared lifecycle of the stateless backends (addsub, addsub_string,
 * identity). Model/instance calls: server loading threads; execute: the
 * instance's thread, reading only state that is immutable after load. */
#include "backends/common/simple_backend.h"

#include <inttypes.h>
#include <stdlib.h>

#include "backends/common/clock.h"
#include "backends/common/config_fetch.h"
#include "backends/common/error.h"

typedef struct {
  const bk_simple_backend_t *backend;
  bk_model_config_t cfg;
  uint32_t execute_delay_ms; /* backend->execute_delay only */
} simple_model_t;

typedef struct {
  simple_model_t *model; /* outlives the instance: models finalize last */
} simple_instance_t;

TRITONSERVER_Error *bk_check_api_version(const char *backend_name) {
  uint32_t major = 0, minor = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
  if (major != TRITONBACKEND_API_VERSION_MAJOR ||
      minor < TRITONBACKEND_API_VERSION_MINOR) {
    return bk_error(TRITONSERVER_ERROR_UNSUPPORTED,
                    "backend '%s' needs backend API %d.%d or a later 1.x, server has "
                    "%" PRIu32 ".%" PRIu32,
                    backend_name, TRITONBACKEND_API_VERSION_MAJOR,
                    TRITONBACKEND_API_VERSION_MINOR, major, minor);
  }
  return NULL;
}

TRITONSERVER_Error *bk_prefer_cpu_instances(TRITONBACKEND_BackendAttribute *attributes) {
  return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
      attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 0, NULL, 0);
}

/* The backend's own check, then the parameters the lifecycle reads. */
static bool config_ok(const bk_simple_backend_t *backend, simple_model_t *state,
                      char *why, size_t len) {
  if (!backend->validate(&state->cfg, why, len)) return false;
  return !backend->execute_delay ||
         bk_model_config_param_ms(&state->cfg, "execute_delay_ms",
                                  BK_MAX_EXECUTE_DELAY_MS, &state->execute_delay_ms, why,
                                  len);
}

TRITONSERVER_Error *bk_simple_model_initialize(const bk_simple_backend_t *backend,
                                               TRITONBACKEND_Model *model) {
  simple_model_t *state = calloc(1, sizeof *state);
  if (state == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  state->backend = backend;
  TRITONSERVER_Error *err = bk_model_config_fetch(model, &state->cfg);
  char why[BK_ERROR_MAX - 64];
  if (err == NULL && !config_ok(backend, state, why, sizeof why)) {
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s' (backend '%s'): %s",
                   state->cfg.name, backend->name, why);
  }
  if (err == NULL) err = TRITONBACKEND_ModelSetState(model, state);
  if (err != NULL) {
    /* The server calls ModelFinalize only after a successful initialize. */
    bk_model_config_free(&state->cfg);
    free(state);
  }
  return err;
}

TRITONSERVER_Error *bk_simple_model_finalize(TRITONBACKEND_Model *model) {
  void *vstate = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vstate));
  simple_model_t *state = vstate;
  if (state != NULL) bk_model_config_free(&state->cfg);
  free(state);
  return NULL;
}

TRITONSERVER_Error *bk_simple_instance_initialize(TRITONBACKEND_ModelInstance *instance) {
  TRITONBACKEND_Model *model = NULL;
  void *vmodel = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vmodel));
  if (vmodel == NULL) {
    return bk_error(TRITONSERVER_ERROR_INTERNAL,
                    "instance created for an unloaded model");
  }
  simple_instance_t *state = calloc(1, sizeof *state);
  if (state == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  state->model = vmodel;
  TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceSetState(instance, state);
  if (err != NULL) free(state);
  return err;
}

TRITONSERVER_Error *bk_simple_instance_finalize(TRITONBACKEND_ModelInstance *instance) {
  void *state = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  free(state);
  return NULL;
}

TRITONSERVER_Error *bk_simple_execute(TRITONBACKEND_ModelInstance *instance,
                                      TRITONBACKEND_Request **requests, uint32_t count) {
  /* Until this returns NULL the server still owns the requests, so an error
   * here leaves them untouched for the server to fail. */
  void *vstate = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vstate));
  simple_instance_t *state = vstate;
  if (state == NULL) {
    return bk_error(TRITONSERVER_ERROR_INTERNAL, "instance has no state");
  }
  simple_model_t *model = state->model;
  /* Triton's identity backend sleeps once per Execute, before the batch. */
  if (model->execute_delay_ms > 0) bk_sleep_ms(model->execute_delay_ms);
  bk_execute_each(instance, requests, count, model->backend->respond, &model->cfg);
  return NULL;
}
