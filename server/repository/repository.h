/* The model repository: an actor that owns every model's life cycle (load,
 * reload, unload, polling) and publishes the registry, plus a pool of
 * loader threads (pinned actors) that do the blocking work — reading
 * configs, backend initialize and finalize, scanning folders. Requests
 * never wait for any of it: they read the registry. See repository.md. */
#ifndef NEREID_SERVER_REPOSITORY_REPOSITORY_H
#define NEREID_SERVER_REPOSITORY_REPOSITORY_H

#include <stdbool.h>
#include <stdint.h>

#include "actors/actor.h"
#include "server/common/status.h"
#include "server/repository/load_override.h"
#include "server/repository/model_name.h"
#include "server/repository/registry.h"
#include "server/repository/repo_scan.h"

struct srv_server;
typedef struct srv_repository srv_repository_t;

typedef enum {
  SRV_REPO_LOAD = 1,
  SRV_REPO_UNLOAD,
  /* Scan the repositories now and apply what changed, as poll mode's
   * timer does; answered once the loads and unloads it started are
   * answered (TRITONSERVER_ServerPollModelRepository). `name` unused. */
  SRV_REPO_POLL,
} srv_repo_op_kind_t;

/** A load or unload asked of the repository. The asker fills it and keeps
 *  it, and the bytes its override references, valid until `done` runs. */
typedef struct srv_repo_op {
  act_msg_t msg; /* to the repository actor; the asker's again in `done` */
  srv_repo_op_kind_t kind;
  const char *name;
  /* With --model-namespacing, the namespace (repository root) meant; NULL
   * means every namespace holding the name, as tritonserver loads and
   * unloads a name in each repository that has it. Askers leave NULL. */
  const char *ns;
  srv_load_override_t override; /* LOAD: all zero to load from the repositories */
  /* UNLOAD: also unload the models the ensemble's steps use, where no
   * other ensemble uses them and no asker loaded them (as tritonserver's
   * unload_dependents). Ensembles using the model are unloaded anyway. */
  bool unload_dependents;
  /** Called once, on the repository actor's thread, when the operation is
   *  over: `status` is NULL on success, else the reason (the asker frees
   *  it). Must not block: send a message, post a semaphore. */
  void (*done)(struct srv_repo_op *op);
  void *ctx; /* the asker's */
  srv_status_t *status;
  struct srv_repo_op *next; /* the repository's while the op is queued */
  int origin;               /* the repository's own (repo_internal.h): askers leave 0 */
  bool part;                /* the repository's: one namespace's share of an op */
} srv_repo_op_t;

/** Starts the repository actor and its loader threads over an empty
 *  registry (srv_repository_registry). Main thread, before serving. */
srv_repository_t *srv_repository_new(struct srv_server *srv);

srv_registry_t *srv_repository_registry(srv_repository_t *r);

/** Queues an operation. Any thread; never blocks. Operations on one model
 *  run one after the other in arrival order, except that a load arriving
 *  while the same plain load runs joins it (the model loads once). A load
 *  of a name that breaks srv_model_name_check is answered INVALID_ARGUMENT
 *  and an unload of a name the repository does not know is answered OK,
 *  neither leaving a trace; a load that fails for a name with no folder
 *  (or with an override, never loaded) leaves none either. */
void srv_repository_submit(srv_repository_t *r, srv_repo_op_t *op);

/** Adds the repository root `path` (a folder), with `n` name mappings:
 *  <path>/<dirs[i]> is served as model models[i] (and not under its folder
 *  name). INVALID_ARGUMENT when path is not a folder or a name breaks
 *  srv_model_name_check; ALREADY_EXISTS when path is a root already or a
 *  model name is mapped already (Triton's texts). Models loaded already
 *  stay as they are; later loads see the root. The caller checks the
 *  control mode (explicit only, as Triton). Any thread. */
srv_status_t *srv_repository_register(srv_repository_t *r, const char *path,
                                      const char *const *dirs, const char *const *models,
                                      size_t n);

/** Removes the root `path` (one of --model-repository's too) and its
 *  mappings; INVALID_ARGUMENT when it is not a root. Loaded models stay.
 *  Any thread. */
srv_status_t *srv_repository_unregister(srv_repository_t *r, const char *path);

/** The model folders of the roots now, as srv_repo_scan lists them, with
 *  mapped folders under their model names. Blocks (reads the folders). Any
 *  thread. */
void srv_repository_listing(srv_repository_t *r, srv_repo_listing_t *out);

/** Loads what the control mode loads at start-up (none, poll: every model
 *  in the repositories; explicit: the --load-model ones), in parallel, and
 *  waits. Then, in poll mode, starts polling every repository_poll_secs
 *  (0: only when asked, with SRV_REPO_POLL). Returns false when a model
 *  failed to load. Main thread. */
bool srv_repository_start(srv_repository_t *r);

/** Shutdown, first half: refuses new operations, lets running loads and
 *  unloads finish (up to the deadline, common/deadline.h), stops polling
 *  and the loader threads, and sends the stop to every model still alive:
 *  each answers what waits in its queue and stops once its instances have
 *  finished their batch. False when a load or unload still ran at the
 *  deadline (nothing was stopped; a later call goes on waiting). Main
 *  thread, once the frontends stopped sending requests or the exit timeout
 *  expired. */
bool srv_repository_stop(srv_repository_t *r, uint64_t deadline_ns);

/** Waits up to the deadline for every model to stop (instances finalized,
 *  scheduler stopped); true when all did. It may be called again. Main
 *  thread, after srv_repository_stop returned true. */
bool srv_repository_wait(srv_repository_t *r, uint64_t deadline_ns);

/** For an exit that cannot wait any longer (after srv_repository_wait
 *  returned false, or srv_repository_stop did): finalizes the models that
 *  stopped and the backends that no other model uses; logs the models that
 *  did not stop and leaves them and their backends as they are. Frees
 *  nothing: the process exits next. Main thread. */
void srv_repository_abandon(srv_repository_t *r);

/** Second half, after act_runtime_quiesce: finalizes and frees every model
 *  (waiting, without bound, for those srv_repository_wait did not see stop),
 *  removes private model folders, frees the registry, then finalizes the
 *  backends. Main thread. */
void srv_repository_free(srv_repository_t *r);

#endif
