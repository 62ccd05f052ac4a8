/* Model configuration from the server: ModelConfig, SerializeToJson, parse.
 * Server loading thread. */
#include "backends/common/config_fetch.h"

#include "backends/common/error.h"

TRITONSERVER_Error *bk_model_config_fetch(TRITONBACKEND_Model *model,
                                          bk_model_config_t *cfg) {
  const char *model_name = "?";
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &model_name));
  TRITONSERVER_Message *msg = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &msg));
  const char *json = NULL;
  size_t len = 0;
  TRITONSERVER_Error *err = TRITONSERVER_MessageSerializeToJson(msg, &json, &len);
  char why[BK_ERROR_MAX - 64];
  /* The parsed config copies what it keeps, so the message can go now. */
  if (err == NULL && !bk_model_config_parse(json, len, cfg, why, sizeof why)) {
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': %s", model_name, why);
  }
  BK_LOG_IF_ERROR(TRITONSERVER_MessageDelete(msg), "deleting the config message");
  return err;
}
