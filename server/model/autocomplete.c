/* A backend's completion of its model's config during
 * TRITONBACKEND_ModelInitialize: whether it may (the server's
 * --disable-auto-complete-config), and TRITONBACKEND_ModelSetConfig, which
 * takes from the backend's config what tritonserver takes (max_batch_size,
 * inputs, outputs, the scheduling choice when the config had none, and
 * decoupled) and checks and completes the result as a config from a file.
 * The loading thread, inside ModelInitialize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/common/log.h"
#include "server/config/model_config.h"
#include "server/core/server.h"
#include "server/model/config_json.h"
#include "server/model/model.h"
#include "server/model/model_check.h"
#include "upb/json_decode.h"

/* What errors call a config that the backend set. */
#define SET_CONFIG_SOURCE "the configuration from TRITONBACKEND_ModelSetConfig"

TRITONSERVER_Error *TRITONBACKEND_ModelAutoCompleteConfig(TRITONBACKEND_Model *model,
                                                          bool *auto_complete_config) {
  *auto_complete_config = !model->server->options->strict_model_config;
  return NULL;
}

/* The backend's JSON as a config in `arena` (the merge below shares its
 * lists), held to the bound of a config file first. */
static TRITONSERVER_Error *config_decode(TRITONBACKEND_Model *model,
                                         TRITONSERVER_Message *message, upb_Arena *arena,
                                         inference_ModelConfig **out) {
  const char *json;
  size_t len;
  TRITONSERVER_Error *err = TRITONSERVER_MessageSerializeToJson(message, &json, &len);
  if (err != NULL) return err;
  if (len > CFG_MODEL_CONFIG_MAX_BYTES)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "model '%s': " SET_CONFIG_SOURCE
                         " is %zu bytes, larger than the limit of %zu bytes",
                         model->name, len, CFG_MODEL_CONFIG_MAX_BYTES);
  const upb_MessageDef *def = cfg_model_config_def();
  inference_ModelConfig *config = inference_ModelConfig_new(arena);
  upb_Status status;
  upb_Status_Clear(&status);
  if (config == NULL ||
      !upb_JsonDecode(json, len, (upb_Message *)config, def,
                      upb_FileDef_Pool(upb_MessageDef_File(def)), 0, arena, &status))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "model '%s': invalid configuration JSON: %s", model->name,
                         upb_Status_ErrorMessage(&status));
  *out = config;
  return NULL;
}

/* A copy of the model's config in `arena`. */
static inference_ModelConfig *config_copy(TRITONBACKEND_Model *model, upb_Arena *arena) {
  upb_Arena *tmp = upb_Arena_New();
  size_t len;
  char *bytes =
      tmp != NULL ? inference_ModelConfig_serialize(model->config, tmp, &len) : NULL;
  inference_ModelConfig *c =
      bytes != NULL ? inference_ModelConfig_parse(bytes, len, arena) : NULL;
  upb_Arena_Free(tmp);
  return c;
}

/* tritonserver's merge (TritonModel::UpdateModelConfig): the rest of the
 * config stays the server's. Both configs live in `arena`, so the merged
 * one may point at the backend's tensors. */
static TRITONSERVER_Error *config_merge(TRITONBACKEND_Model *model,
                                        const inference_ModelConfig *from,
                                        inference_ModelConfig *to, upb_Arena *arena) {
  inference_ModelConfig_set_max_batch_size(to,
                                           inference_ModelConfig_max_batch_size(from));
  size_t ni, no;
  const inference_ModelInput *const *in = inference_ModelConfig_input(from, &ni);
  const inference_ModelOutput *const *out = inference_ModelConfig_output(from, &no);
  inference_ModelInput **to_in = inference_ModelConfig_resize_input(to, ni, arena);
  inference_ModelOutput **to_out = inference_ModelConfig_resize_output(to, no, arena);
  if ((ni > 0 && to_in == NULL) || (no > 0 && to_out == NULL)) SRV_FATAL("out of memory");
  for (size_t i = 0; i < ni; i++) to_in[i] = (inference_ModelInput *)in[i];
  for (size_t i = 0; i < no; i++) to_out[i] = (inference_ModelOutput *)out[i];
  int had = inference_ModelConfig_scheduling_choice_case(to);
  int gives = inference_ModelConfig_scheduling_choice_case(from);
  if (had == inference_ModelConfig_scheduling_choice_NOT_SET) {
    if (inference_ModelConfig_has_dynamic_batching(from))
      inference_ModelConfig_set_dynamic_batching(
          to,
          (inference_ModelDynamicBatching *)inference_ModelConfig_dynamic_batching(from));
    else if (inference_ModelConfig_has_sequence_batching(from))
      inference_ModelConfig_set_sequence_batching(
          to, (inference_ModelSequenceBatching *)inference_ModelConfig_sequence_batching(
                  from));
    else if (inference_ModelConfig_has_ensemble_scheduling(from))
      inference_ModelConfig_set_ensemble_scheduling(
          to,
          (inference_ModelEnsembling *)inference_ModelConfig_ensemble_scheduling(from));
  } else if (had != gives) {
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "model '%s': Cannot update scheduling choice from %d to %d when "
                         "auto-completing.",
                         model->name, had, gives);
  }
  const inference_ModelTransactionPolicy *tp =
      inference_ModelConfig_model_transaction_policy(from);
  if (tp != NULL)
    inference_ModelTransactionPolicy_set_decoupled(
        inference_ModelConfig_mutable_model_transaction_policy(to, arena),
        inference_ModelTransactionPolicy_decoupled(tp));
  return NULL;
}

/* Replaces the configuration while the model initializes (before the
 * scheduler and the instances are made from it), as backends that complete
 * their config do. Not OK: the model keeps the config it had. */
TRITONSERVER_Error *TRITONBACKEND_ModelSetConfig(TRITONBACKEND_Model *model,
                                                 const uint32_t config_version,
                                                 TRITONSERVER_Message *model_config) {
  if (config_version != 1)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "model configuration version %u is not supported: only 1 is",
                         config_version);
  if (!model->config_settable)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "model '%s': the configuration can only be set during "
                         "TRITONBACKEND_ModelInitialize",
                         model->name);
  /* Decoded and merged apart, so that a refused config costs the model
   * nothing; kept with the model's arena once it is taken. */
  upb_Arena *tmp = upb_Arena_New();
  if (tmp == NULL) SRV_FATAL("out of memory");
  inference_ModelConfig *given = NULL, *merged = config_copy(model, tmp);
  if (merged == NULL) SRV_FATAL("out of memory");
  TRITONSERVER_Error *err = config_decode(model, model_config, tmp, &given);
  if (err == NULL) err = config_merge(model, given, merged, tmp);
  /* Only ensembles schedule steps, and they have no backend. */
  if (err == NULL && inference_ModelConfig_has_ensemble_scheduling(merged))
    err = api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': " SET_CONFIG_SOURCE
                        ": ensemble scheduling cannot be set for model '%s' whose "
                        "platform is not ensemble",
                        model->name, model->name);
  if (err == NULL && !upb_Arena_Fuse(model->arena, tmp)) SRV_FATAL("arena fuse failed");
  upb_Arena_Free(tmp); /* fused: lives on with the model's arena */
  if (err != NULL) return err;
  inference_ModelConfig *old = model->config;
  model->config = merged;
  srv_status_t *st = srv_model_config_complete(model, SET_CONFIG_SOURCE);
  if (st != NULL) {
    model->config = old;
    srv_status_t *again = srv_model_config_complete(model, SET_CONFIG_SOURCE);
    if (again != NULL)
      SRV_FATAL("model '%s': its config no longer completes", model->name);
    err = api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s", srv_status_message(st));
    srv_status_free(st);
    return err;
  }
  model->config_replaced = true;
  free(model->config_json);
  model->config_json = srv_config_json_encode(
      (const upb_Message *)merged, cfg_model_config_def(), &model->config_json_len);
  return NULL;
}
