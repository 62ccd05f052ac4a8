/* Triton's platforms, backends and default model file names: the
 * server-side completion of `platform`, `backend` and
 * `default_model_filename` that tritonserver runs on every config, with or
 * without auto-complete, and its checks that platform and backend agree.
 * Pure functions of a config and the model's folder; the loading thread. */
#ifndef NEREID_SERVER_MODEL_PLATFORM_H
#define NEREID_SERVER_MODEL_PLATFORM_H

#include "model_config.upb.h"
#include "server/common/status.h"

/** Fills what is empty of c's `backend`, `platform` and
 *  `default_model_filename`, as tritonserver does: from each other
 *  (pytorch <-> pytorch_libtorch, model.pt...), else from the model file
 *  found in the model's first version folder (`dir` is the model's folder;
 *  NULL or unreadable: none is inspected), else, when all three are empty,
 *  from the model's name (`model.<backend>`). Strings set are static or in
 *  `arena`. Errors (no backend can be found) name `source`, the config's
 *  origin. Ensembles are not for this function (their platform is set). */
srv_status_t *srv_platform_complete(inference_ModelConfig *c, const char *name,
                                    const char *dir, const char *source,
                                    upb_Arena *arena);

/** tritonserver's checks of a completed config's `platform` and `backend`:
 *  a platform no backend serves, or a platform and backend that name
 *  different frameworks, fail with Triton's text after "model 'N': source: ".
 *  A backend Triton does not know (a custom one) may go with any platform. */
srv_status_t *srv_platform_check(const inference_ModelConfig *c, const char *name,
                                 const char *source);

#endif
