/* Completion and validation of a model's configuration, as Triton does on
 * load: defaults filled in (name, instance groups), and a precise reason
 * for whatever is wrong. Runs on the loading thread. */
#ifndef NEREID_SERVER_MODEL_MODEL_CHECK_H
#define NEREID_SERVER_MODEL_MODEL_CHECK_H

#include "server/model/model.h"

/** Checks m->config against the limits (config_limits.h), completes it in
 *  place and derives m's tensor specs, batch size and transaction policy
 *  from it. `source` names where the config came from in errors (the
 *  config.pbtxt path, "config override"...). */
srv_status_t *srv_model_config_complete(srv_model_t *m, const char *source);

/** When the config named no instance group, uses the backend's first
 *  preferred group that this server can run (no GPU: CPU or MODEL kinds),
 *  as Triton does. True when the config changed. After the backend is
 *  attached, on the loading thread. */
bool srv_model_groups_prefer(srv_model_t *m);

#endif
