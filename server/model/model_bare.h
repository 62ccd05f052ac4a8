/* A model version made from its configuration alone, for fuzz targets and
 * tests that need what a loaded model looks like to requests without a
 * server: the config copied, completed and checked as loading does, its
 * JSON for backends, the batcher's and the statistics' settings. No
 * backend, no instances, no actor: it can be described, looked up in a
 * registry and checked against (infer_check.h), never enqueued. Only the
 * thread that made it touches it. */
#ifndef NEREID_SERVER_MODEL_MODEL_BARE_H
#define NEREID_SERVER_MODEL_MODEL_BARE_H

#include <stddef.h>

#include "model_config.upb.h"
#include "server/common/status.h"
#include "server/model/model_view.h"

/** Version 1 of model `name` with a copy of `config`, taken through every
 *  step of srv_model_load that needs no backend: srv_model_config_complete,
 *  the config's JSON, srv_batcher_setup, the statistics tables. It starts
 *  with one reference. On error nothing is left and the status says why,
 *  as loading would. */
srv_status_t *srv_model_bare_new(const char *name, const inference_ModelConfig *config,
                                 srv_model_t **out);

/** srv_model_bare_new from config text (protobuf text format), for tests
 *  that spell their model out: a status that says why when the text does
 *  not parse or the model would not load. */
srv_status_t *srv_model_bare_from_text(const char *name, const char *pbtxt,
                                       srv_model_t **out);

/** The completed config as TRITONBACKEND_ModelConfig gives it to backends
 *  (NUL-terminated; *len its length). */
const char *srv_model_bare_config_json(const srv_model_t *m, size_t *len);

/** Frees a model made by srv_model_bare_new, whatever references remain
 *  (a registry that holds it must be dropped first, or never freed). */
/** Whether m is an ensemble (its step graph compiled; no instances). */
bool srv_model_bare_is_ensemble(const srv_model_t *m);

void srv_model_bare_free(srv_model_t *m);

#endif
