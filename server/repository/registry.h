/* The published picture of the models: for each model name its state, its
 * ready versions and why anything failed. One writer (the repository
 * actor) builds a new immutable view and publishes it with one atomic
 * store; readers on any thread (call actors, backend threads) look models
 * up without a lock, inside an epoch section that keeps the view they read
 * alive. A replaced view is freed once no reader can hold it. */
#ifndef NEREID_SERVER_REPOSITORY_REGISTRY_H
#define NEREID_SERVER_REPOSITORY_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"
#include "server/model/model_view.h"

/* A model's state as RepositoryIndex spells it. */
typedef enum {
  SRV_MODEL_STATE_UNKNOWN = 0, /* never loaded (index: empty state) */
  SRV_MODEL_STATE_LOADING,
  SRV_MODEL_STATE_READY,
  SRV_MODEL_STATE_UNLOADING,
  SRV_MODEL_STATE_UNAVAILABLE,
} srv_model_state_t;

/** "READY", "LOADING"... ("" for UNKNOWN). */
const char *srv_model_state_name(srv_model_state_t s);

/** The reason tritonserver gives a model after its unload. */
#define SRV_MODEL_REASON_UNLOADED "unloaded"

/** True for a model that is not loaded on purpose: never loaded, or
 *  unloaded (UNAVAILABLE with SRV_MODEL_REASON_UNLOADED and no version).
 *  Such a model counts neither as failed nor as ready. */
bool srv_model_state_is_unloaded(srv_model_state_t state, const char *reason,
                                 size_t version_count);

/** A version that failed to load. */
typedef struct {
  int64_t version;
  char *reason;
} srv_version_failure_t;

/** One model in a view. Immutable once published. */
typedef struct {
  char *name;
  /* Its namespace with --model-namespacing (the repository root it comes
   * from; "" for a load with file overrides), else NULL. Several entries
   * may then have one name, never one (name, ns) pair. */
  char *ns;
  srv_model_state_t state;
  char *reason;           /* UNAVAILABLE: why (or SRV_MODEL_REASON_UNLOADED) */
  srv_model_t **versions; /* ready versions, ascending */
  size_t version_count;
  srv_version_failure_t *failures; /* versions that failed, ascending */
  size_t failure_count;
} srv_registry_entry_t;

typedef struct srv_registry srv_registry_t;
typedef struct srv_registry_view srv_registry_view_t;

/** An empty registry. Main thread, at start-up. */
srv_registry_t *srv_registry_new(void);

/** Frees the registry, its current view and every retired one, without
 *  touching the models (the repository has stopped and freed them all).
 *  No reader may be active. Main thread, at exit. */
void srv_registry_free(srv_registry_t *r);

/* ---- The writer: one thread at a time (the repository actor) ---------- */

/** Publishes a view made of copies of entries[0..count) (names, reasons and
 *  version arrays are copied; the models are shared). The registry takes a
 *  reference on every model that enters it (was in no entry of the current
 *  view) and drops its reference on every model that leaves it, once no
 *  reader can still reach that model through an older view. */
void srv_registry_publish(srv_registry_t *r, const srv_registry_entry_t *entries,
                          size_t count);

/** Frees views that no reader can hold any more (and drops their models'
 *  references). true when nothing is left waiting. Never blocks. */
bool srv_registry_reclaim(srv_registry_t *r);

/* ---- Readers: any thread, lock-free ----------------------------------- */

/** Enters a read section and returns the current view, valid until
 *  srv_registry_view_end. Sections nest; keep them short (they delay the
 *  reclamation of replaced views), and never block inside one. */
const srv_registry_view_t *srv_registry_view_begin(srv_registry_t *r);
void srv_registry_view_end(srv_registry_t *r);

size_t srv_registry_view_count(const srv_registry_view_t *v);
/** Entries sorted by name, then namespace (NULL first). */
const srv_registry_entry_t *srv_registry_view_at(const srv_registry_view_t *v, size_t i);
/** The entry named exactly by the `len` bytes at `name` (any bytes, NUL
 *  included; NULL is allowed when len is 0), or NULL. With namespaces, the
 *  first of that name (the others follow it in srv_registry_view_at's
 *  order). */
const srv_registry_entry_t *srv_registry_view_find(const srv_registry_view_t *v,
                                                   const char *name, size_t len);
/** The entry of namespace `ns` (NULL: none) and name `name` (NUL-ended),
 *  or NULL. */
const srv_registry_entry_t *srv_registry_view_find_ns(const srv_registry_view_t *v,
                                                      const char *ns, const char *name);
/** The entry holding model `m` among its versions, or NULL. */
const srv_registry_entry_t *srv_registry_view_find_model(const srv_registry_view_t *v,
                                                         const srv_model_t *m);

/** Version `version` of an entry, or its latest when version < 0; NULL
 *  when that version is not ready. */
srv_model_t *srv_registry_entry_version(const srv_registry_entry_t *e, int64_t version);

/** The model `name` (`len` bytes, as for srv_registry_view_find) version
 *  `version` (< 0: latest) with a reference the caller drops with
 *  srv_model_unref; or NULL and a status with Triton's wording: what is
 *  missing (UNAVAILABLE), or an empty name (INVALID_ARGUMENT). With
 *  namespaces, a name that more than one namespace has (not counting
 *  unloaded entries) is INVALID_ARGUMENT, Triton's "model namespace must
 *  be provided to resolve ambiguity". */
srv_status_t *srv_registry_acquire(srv_registry_t *r, const char *name, size_t len,
                                   int64_t version, srv_model_t **out);

/** srv_registry_acquire of the model of namespace `ns` (NULL: none) and
 *  name `name` (NUL-ended): never ambiguous. An ensemble's step, bound to
 *  the namespace its load resolved. */
srv_status_t *srv_registry_acquire_ns(srv_registry_t *r, const char *ns, const char *name,
                                      int64_t version, srv_model_t **out);

/** A protocol's version string (`len` bytes): empty means -1 (the
 *  latest), else a non-negative decimal integer. False when it is not. */
bool srv_version_parse(const char *version, size_t len, int64_t *out);

/** srv_registry_acquire with the version as a protocol spells it (a
 *  string, empty for the latest): a malformed one is INVALID_ARGUMENT,
 *  with the text every frontend gives. */
srv_status_t *srv_registry_lookup(srv_registry_t *r, const char *name, size_t len,
                                  const char *version, size_t version_len,
                                  srv_model_t **out);

/** ModelReady's answer for model `name` at `version` (as
 *  srv_registry_lookup takes them): *ready, or a status for what the RPC
 *  refuses (a malformed version, an empty name). A model that is missing,
 *  not ready or ambiguous (namespaces) is not ready, as tritonserver
 *  answers. Any thread. */
srv_status_t *srv_registry_ready(srv_registry_t *r, const char *name, size_t len,
                                 const char *version, size_t version_len, bool *ready);

/** True when no model is failed or still loading without a ready version
 *  (readiness with --strict-readiness). Unloaded models do not count. */
bool srv_registry_all_ready(srv_registry_t *r);

#endif
