/* The life of a server an application makes: TRITONSERVER_ServerNew starts
 * the core (no network frontends: an in-process server serves none),
 * ServerStop shuts it down in server/README.md's order within its exit
 * timeout, ServerDelete frees it. The live list tells those servers from
 * the nereid process's own, which backends receive and may query but not
 * stop. The application's threads; never an actor's (see
 * srv_embed_thread_check). */
#include <stdlib.h>
#include <string.h>

#include "actors/actor.h"
#include "server/common/log.h"
#include "server/api/error_status.h"
#include "server/common/memory.h"
#include "server/embed/embed.h"

/* ---- The live list: servers made by ServerNew and not yet deleted -------- */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static srv_embed_t *live;
void srv_embed_register(srv_embed_t *e) {
  pthread_mutex_lock(&live_lock);
  e->next = live;
  live = e;
  pthread_mutex_unlock(&live_lock);
}

void srv_embed_unregister(srv_embed_t *e) {
  pthread_mutex_lock(&live_lock);
  for (srv_embed_t **p = &live; *p != NULL; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  pthread_mutex_unlock(&live_lock);
}

/* The live list's entry for `server`, or NULL; the caller holds the lock. */
static srv_embed_t *lookup_locked(TRITONSERVER_Server *server) {
  srv_embed_t *e = live;
  while (e != NULL && &e->srv != (srv_server_t *)server) e = e->next;
  return e;
}

srv_embed_t *srv_embed_find(TRITONSERVER_Server *server) {
  pthread_mutex_lock(&live_lock);
  srv_embed_t *e = lookup_locked(server);
  pthread_mutex_unlock(&live_lock);
  return e;
}

/* The embedded server behind `server`, with the call counted in, or NULL
 * (the nereid process's server). Counted under the lock, so that a Delete,
 * which unregisters first, then waits for the count, sees every call that
 * found the server. */
static srv_embed_t *find_and_count(TRITONSERVER_Server *server) {
  pthread_mutex_lock(&live_lock);
  srv_embed_t *e = lookup_locked(server);
  /* seq_cst: with Stop's store of EXITING and its load of the count, one of
   * the two sees the other (a Dekker pair): either this call sees EXITING
   * and leaves, or Stop waits for it. */
  if (e != NULL) atomic_fetch_add_explicit(&e->inflight, 1, memory_order_seq_cst);
  pthread_mutex_unlock(&live_lock);
  return e;
}

TRITONSERVER_Error *srv_embed_enter(TRITONSERVER_Server *server, const char *fn,
                                    srv_embed_t **out) {
  *out = NULL;
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  srv_embed_t *e = find_and_count(server);
  if (e != NULL && atomic_load_explicit(&e->srv.state, memory_order_seq_cst) ==
                       SRV_STATE_EXITING) {
    srv_embed_leave(e);
    return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE, "Server exiting");
  }
  *out = e;
  return NULL;
}

void srv_embed_leave(srv_embed_t *e) {
  /* Release: what the call did happens before Stop sees the count drop. */
  if (e != NULL) atomic_fetch_sub_explicit(&e->inflight, 1, memory_order_release);
}

TRITONSERVER_Error *srv_embed_enter_ready(TRITONSERVER_Server *server, const char *fn,
                                          srv_embed_t **e) {
  TRITONSERVER_Error *err = srv_embed_enter(server, fn, e);
  if (err != NULL || srv_server_state((srv_server_t *)server) == SRV_STATE_READY)
    return err;
  srv_embed_leave(*e);
  *e = NULL;
  return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
}

TRITONSERVER_Error *srv_embed_thread_check(const char *fn, bool pinned_ok) {
  act_actor_t *self = act_self();
  if (self == NULL || (pinned_ok && self->pin != NULL)) return NULL;
  return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE,
                       "%s blocks until the server answers; it cannot be called from %s, "
                       "whose thread that answer may need",
                       fn,
                       self->pin != NULL ? "a backend's thread (model or instance)"
                                         : "a callback the server runs (an actor's turn)");
}

/* ---- ServerNew -------------------------------------------------------------- */

void srv_embed_free(srv_embed_t *e) {
  srv_options_free(&e->opt);
  pthread_mutex_destroy(&e->life);
  free(e);
}

/* The options, as nereid_main takes its flags, plus what only an
 * embedding program has: no poll timer (Triton's in-process server polls
 * when asked), no frontends. */
static srv_status_t *options_take(srv_embed_t *e, const TRITONSERVER_ServerOptions *o) {
  srv_status_t *st = srv_embed_options_build(o, &e->opt);
  if (st == NULL) st = srv_options_validate(&e->opt);
  e->opt.repository_poll_secs = 0;
  return st;
}

/* Starts the core; on error nothing runs and *err says why. */
static TRITONSERVER_Error *core_start(srv_embed_t *e) {
  bool all_loaded = false;
  srv_status_t *st = srv_core_start(&e->srv, &e->opt, &all_loaded);
  if (st != NULL) return api_error_from_status(st);
  if (all_loaded || !e->opt.exit_on_error) {
    if (!all_loaded) SRV_ERROR("failed to load all models");
    return NULL;
  }
  srv_core_stop(&e->srv);
  srv_core_free(&e->srv);
  return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                       "failed to load all models (exit on error: "
                       "TRITONSERVER_ServerOptionsSetExitOnError(false) serves the others)");
}

TRITONSERVER_Error *TRITONSERVER_ServerNew(TRITONSERVER_Server **server,
                                           TRITONSERVER_ServerOptions *options) {
  const char *fn = "TRITONSERVER_ServerNew";
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (options == NULL) return SRV_EMBED_NULL(fn, "options");
  TRITONSERVER_Error *err = srv_embed_thread_check(fn, false);
  if (err != NULL) return err;
  /* Any number of servers at once, as in Triton: what the process has once
   * (backends, the CUDA pools) counts its servers (embed.md). */
  srv_embed_t *e = calloc(1, sizeof *e);
  if (e == NULL) SRV_FATAL("out of memory");
  pthread_mutex_init(&e->life, NULL);
  srv_status_t *st = options_take(e, options);
  if (st != NULL) {
    srv_embed_free(e);
    return api_error_from_status(st);
  }
  atomic_init(&e->inflight, 0);
  atomic_init(&e->exit_timeout_secs, (unsigned)e->opt.exit_timeout_secs);
  err = core_start(e);
  if (err != NULL) {
    srv_embed_free(e);
    return err;
  }
  /* Release: a thread that sees READY sees the started core. */
  atomic_store_explicit(&e->srv.state, SRV_STATE_READY, memory_order_release);
  srv_embed_register(e);
  SRV_INFO("in-process server started (%u workers, %zu model repositories)",
           act_runtime_workers(e->srv.runtime), e->opt.model_repository_count);
  *server = (TRITONSERVER_Server *)&e->srv;
  return NULL;
}
