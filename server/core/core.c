/* The core's life cycle (see core.h). Main thread only. */
#include "server/core/core.h"

#include <stdatomic.h>
#include <string.h>

#include "server/cache/cache.h"
#include "server/cache/cache_config.h"
#include "server/common/deadline.h"
#include "server/cuda/memory.h"
#include "server/sched/rate_limiter.h"
#include "server/shm/shm.h"
#include "server/trace/trace_config.h"
#include "server/trace/tracer.h"

srv_status_t *srv_core_start(srv_server_t *srv, const srv_options_t *opt,
                             bool *all_loaded) {
  *srv = (srv_server_t){.options = opt};
  atomic_init(&srv->state, SRV_STATE_STARTING);
  atomic_init(&srv->cancelling, false);
  /* The response cache, before any model: models attach to it at load.
   * The flags were checked at start-up (options.c); this fails only for a
   * size too small for the cache's own index. */
  srv_cache_choice_t cache;
  srv_status_t *st = srv_cache_config_parse(opt->cache_configs, opt->cache_config_count,
                                            opt->response_cache_byte_size, &cache);
  if (st == NULL && cache.name != NULL) {
    if (strcmp(cache.name, "local") == 0)
      st = srv_cache_new(cache.local_size, &srv->cache);
    else /* tritonserver's default folder */
      st =
          srv_cache_new_library(opt->cache_directory != NULL ? opt->cache_directory
                                                             : "/opt/tritonserver/caches",
                                cache.name, cache.config_json, &srv->cache);
  }
  srv_cache_choice_free(&cache);
  if (st != NULL) return st;
  /* Before any request: the flags were checked at start-up already
   * (srv_trace_config_check), so this fails only without a thread. */
  srv_trace_config_t trace;
  st = srv_trace_config_parse(opt, &trace);
  if (st == NULL) {
    st = srv_tracer_new(&trace, &srv->tracer);
    srv_trace_config_free(&trace);
  }
  if (st != NULL) {
    srv_cache_free(srv->cache);
    srv->cache = NULL;
    return st;
  }
  act_config_t config = {.workers = (unsigned)opt->worker_threads, .batch = 0};
  srv->runtime = act_runtime_new(&config);
  if (srv->runtime == NULL)
    return srv_status_new(GRPC_STATUS_INTERNAL, "cannot start the actor runtime");
  if (srv_options_rate_limited(opt)) {
    st = srv_rl_new(srv->runtime, opt->rate_limit_resources,
                    opt->rate_limit_resource_count, &srv->limiter);
    if (st != NULL) { /* flags srv_options_validate did not see: nothing runs yet */
      act_runtime_quiesce(srv->runtime);
      act_runtime_free(srv->runtime);
      srv->runtime = NULL;
      srv_cache_free(srv->cache);
      srv->cache = NULL;
      return st;
    }
  }
  srv->shm = srv_shm_new(opt->allow_client_shm);
  /* Before any model: backends may ask for GPU or pinned memory at load. */
  srv_cuda_pools_init(opt);
  srv->repository = srv_repository_new(srv);
  srv->registry = srv_repository_registry(srv->repository);
  *all_loaded = srv_repository_start(srv->repository);
  return NULL;
}

void srv_core_cancel(srv_server_t *srv) {
  /* Relaxed: see srv_server_cancelling. The model actors' stop, which
   * reads it to answer their queues CANCELLED, comes after this store by
   * the stop messages' own ordering. */
  atomic_store_explicit(&srv->cancelling, true, memory_order_relaxed);
}

bool srv_core_stop_until(srv_server_t *srv, uint64_t deadline_ns) {
  atomic_store_explicit(&srv->state, SRV_STATE_EXITING, memory_order_release);
  return srv_repository_stop(srv->repository, deadline_ns);
}

bool srv_core_wait_until(srv_server_t *srv, uint64_t deadline_ns) {
  return srv_repository_wait(srv->repository, deadline_ns);
}

void srv_core_quiesce(srv_server_t *srv) {
  /* Every model has stopped: none sends to the limiter any more. */
  if (srv->limiter != NULL && !srv->limiter_stopped) srv_rl_stop(srv->limiter);
  srv->limiter_stopped = true;
  act_runtime_quiesce(srv->runtime);
}

void srv_core_abandon(srv_server_t *srv) {
  srv_repository_abandon(srv->repository);
  /* Threads that did end (loaders, instances of models that stopped) are
   * joined, so that only what is abandoned is left running at _exit. */
  act_runtime_reap(srv->runtime);
}

void srv_core_stop(srv_server_t *srv) {
  srv_core_stop_until(srv, SRV_DEADLINE_NONE);
  srv_core_quiesce(srv);
}

void srv_core_free(srv_server_t *srv) {
  srv_repository_free(srv->repository); /* finalizes models, then backends */
  srv_cuda_pools_fini();                /* after the last model let go */
  act_runtime_free(srv->runtime);
  srv_rl_free(srv->limiter); /* stopped by srv_core_quiesce */
  srv->limiter = NULL;
  srv_shm_free(srv->shm); /* no request holds a region any more */
  srv_tracer_free(srv->tracer); /* every trace released: the files close */
  srv_cache_free(srv->cache);   /* no model, so no request, uses it any more */
  srv->cache = NULL;
  srv->tracer = NULL;
  srv->shm = NULL;
  srv->repository = NULL;
  srv->registry = NULL;
  srv->runtime = NULL;
}
