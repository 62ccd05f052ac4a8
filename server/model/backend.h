/* Backends (TRITONBACKEND_Backend): shared libraries found by Triton's
 * lookup order, opened once, initialized once however many models and
 * servers use them, finalized when the last server using them is freed.
 * Loading threads acquire them; the table is guarded by a mutex, which is
 * off the request path. */
#ifndef NEREID_SERVER_MODEL_BACKEND_H
#define NEREID_SERVER_MODEL_BACKEND_H

#include <stdatomic.h>

#include "server/common/status.h"
#include "server/model/backend_attribute.h"
#include "server/options.h"
#include "triton/core/tritonbackend.h"

typedef TRITONSERVER_Error *backend_init_fn(TRITONBACKEND_Backend *);
typedef TRITONSERVER_Error *model_fn(TRITONBACKEND_Model *);
typedef TRITONSERVER_Error *instance_fn(TRITONBACKEND_ModelInstance *);
typedef TRITONSERVER_Error *attribute_fn(TRITONBACKEND_Backend *,
                                         TRITONBACKEND_BackendAttribute *);
typedef TRITONSERVER_Error *execute_fn(TRITONBACKEND_ModelInstance *,
                                       TRITONBACKEND_Request **, const uint32_t);

struct TRITONBACKEND_Backend {
  char *name;
  char *path; /* the library */
  char *dir;  /* its folder: the backend's artifacts */
  void *dl;
  backend_init_fn *initialize, *finalize; /* optional */
  model_fn *model_initialize, *model_finalize;
  instance_fn *instance_initialize, *instance_finalize;
  execute_fn *execute; /* required */
  void *state;
  TRITONBACKEND_ExecutionPolicy policy;
  char *config_json; /* {"cmdline":{...}} */
  /* What TRITONBACKEND_GetBackendAttribute said, right after Initialize. */
  struct TRITONBACKEND_BackendAttribute attributes;
  /* A model of it did not stop at its server's end. Atomic: servers end
   * on their own threads; relaxed, as each reads what its own thread set
   * or only a hint of another's. */
  _Atomic bool abandoned;
  /* The servers that acquired it (backends_lock's): the last to leave
   * finalizes it. */
  const void **users;
  size_t user_count, user_cap;
  struct TRITONBACKEND_Backend *next;
};

/** Finds backend `name` for the model in `model_dir` (version folder first,
 *  then the model folder, then <backend_dir>/<name>/), or the library named
 *  by `runtime` when non-empty; opens and initializes it on first use in
 *  the process, and counts `user` (the server) among its users. Loading
 *  threads; the returned backend lives until `user` calls
 *  srv_backends_finalize. */
srv_status_t *srv_backend_acquire(const char *name, const char *runtime,
                                  const char *model_dir, const char *version_dir,
                                  const srv_options_t *options, const void *user,
                                  TRITONBACKEND_Backend **out);

/** Server `user` lets go of its backends: each that no other server uses
 *  is finalized (TRITONBACKEND_Finalize) and closed. The server's main
 *  thread at its end, after every model of it is finalized. */
void srv_backends_finalize(const void *user);

/** For an end that abandons models (srv_model_abandon): as
 *  srv_backends_finalize, but a backend with an abandoned model keeps
 *  `user` and is logged, and what is finalized is neither freed nor
 *  closed, since an abandoned model's threads may still run until the
 *  process exits. Main thread, after every other model is finalized. */
void srv_backends_abandon(const void *user);

#endif
