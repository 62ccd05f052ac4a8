/* Model loading, completion of its config, and the TRITONBACKEND_Model*
 * API (see model.h). Loading runs on a thread outside the runtime; the API
 * runs on loading and instance threads. */
#include "server/model/model.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/api/datatype.h"
#include "server/api/error.h"
#include "server/cache/cache_hook.h"
#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/config/model_config.h"
#include "server/core/server.h"
#include "server/model/config_json.h"
#include "server/model/model_check.h"
#include "server/sched/ensemble.h"
#include "server/sched/rate_limiter_model.h"
#include "server/sched/scheduler.h"
#include "server/sched/sequence.h"

static srv_model_t *model_new(srv_server_t *srv, const char *dir, const char *name,
                              int64_t version) {
  /* Aligned: its per-thread lines (model.h) are lines of their own. */
  srv_model_t *m = aligned_alloc(_Alignof(srv_model_t), sizeof *m);
  if (m == NULL) SRV_FATAL("out of memory");
  memset(m, 0, sizeof *m);
  static _Atomic uint64_t loads;
  m->server = srv;
  m->name = srv_strdup(name);
  m->version = version;
  /* Relaxed: only uniqueness matters. */
  m->serial = atomic_fetch_add_explicit(&loads, 1, memory_order_relaxed) + 1;
  snprintf(m->version_string, sizeof m->version_string, "%lld", (long long)version);
  m->dir = srv_strdup(dir);
  char vdir[PATH_MAX];
  snprintf(vdir, sizeof vdir, "%s/%lld", dir, (long long)version);
  m->version_dir = srv_strdup(vdir);
  m->arena = upb_Arena_New();
  if (m->arena == NULL) SRV_FATAL("out of memory");
  m->stop_msg.kind = SRV_MODEL_STOP;
  m->stop_retry_msg.kind = SRV_MODEL_STOP_RETRY;
  m->stopped_msg.kind = SRV_MODEL_STOPPED;
  m->timer_msg.kind = SRV_MODEL_TIMER;
  act_timer_init(&m->timer);
  sem_init(&m->stopped, 0, 0);
  return m;
}

/* The model's own copy of its config (each version completes and may
 * change it on its own), or the one in <dir>/config.pbtxt. */
static srv_status_t *config_load(srv_model_t *m, const inference_ModelConfig *given,
                                 const char *source) {
  char path[PATH_MAX], err[512];
  snprintf(path, sizeof path, "%s/config.pbtxt", m->dir);
  if (given != NULL) {
    upb_Arena *tmp = upb_Arena_New();
    size_t len;
    char *bytes = inference_ModelConfig_serialize(given, tmp, &len);
    m->config = bytes != NULL ? inference_ModelConfig_parse(bytes, len, m->arena) : NULL;
    upb_Arena_Free(tmp);
    /* Encoding or decoding can fail on content, not only on memory (a
     * string that is not UTF-8 once was one): the model's load fails. */
    if (m->config == NULL)
      return srv_status_new(
          GRPC_STATUS_INVALID_ARGUMENT,
          "%s: the config could not be copied (encoded and decoded again)",
          source != NULL ? source : "config override");
  } else {
    m->config = cfg_model_config_read(path, m->arena, err, sizeof err);
    if (m->config == NULL) return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s", err);
  }
  srv_status_t *st = srv_model_config_complete(m, source != NULL ? source : path);
  if (st != NULL) return st;
  m->config_json = srv_config_json_encode((const upb_Message *)m->config,
                                          cfg_model_config_def(), &m->config_json_len);
  return NULL;
}

/* The JSON of a config changed after load completed it. */
static void config_json_refresh(srv_model_t *m) {
  free(m->config_json);
  m->config_json = srv_config_json_encode((const upb_Message *)m->config,
                                          cfg_model_config_def(), &m->config_json_len);
}

static srv_status_t *backend_attach(srv_model_t *m) {
  upb_StringView b = inference_ModelConfig_backend(m->config);
  upb_StringView rt = inference_ModelConfig_runtime(m->config);
  char name[256], runtime[256];
  snprintf(name, sizeof name, "%.*s", (int)b.size, b.data);
  snprintf(runtime, sizeof runtime, "%.*s", (int)rt.size, rt.data);
  return srv_backend_acquire(name, runtime, m->dir, m->version_dir, m->server->options,
                             m->server, &m->backend);
}

static srv_status_t *backend_model_init(srv_model_t *m) {
  if (m->backend->model_initialize == NULL) return NULL;
  TRITONSERVER_Error *err = m->backend->model_initialize(m);
  if (err == NULL) return NULL;
  srv_status_t *st =
      srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s", TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return st;
}

static void backend_model_fini(srv_model_t *m) {
  if (m->backend == NULL || m->backend->model_finalize == NULL) return;
  TRITONSERVER_Error *err = m->backend->model_finalize(m);
  if (err != NULL) {
    SRV_ERROR("model '%s' failed to finalize: %s", m->name,
              TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

/* What scheduler_setup made (zeroed state is fine). */
static void scheduler_free(srv_model_t *m) {
  srv_seq_free(m);
  srv_batcher_free(m);
  srv_stats_free(&m->stats);
}

static void model_release(srv_model_t *m) {
  srv_ensemble_free(m);
  scheduler_free(m);
  srv_instances_free(m);
  free(m->rl_detach.tickets);
  free(m->config_json);
  free(m->name);
  free(m->dir);
  free(m->version_dir);
  upb_Arena_Free(m->arena);
  sem_destroy(&m->stopped);
  free(m);
}

/* A failed load: stop whatever instances started, wait for their threads'
 * finalize, then finalize the model. */
static void load_undo(srv_model_t *m, bool model_initialized) {
  srv_instances_stop(m);
  srv_instances_wait(m);
  if (model_initialized) backend_model_fini(m);
  model_release(m);
}

/* An ensemble: no backend, no instances; its actor runs the step graph. */
static srv_status_t *ensemble_load(srv_model_t *m, const char *config_source,
                                   srv_model_t **out) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/config.pbtxt", m->dir);
  srv_status_t *st = srv_ensemble_setup(m, config_source != NULL ? config_source : path);
  if (st != NULL) {
    model_release(m);
    return st;
  }
  if (m->decoupled) { /* a decoupled step makes it decoupled, as Triton says */
    inference_ModelTransactionPolicy_set_decoupled(
        inference_ModelConfig_mutable_model_transaction_policy(m->config, m->arena),
        true);
    config_json_refresh(m);
  }
  srv_stats_init(&m->stats, (uint32_t)m->max_batch_size);
  srv_ensemble_stats_init(m);
  /* Top-level caching of the whole ensemble, as Triton does. */
  st = srv_cache_model_attach(m);
  if (st != NULL) {
    model_release(m);
    return st;
  }
  act_actor_init(&m->actor, m->server->runtime, srv_ensemble_behaviour, m);
  atomic_init(&m->refs, 1);
  *out = m;
  return NULL;
}

/* The batcher (or the sequence batcher) and the statistics, from the
 * completed config. */
static srv_status_t *scheduler_setup(srv_model_t *m, const char *config_source) {
  srv_status_t *st = srv_batcher_setup(m);
  if (st == NULL && inference_ModelConfig_has_sequence_batching(m->config)) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/config.pbtxt", m->dir);
    st = srv_seq_setup(m, config_source != NULL ? config_source : path);
  }
  if (st != NULL) return st;
  srv_stats_init(&m->stats, (uint32_t)m->max_batch_size);
  /* The queue (set up by the batcher) publishes its depth per level. */
  m->stats.queue_depth = m->queue.depth;
  m->stats.queue_levels = m->queue.depth != NULL ? m->queue.level_count : 0;
  return NULL;
}

srv_status_t *srv_model_load(srv_server_t *srv, const char *dir, const char *name,
                             int64_t version, const inference_ModelConfig *config,
                             const char *config_source, srv_model_t **out) {
  srv_model_t *m = model_new(srv, dir, name, version);
  srv_status_t *st = config_load(m, config, config_source);
  if (st == NULL && srv_ensemble_config_is(m->config))
    return ensemble_load(m, config_source, out);
  if (st == NULL) st = backend_attach(m);
  if (st != NULL) {
    model_release(m);
    return st;
  }
  if (srv_model_groups_prefer(m)) { /* the backend's preference changed the config */
    config_json_refresh(m);
  }
  /* The config's own errors before the backend sees it, as tritonserver
   * validates a config before it loads the model. */
  st = scheduler_setup(m, config_source);
  if (st != NULL) {
    model_release(m);
    return st;
  }
  m->config_settable = true;
  st = backend_model_init(m);
  m->config_settable = false;
  if (st != NULL) {
    model_release(m);
    return st;
  }
  /* A config the backend completed (autocomplete.c) gets the scheduler and
   * the statistics it asks for, as tritonserver makes its scheduler after
   * ModelInitialize. */
  if (m->config_replaced) {
    scheduler_free(m);
    st = scheduler_setup(m, "the configuration from TRITONBACKEND_ModelSetConfig");
  }
  if (st == NULL) st = srv_cache_model_attach(m);
  if (st != NULL) {
    load_undo(m, true);
    return st;
  }
  st = srv_instances_create(m);
  if (st == NULL) st = srv_rl_model_attach(m);
  if (st != NULL) {
    load_undo(m, true);
    return st;
  }
  if (m->seq != NULL) srv_seq_start(m);
  act_actor_init(&m->actor, srv->runtime,
                 m->seq != NULL ? srv_seq_behaviour : srv_scheduler_behaviour, m);
  atomic_init(&m->refs, 1);
  *out = m;
  return NULL;
}

/* ---- References ----
 *
 * Every request takes a reference (the lookup) and drops it (its state's
 * end), usually on two frontend threads. One shared count would move its
 * line between them on every request, so while the registry publishes the
 * model its references are sliced, as Linux's percpu_ref: a reference is
 * +1 and a drop -1 in the calling thread's slot (m->slots[i].refs, a slot
 * may go below 0), inside a section of the registry's epoch, and `refs`
 * holds SRV_MODEL_REF_BIAS besides the references counted there, so it
 * cannot reach 0 whatever order drops and folds come in. When the model
 * leaves the registry, srv_model_ref_unslice clears `sliced` (seq_cst,
 * before the registry retires the old view); every later reference or
 * drop that sees it cleared uses `refs`. The view's reclaim, a grace
 * period later, calls srv_model_ref_fold: no section that saw `sliced`
 * set is still running, so the slots are final; their sum goes into `refs`
 * and the bias comes off. The registry's own reference, dropped just
 * after, is then the one that may reach 0 (or a later holder's). */

/* Larger than any number of references, small enough that the sum of the
 * bias and the true count never wraps. */
#define SRV_MODEL_REF_BIAS (UINT64_C(1) << 62)

/* The sliced path: true when it counted delta in the caller's slot. */
static bool ref_sliced(srv_model_t *m, int64_t delta) {
  /* acquire: the domain, stored (release) before `sliced` was set. */
  act_epoch_t *d = atomic_load_explicit(&m->ref_epoch, memory_order_acquire);
  if (d == NULL) return false; /* never published: one atomic count */
  act_epoch_enter(d);
  /* seq_cst after the section's seq_cst announcement: either we see the
   * unslice, or the fold waits for our section (actors/epoch.h, the
   * reader's rule). */
  bool sliced = atomic_load_explicit(&m->sliced, memory_order_seq_cst);
  if (sliced)
    /* relaxed: the section's exit (release) orders it, and every use of
     * the model before it, before the fold that reads it. */
    atomic_fetch_add_explicit(&m->slots[srv_thread_slot()].refs, delta,
                              memory_order_relaxed);
  act_epoch_exit(d);
  return sliced;
}

void srv_model_ref(srv_model_t *m) {
  if (ref_sliced(m, 1)) return;
  /* relaxed: the caller's own reference (or its epoch section) keeps the
   * model alive, so the increment orders nothing. */
  atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void srv_model_ref_in_section(srv_model_t *m, act_epoch_t *d) {
  /* acquire: as in ref_sliced. */
  if (atomic_load_explicit(&m->ref_epoch, memory_order_acquire) != d) {
    srv_model_ref(m); /* not sliced, or on another domain */
    return;
  }
  /* What ref_sliced does, the caller's section standing for the nested
   * one it would open (a nested enter only counts its depth): seq_cst
   * after that section's seq_cst announcement. */
  if (atomic_load_explicit(&m->sliced, memory_order_seq_cst)) {
    /* relaxed: the section's exit orders it before the fold (ref_sliced). */
    atomic_fetch_add_explicit(&m->slots[srv_thread_slot()].refs, 1, memory_order_relaxed);
    return;
  }
  /* relaxed: the section keeps the model alive (srv_model_ref). */
  atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void srv_model_unref(srv_model_t *m) {
  if (ref_sliced(m, -1)) return;
  /* acq_rel: every use of the model by this holder happens before the
   * drained callback that leads to its finalize. */
  uint64_t was = atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel);
  if (was == 0) SRV_FATAL("model '%s': reference count underflow", m->name);
  if (was == 1 && m->drained != NULL) m->drained(m);
}

void srv_model_ref_slice(srv_model_t *m, act_epoch_t *d) {
  if (m->was_sliced) return; /* once: a model that came back stays atomic */
  m->was_sliced = true;
  m->biased = true;
  /* relaxed: the caller holds a reference; nothing is published by it. */
  atomic_fetch_add_explicit(&m->refs, SRV_MODEL_REF_BIAS, memory_order_relaxed);
  /* release: pairs with ref_sliced's acquire load. */
  atomic_store_explicit(&m->ref_epoch, d, memory_order_release);
  /* seq_cst: a thread that sees it set counts in its slot from now on;
   * one that does not still uses `refs`; both add up at the fold. */
  atomic_store_explicit(&m->sliced, true, memory_order_seq_cst);
}

void srv_model_ref_unslice(srv_model_t *m) {
  /* seq_cst: the writer's unlink in the epoch's protocol. */
  atomic_store_explicit(&m->sliced, false, memory_order_seq_cst);
}

void srv_model_ref_fold(srv_model_t *m) {
  if (!m->biased) return;
  m->biased = false;
  int64_t sum = 0;
  for (uint32_t i = 0; i < SRV_THREAD_SLOTS; i++)
    /* relaxed: the grace period ordered every slot update before us. */
    sum += atomic_exchange_explicit(&m->slots[i].refs, 0, memory_order_relaxed);
  /* acq_rel: as a drop (the holders' slot updates are ordered before us
   * by the epoch; this passes that on to whoever drops the last). Modulo
   * 2^64: `refs` + sum - bias is the true count, at least the registry's. */
  uint64_t was = atomic_fetch_add_explicit(&m->refs, (uint64_t)sum - SRV_MODEL_REF_BIAS,
                                           memory_order_acq_rel);
  if (was + (uint64_t)sum - SRV_MODEL_REF_BIAS == 0)
    SRV_FATAL("model '%s': no reference left at the fold (the registry holds one)",
              m->name);
}

void srv_model_describe(const srv_model_t *m, srv_model_desc_t *out) {
  *out = (srv_model_desc_t){
      .name = m->name,
      .version = m->version,
      .version_string = m->version_string,
      .config = m->config,
      .config_json = m->config_json,
      .config_json_len = m->config_json_len,
      .max_batch_size = m->max_batch_size,
      .decoupled = m->decoupled,
      .inputs = m->inputs,
      .outputs = m->outputs,
      .input_count = m->input_count,
      .output_count = m->output_count,
      .output_names = m->output_names,
  };
}

srv_stats_t *srv_model_stats(srv_model_t *m) { return &m->stats; }

const char *srv_model_name(const srv_model_t *m) { return m->name; }

bool srv_model_has_sequences(const srv_model_t *m) {
  return m->seq != NULL || (m->ens != NULL && m->ens->has_sequences);
}

uint64_t srv_model_serial(const srv_model_t *m) { return m->serial; }

void srv_model_stop(srv_model_t *m) { act_send(&m->actor, &m->stop_msg); }

void srv_model_wait_stopped(srv_model_t *m) {
  srv_model_wait_stopped_until(m, SRV_DEADLINE_NONE);
}

bool srv_model_wait_stopped_until(srv_model_t *m, uint64_t deadline_ns) {
  for (; m->waited_instances < m->instance_count; m->waited_instances++) {
    srv_instance_t *inst = m->instances[m->waited_instances];
    if (inst->started && !srv_sem_wait_until(&inst->finalized, deadline_ns)) return false;
  }
  if (!m->waited_stopped) {
    if (!srv_sem_wait_until(&m->stopped, deadline_ns)) return false;
    m->waited_stopped = true;
    act_runtime_reap(m->server->runtime); /* the instances' threads have ended */
  }
  return true;
}

void srv_model_finalize(srv_model_t *m) { backend_model_fini(m); }

void srv_model_abandon(srv_model_t *m) {
  if (m->backend == NULL) return; /* an ensemble: nothing runs outside its actor */
  atomic_store_explicit(&m->backend->abandoned, true, memory_order_relaxed);
  for (uint32_t i = 0; i < m->instance_count; i++) {
    /* Relaxed: only logged; the instance's thread may change it meanwhile. */
    uint32_t n = atomic_load_explicit(&m->instances[i]->executing, memory_order_relaxed);
    if (n != 0)
      SRV_ERROR(
          "model '%s' version %lld: instance '%s' is still inside Execute with "
          "%u request(s); abandoned",
          m->name, (long long)m->version, m->instances[i]->name, n);
  }
  SRV_ERROR(
      "model '%s' version %lld did not stop: its instances and the model are not "
      "finalized, nor backend '%s'",
      m->name, (long long)m->version, m->backend->name);
}

void srv_model_drop_dependencies(srv_model_t *m) { srv_ensemble_models_release(m); }

void srv_model_free(srv_model_t *m) {
  backend_model_fini(m);
  model_release(m);
}

/* ---- TRITONBACKEND_Model* API ---- */

TRITONSERVER_Error *TRITONBACKEND_ModelName(TRITONBACKEND_Model *model,
                                            const char **name) {
  *name = model->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelVersion(TRITONBACKEND_Model *model,
                                               uint64_t *version) {
  *version = (uint64_t)model->version;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model *model, TRITONBACKEND_ArtifactType *artifact_type,
    const char **location) {
  *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = model->dir;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelConfig(TRITONBACKEND_Model *model,
                                              const uint32_t config_version,
                                              TRITONSERVER_Message **model_config) {
  if (config_version != 1)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "model configuration version %u is not supported: only 1 is",
                         config_version);
  return TRITONSERVER_MessageNewFromSerializedJson(model_config, model->config_json,
                                                   model->config_json_len);
}

TRITONSERVER_Error *TRITONBACKEND_ModelServer(TRITONBACKEND_Model *model,
                                              TRITONSERVER_Server **server) {
  *server = (TRITONSERVER_Server *)model->server;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelBackend(TRITONBACKEND_Model *model,
                                               TRITONBACKEND_Backend **backend) {
  *backend = model->backend;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelState(TRITONBACKEND_Model *model, void **state) {
  *state = model->state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelSetState(TRITONBACKEND_Model *model, void *state) {
  model->state = state;
  return NULL;
}
