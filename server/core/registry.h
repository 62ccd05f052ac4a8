/* The models the server knows: each name with its ready versions, or the
 * reason it failed to load. Built by the main thread before serving starts
 * and read-only afterwards, so lookups on the request path take no lock.
 * (Loading and unloading while serving come with the repository extension.) */
#ifndef NEREID_SERVER_CORE_REGISTRY_H
#define NEREID_SERVER_CORE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "server/core/model.h"

typedef struct {
  char *name;
  char *reason;           /* why it is unavailable; NULL when it loaded */
  srv_model_t **versions; /* ready versions, ascending */
  size_t version_count;
} srv_registry_entry_t;

typedef struct srv_registry srv_registry_t;

/** Scans every --model-repository root and loads every model (Triton's
 *  model control mode "none"). A model that fails is recorded with its
 *  reason; the others load. Main thread. */
srv_registry_t *srv_registry_load(struct srv_server *srv);

/** The entry named name (length len), or NULL. Any thread. */
const srv_registry_entry_t *srv_registry_find(const srv_registry_t *r, const char *name,
                                              size_t len);

/** Version `version` of an entry, or its latest when version < 0; NULL
 *  when not loaded. Any thread. */
srv_model_t *srv_registry_version(const srv_registry_entry_t *e, int64_t version);

size_t srv_registry_count(const srv_registry_t *r);
const srv_registry_entry_t *srv_registry_at(const srv_registry_t *r, size_t i);

/** True when every model loaded (readiness with strict readiness). */
bool srv_registry_all_ready(const srv_registry_t *r);

/** Stops every model's actors (main thread, after the frontend stopped);
 *  then, after the runtime's quiesce, srv_registry_free finalizes and
 *  frees them, and finalizes the backends. */
void srv_registry_stop(srv_registry_t *r);
void srv_registry_free(srv_registry_t *r);

#endif
