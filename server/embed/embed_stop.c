/* Shutting an application's server down: TRITONSERVER_ServerStop,
 * TRITONSERVER_ServerDelete and TRITONSERVER_ServerSetExitTimeout. The
 * order is nereid_main's without frontends (server/README.md, "Shutdown
 * order"): EXITING, wait for the API calls inside the server, stop the
 * models within the exit timeout, else cancel every request and give the
 * backends a grace period. Stop and Delete take the server's `life` lock,
 * so any number of application threads may call them; never an actor's
 * thread (a worker or a backend's), which the stop would wait for. */
#include <sched.h>
#include <stdlib.h>

#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/embed/embed.h"

/* As nereid_main's: how long backends get, once the exit timeout expired
 * and every request was cancelled, to give their requests back. */
#define EXIT_GRACE_SECS 5

/* Waits until no API call is inside the server, up to the deadline. The
 * calls are short (a lookup, a view, a submit): a load waits for its
 * answer outside the count. */
static bool calls_wait(srv_embed_t *e, uint64_t deadline) {
  /* Acquire: pairs with srv_embed_leave's release. */
  while (atomic_load_explicit(&e->inflight, memory_order_acquire) != 0) {
    if (srv_deadline_passed(deadline)) return false;
    sched_yield();
  }
  return true;
}

/* True when every model stopped; err set when the exit timeout expired. */
static bool models_stop(srv_embed_t *e, TRITONSERVER_Error **err) {
  unsigned secs = atomic_load_explicit(&e->exit_timeout_secs, memory_order_relaxed);
  uint64_t deadline = srv_deadline_in_secs((long)secs);
  bool calls = calls_wait(e, deadline);
  bool told = calls && srv_core_stop_until(&e->srv, deadline);
  if (told && srv_core_wait_until(&e->srv, deadline)) return true;
  SRV_WARN("exit timeout (%u s) reached: cancelling every request still in flight; "
           "backends have %d s to give them back",
           secs, EXIT_GRACE_SECS);
  srv_core_cancel(&e->srv);
  deadline = srv_deadline_in_secs(EXIT_GRACE_SECS);
  if (!calls) calls = calls_wait(e, deadline);
  if (calls && !told) told = srv_core_stop_until(&e->srv, deadline);
  bool done = told && srv_core_wait_until(&e->srv, deadline);
  *err = api_error_new(TRITONSERVER_ERROR_INTERNAL,
                       "Exit timeout expired (%u s): in-flight requests were cancelled%s",
                       secs,
                       done ? "" : "; models still running, the server cannot be freed");
  return done;
}

/* The shutdown, once; the caller holds e->life. */
static TRITONSERVER_Error *stop_locked(srv_embed_t *e) {
  if (e->stopped) return NULL; /* as Triton: stopping twice is no error */
  e->stopped = true;
  /* seq_cst: see find_and_count in embed_server.c. */
  atomic_store_explicit(&e->srv.state, SRV_STATE_EXITING, memory_order_seq_cst);
  TRITONSERVER_Error *err = NULL;
  e->models_stopped = models_stop(e, &err);
  SRV_INFO("in-process server stopped%s",
           err == NULL ? "" : " (in-flight requests were cancelled)");
  return err;
}

/* The server behind `server` if an application made it: the process's
 * own server cannot be stopped from a backend. NULL is no error, as in
 * Triton: *e stays NULL. */
static TRITONSERVER_Error *embedded(TRITONSERVER_Server *server, const char *fn,
                                    srv_embed_t **e) {
  *e = NULL;
  if (server == NULL) return NULL;
  TRITONSERVER_Error *err = srv_embed_thread_check(fn, false);
  if (err != NULL) return err;
  *e = srv_embed_find(server);
  if (*e != NULL) return NULL;
  return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                       "%s: this is the nereid process's server (given to backends); only "
                       "a server made by TRITONSERVER_ServerNew can be stopped",
                       fn);
}

TRITONSERVER_Error *TRITONSERVER_ServerStop(TRITONSERVER_Server *server) {
  srv_embed_t *e;
  TRITONSERVER_Error *err = embedded(server, "TRITONSERVER_ServerStop", &e);
  if (err != NULL || e == NULL) return err;
  pthread_mutex_lock(&e->life);
  err = stop_locked(e);
  pthread_mutex_unlock(&e->life);
  return err;
}

/* Stops the server if it runs. A stop whose exit timeout expired is
 * answered as Triton's Delete answers it, with the error and the server
 * still there; a later Delete frees it once its models stopped. Models
 * that never stop leave the server abandoned: finalized where it can be,
 * never freed, an error. */
TRITONSERVER_Error *TRITONSERVER_ServerDelete(TRITONSERVER_Server *server) {
  srv_embed_t *e;
  TRITONSERVER_Error *err = embedded(server, "TRITONSERVER_ServerDelete", &e);
  if (err != NULL || e == NULL) return err;
  pthread_mutex_lock(&e->life);
  bool first = !e->stopped;
  err = stop_locked(e);
  if (err != NULL && first) {
    pthread_mutex_unlock(&e->life);
    return err;
  }
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  if (!e->models_stopped)
    e->models_stopped = srv_core_wait_until(&e->srv, srv_deadline_in_secs(EXIT_GRACE_SECS));
  srv_embed_unregister(e);
  pthread_mutex_unlock(&e->life);
  if (!e->models_stopped) {
    srv_core_abandon(&e->srv);
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "TRITONSERVER_ServerDelete: models still run past the exit "
                         "timeout and its grace period; the server is abandoned, not "
                         "freed (the log names what is left)");
  }
  calls_wait(e, SRV_DEADLINE_NONE); /* calls that found it before it left the list */
  srv_core_quiesce(&e->srv);
  srv_core_free(&e->srv);
  srv_embed_free(e);
  return NULL;
}

/* Read by the next stop; NULL and the process's server are no error, as in
 * Triton (whose process server is not the caller's either). */
TRITONSERVER_Error *TRITONSERVER_ServerSetExitTimeout(TRITONSERVER_Server *server,
                                                      unsigned int timeout) {
  if (server == NULL) return NULL;
  srv_embed_t *e = srv_embed_find(server);
  if (e == NULL)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "TRITONSERVER_ServerSetExitTimeout: this is the nereid process's "
                         "server; its exit timeout is --exit-timeout-secs");
  /* Relaxed: a setting read once by the stop, which takes the life lock. */
  atomic_store_explicit(&e->exit_timeout_secs, timeout, memory_order_relaxed);
  return NULL;
}
