/* Getting a model's configuration from the server and parsing it. Called at
 * model load (TRITONBACKEND_ModelInitialize), on the server's loading thread. */
#ifndef NEREID_BACKENDS_COMMON_CONFIG_FETCH_H
#define NEREID_BACKENDS_COMMON_CONFIG_FETCH_H

#include "backends/common/model_config.h"
#include "triton/core/tritonbackend.h"

/** Asks the server for the config (TRITONBACKEND_ModelConfig, version 1) and
 * parses it into *cfg, which the caller frees with bk_model_config_free. An
 * unparsable config is INVALID_ARG naming the model. */
TRITONSERVER_Error *bk_model_config_fetch(TRITONBACKEND_Model *model,
                                          bk_model_config_t *cfg);

#endif
