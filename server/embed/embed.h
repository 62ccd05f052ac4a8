/* What the files of the embedding frontend share: the options object, the
 * server an application made with TRITONSERVER_ServerNew, and the entry
 * and exit of every API call on a server (see embed.md). Private to this
 * folder. */
#ifndef NEREID_SERVER_EMBED_EMBED_H
#define NEREID_SERVER_EMBED_EMBED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "server/api/error.h"
#include "server/core/core.h"
#include "triton/core/tritonserver.h"

/** INVALID_ARG for a NULL argument, naming the function and argument. */
#define SRV_EMBED_NULL(fn, what) \
  api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: %s must not be NULL", fn, what)

/** TRITONSERVER_ServerOptions: the settings as command-line flags
 *  ("--flag=value", in the order set), so that srv_options_parse gives the
 *  command line's defaults and checks; plus what has no flag. One thread
 *  at a time (the application's), as in Triton. */
struct TRITONSERVER_ServerOptions {
  char **args; /* args[0] is the program name srv_options_parse skips */
  size_t arg_count, arg_cap;
  char **startup_models; /* used in explicit mode only, as Triton */
  size_t startup_model_count;
};

/** Adds --flag=<fmt...> to o's flags if the list still parses, else
 *  INVALID_ARG naming `fn` and the flag's own complaint. */
TRITONSERVER_Error *srv_embed_flag_add(TRITONSERVER_ServerOptions *o, const char *fn,
                                       const char *flag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** The flags of `o` parsed into *opt (the caller frees it with
 *  srv_options_free, also on error), with the startup models as
 *  --load-model in explicit mode. */
srv_status_t *srv_embed_options_build(const TRITONSERVER_ServerOptions *o,
                                      srv_options_t *opt);

/** A server made by TRITONSERVER_ServerNew. `srv` comes first: the
 *  TRITONSERVER_Server * the application holds points at it, so the BLS
 *  functions (InferAsync, InferenceRequestNew...) take it as they take the
 *  nereid process's server. */
typedef struct srv_embed {
  srv_server_t srv;
  srv_options_t opt; /* srv.options points here */
  /* Calls inside the server right now (srv_embed_enter); Stop waits for
   * them to leave once the state is EXITING. */
  _Atomic unsigned inflight;
  _Atomic unsigned exit_timeout_secs; /* TRITONSERVER_ServerSetExitTimeout */
  pthread_mutex_t life;               /* Stop and Delete, one at a time */
  bool stopped;                       /* life's: the shutdown ran */
  bool models_stopped;                /* life's: every model stopped */
  struct srv_embed *next;             /* the live list's */
} srv_embed_t;

/** Adds e to the live servers (ServerNew, once it is READY). */
void srv_embed_register(srv_embed_t *e);

/** Removes e from them; later srv_embed_enter calls do not find it. */
void srv_embed_unregister(srv_embed_t *e);

/** The live server made by ServerNew at `server`, or NULL (the nereid
 *  process's server, or NULL). Not counted: for Stop, Delete and
 *  SetExitTimeout, which the application does not call concurrently with
 *  Delete of the same server (Triton's rule as well). */
srv_embed_t *srv_embed_find(TRITONSERVER_Server *server);

/** Frees what ServerNew allocated (the core already freed). */
void srv_embed_free(srv_embed_t *e);

/** The start of every API call on a server: INVALID_ARG when `server` is
 *  NULL (naming `fn`); for a server made by ServerNew, counts the call in
 *  (*e is it; NULL for the nereid process's server, which runs as long as
 *  its backends do) and answers UNAVAILABLE "Server exiting" once it
 *  stops. A call that got NULL back ends with srv_embed_leave(*e). */
TRITONSERVER_Error *srv_embed_enter(TRITONSERVER_Server *server, const char *fn,
                                    srv_embed_t **e);
void srv_embed_leave(srv_embed_t *e);

/** srv_embed_enter for the calls that need a READY server (model queries
 *  and control, as Triton's GetModel, LoadModel...): else, having left,
 *  UNAVAILABLE "Server not ready". */
TRITONSERVER_Error *srv_embed_enter_ready(TRITONSERVER_Server *server, const char *fn,
                                          srv_embed_t **e);

/** For calls that block until an actor answers: an error naming `fn` when
 *  the calling thread is an actor worker (or runs an actor's turn inline),
 *  whose block could be the one that answer needs. With pinned_ok, a
 *  pinned actor's thread (a backend's Execute or Initialize) may block,
 *  as BLS does; without, no thread of a server may. */
TRITONSERVER_Error *srv_embed_thread_check(const char *fn, bool pinned_ok);

#endif
