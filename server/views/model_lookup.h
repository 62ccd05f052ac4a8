/* Finding the model version that a request names, with Triton's wording for
 * what is missing. Any thread (registry reads are lock-free). */
#ifndef NEREID_SERVER_VIEWS_MODEL_LOOKUP_H
#define NEREID_SERVER_VIEWS_MODEL_LOOKUP_H

#include "server/core/core.h"
#include "upb/upb.h"

/** The version `version` (empty: the latest) of model `name`, with a
 *  reference the caller drops (srv_model_unref): srv_registry_lookup on
 *  upb's views. */
srv_status_t *srv_model_lookup(srv_server_t *srv, upb_StringView name,
                               upb_StringView version, srv_model_t **out);

#endif
