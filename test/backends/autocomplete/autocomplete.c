/* The autocomplete test backend: in TRITONBACKEND_ModelInitialize it logs
 * what its config says (platform, backend, default_model_filename) and
 * whether the server lets it complete the config; when it may and the
 * config lacks inputs or outputs, it sets them (INPUT0 -> OUTPUT0, INT32,
 * [-1]), max_batch_size 8 and a dynamic batcher, as framework backends
 * complete a config from their model file. Then it answers like identity.
 * Parameter `autocomplete_mode` sends a broken completion instead:
 * `invalid` (a zero dimension), `too_large` (more inputs than the server's
 * limit), `scheduling` (sequence batching, whatever the config has),
 * `ensemble` (ensemble scheduling, which no backend model may have).
 * Entry points: the server's loading threads, then each instance's thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/config_fetch.h"
#include "backends/common/error.h"
#include "backends/common/passthrough.h"
#include "backends/common/simple_backend.h"

static const bk_simple_backend_t kBackend = {
    .name = "autocomplete",
    .validate = bk_passthrough_validate,
    .respond = bk_passthrough_respond,
};

/* More inputs than the server allows in one config (its limit is 4096). */
#define TOO_MANY_INPUTS 5000

#define TENSOR(name, dim) \
  "{\"name\":\"" name "\",\"data_type\":\"TYPE_INT32\",\"dims\":[" dim "]}"

/* The completion `mode` asks for, as the JSON of a ModelConfig; malloc'd. */
static char *completion(const char *mode) {
  if (!strcmp(mode, "invalid"))
    return strdup("{\"max_batch_size\":8,\"input\":[" TENSOR(
        "INPUT0", "0") "],\"output\":[" TENSOR("OUTPUT0", "0") "]}");
  if (!strcmp(mode, "scheduling"))
    return strdup("{\"max_batch_size\":8,\"sequence_batching\":{},\"input\":[" TENSOR(
        "INPUT0", "-1") "],\"output\":[" TENSOR("OUTPUT0", "-1") "]}");
  if (!strcmp(mode, "ensemble"))
    return strdup("{\"ensemble_scheduling\":{},\"input\":[" TENSOR(
        "INPUT0", "-1") "],\"output\":[" TENSOR("OUTPUT0", "-1") "]}");
  if (!strcmp(mode, "too_large")) {
    size_t cap = 64 + (size_t)TOO_MANY_INPUTS * 80, len = 0;
    char *s = malloc(cap);
    if (s == NULL) return NULL;
    len += (size_t)snprintf(s, cap, "{\"input\":[");
    for (int i = 0; i < TOO_MANY_INPUTS; i++)
      len += (size_t)snprintf(s + len, cap - len,
                              "%s{\"name\":\"IN%d\",\"data_type\":\"TYPE_INT32\","
                              "\"dims\":[1]}",
                              i ? "," : "", i);
    snprintf(s + len, cap - len, "]}");
    return s;
  }
  return strdup(
      "{\"max_batch_size\":8,\"dynamic_batching\":{\"max_queue_delay_"
      "microseconds\":200000},\"input\":[" TENSOR("INPUT0", "-1") "],\"output\":[" TENSOR(
          "OUTPUT0", "-1") "]}");
}

static const char *str_of(const bk_json_t *root, const char *key) {
  const char *s = bk_json_str(bk_json_get(root, key), NULL);
  return s != NULL ? s : "";
}

/* Logs what the config says, then completes it when allowed and needed. */
static TRITONSERVER_Error *complete(TRITONBACKEND_Model *model) {
  bool allowed = false;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelAutoCompleteConfig(model, &allowed));
  bk_model_config_t cfg;
  BK_RETURN_IF_ERROR(bk_model_config_fetch(model, &cfg));
  BK_LOG(TRITONSERVER_LOG_INFO,
         "autocomplete: model '%s' platform '%s' backend '%s' default_model_filename "
         "'%s' max_batch_size %lld inputs %zu; may complete: %s",
         cfg.name, str_of(cfg.root, "platform"), str_of(cfg.root, "backend"),
         str_of(cfg.root, "default_model_filename"), (long long)cfg.max_batch_size,
         cfg.input_count, allowed ? "yes" : "no");
  const char *mode = bk_model_config_param(&cfg, "autocomplete_mode");
  bool needed = cfg.input_count == 0 || cfg.output_count == 0;
  char *json = allowed && needed ? completion(mode != NULL ? mode : "") : NULL;
  bk_model_config_free(&cfg);
  if (!allowed || !needed) return NULL;
  if (json == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  TRITONSERVER_Message *message = NULL;
  TRITONSERVER_Error *err =
      TRITONSERVER_MessageNewFromSerializedJson(&message, json, strlen(json));
  free(json);
  if (err == NULL) err = TRITONBACKEND_ModelSetConfig(model, 1, message);
  if (message != NULL) TRITONSERVER_MessageDelete(message);
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  (void)backend;
  return bk_check_api_version(kBackend.name);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes) {
  (void)backend;
  return bk_prefer_cpu_instances(attributes);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
  BK_RETURN_IF_ERROR(complete(model));
  /* Reads the config as the server left it, and checks it. */
  return bk_simple_model_initialize(&kBackend, model);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
  return bk_simple_model_finalize(model);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance) {
  return bk_simple_instance_initialize(instance);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance) {
  return bk_simple_instance_finalize(instance);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  return bk_simple_execute(instance, requests, request_count);
}
