/* The server core as a whole: options, actor runtime, model repository and
 * registry, and the life-cycle state that every frontend reads. Frontends
 * hold a pointer to it; the core knows nothing of them. Built and torn down
 * by the main thread; `state` and `cancelling` are the only fields written
 * while other threads run. */
#ifndef NEREID_SERVER_CORE_SERVER_H
#define NEREID_SERVER_CORE_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "actors/runtime.h"
#include "server/options.h"

#define NEREID_NAME "nereid"
#define NEREID_VERSION "0.1.0"
/* What ServerMetadata answers, so that unchanged Triton clients that check
 * the server's name and version accept Nereid: Triton's name and the
 * release whose API versions our headers carry (TRITONSERVER 1.34,
 * TRITONBACKEND 1.19). A client tells Nereid apart by the extension
 * NEREID_EXTENSION, the start-up log and `nereid --version`; Triton's
 * clients only look for the extensions they know in that list. */
#define TRITON_COMPAT_NAME "triton"
#define TRITON_COMPAT_VERSION "2.50.0"
#define NEREID_EXTENSION NEREID_NAME "(" NEREID_VERSION ")"

typedef struct srv_registry srv_registry_t;
typedef struct srv_shm srv_shm_t;
typedef struct srv_repository srv_repository_t;
typedef struct srv_tracer srv_tracer_t;
struct srv_rl;

typedef enum {
  SRV_STATE_STARTING = 0,
  SRV_STATE_READY = 1,
  SRV_STATE_EXITING = 2,
} srv_state_t;

typedef struct srv_server {
  const srv_options_t *options;
  act_runtime_t *runtime;
  srv_registry_t *registry;     /* lock-free reads; the repository publishes */
  srv_repository_t *repository; /* model life cycle */
  srv_shm_t *shm;               /* clients' shared-memory regions */
  srv_tracer_t *tracer;         /* trace settings, sampling, the trace file */
  struct srv_rl *limiter;       /* --rate-limit=execution_count; NULL when off */
  bool limiter_stopped;         /* the main thread's (srv_core_quiesce) */
  struct srv_cache *cache;      /* the response cache (../cache/); NULL: none */
  _Atomic int state;            /* srv_state_t */
  /* Set once, by srv_core_cancel when the exit timeout expired: every
   * request counts as cancelled from then on. */
  _Atomic bool cancelling;
} srv_server_t;

static inline srv_state_t srv_server_state(srv_server_t *srv) {
  /* Acquire: a reader that sees READY also sees what start-up built. */
  return (srv_state_t)atomic_load_explicit(&srv->state, memory_order_acquire);
}

/** Whether the exit timeout expired and every request is being cancelled
 *  (srv_core_cancel). Relaxed: a hint that backends poll, like a request's
 *  own cancel flag; what must see it (the model actors' stop) is ordered
 *  after it by the messages that follow. Any thread. */
static inline bool srv_server_cancelling(srv_server_t *srv) {
  return atomic_load_explicit(&srv->cancelling, memory_order_relaxed);
}

#endif
