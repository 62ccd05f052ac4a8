/* The loader threads of the repository (see repo_internal.h): pinned actors
 * that run one job at a time — load a model's versions, destroy a model,
 * scan the repositories, remove a private folder — and send it back. All
 * the blocking work of the model life cycle happens here. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/config/model_config.h"
#include "server/core/server.h"
#include "server/model/config_limits.h"
#include "server/repository/repo_agent.h"
#include "server/repository/repo_internal.h"
#include "server/sched/ensemble_graph.h"

enum { LOADER_JOB = 0x380, LOADER_STOP };

#define VERSIONS_MAX 4096

static void loader_behaviour(act_actor_t *self, act_msg_t *msg) {
  repo_loader_t *l = act_actor_state(self);
  if (msg->kind == LOADER_STOP) return;
  repo_job_t *job = (repo_job_t *)msg;
  repo_job_run(l->repo, job);
  job->msg.kind = REPO_JOB_DONE;
  act_send(&l->repo->actor, &job->msg);
}

void repo_loaders_start(srv_repository_t *r) {
  r->loader_count = (size_t)r->srv->options->model_load_threads;
  if (r->loader_count == 0) r->loader_count = 1;
  r->loaders = calloc(r->loader_count, sizeof *r->loaders);
  if (r->loaders == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < r->loader_count; i++) {
    repo_loader_t *l = &r->loaders[i];
    l->repo = r;
    l->stop_msg.kind = LOADER_STOP;
    char name[16];
    snprintf(name, sizeof name, "loader-%zu", i);
    int err =
        act_actor_init_pinned(&l->actor, r->srv->runtime, loader_behaviour, l, name);
    if (err != 0) SRV_FATAL("cannot start model loader thread: %s", strerror(err));
    l->started = true;
    l->next_idle = r->idle;
    r->idle = l;
  }
}

void repo_loaders_stop(srv_repository_t *r) {
  for (size_t i = 0; i < r->loader_count; i++)
    if (r->loaders[i].started)
      act_send_stop(&r->loaders[i].actor, &r->loaders[i].stop_msg);
}

/* ---- JOB_LOAD ------------------------------------------------------------ */

/* The index of x in v[0, n) (ascending), or n. */
static size_t version_find(const int64_t *v, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && v[lo] == x ? lo : n;
}

/* The folders v[0, n) (ascending, n <= VERSIONS_MAX) that the list `want`
 * names, kept in place: a binary search per listed version, so a long
 * list costs n + want_n log n. */
static size_t versions_specific(const int64_t *want, size_t want_n, int64_t *v,
                                size_t n) {
  bool keep[VERSIONS_MAX] = {false};
  for (size_t j = 0; j < want_n; j++) {
    size_t i = version_find(v, n, want[j]);
    if (i < n) keep[i] = true;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i]) v[kept++] = v[i];
  return kept;
}

/* Keeps the versions the policy selects (default: the latest one). */
static size_t versions_select(const inference_ModelConfig *c, int64_t *v, size_t n) {
  const inference_ModelVersionPolicy *p = inference_ModelConfig_version_policy(c);
  if (p != NULL && inference_ModelVersionPolicy_has_all(p)) return n;
  if (p != NULL && inference_ModelVersionPolicy_has_specific(p)) {
    size_t want_n;
    const int64_t *want = inference_ModelVersionPolicy_Specific_versions(
        inference_ModelVersionPolicy_specific(p), &want_n);
    return versions_specific(want, want_n, v, n);
  }
  uint32_t latest = 1;
  if (p != NULL && inference_ModelVersionPolicy_has_latest(p))
    latest = inference_ModelVersionPolicy_Latest_num_versions(
        inference_ModelVersionPolicy_latest(p));
  if (latest == 0) latest = 1;
  if (n <= latest) return n;
  memmove(v, v + (n - latest), latest * sizeof *v);
  return latest;
}

/* The models an ensemble's steps use, each once (the repository loads
 * them before the versions, and tracks them for unloads and reloads). */
static void deps_collect(repo_job_t *job, const inference_ModelConfig *c) {
  const inference_ModelEnsembling *e = inference_ModelConfig_ensemble_scheduling(c);
  if (e == NULL) return;
  size_t n;
  const inference_ModelEnsembling_Step *const *steps =
      inference_ModelEnsembling_step(e, &n);
  job->deps = calloc(n + 1, sizeof *job->deps);
  if (job->deps == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    upb_StringView name = inference_ModelEnsembling_Step_model_name(steps[i]);
    bool seen = false;
    for (size_t j = 0; j < job->dep_count && !seen; j++)
      seen = strlen(job->deps[j]) == name.size &&
             memcmp(job->deps[j], name.data, name.size) == 0;
    if (!seen) job->deps[job->dep_count++] = srv_strndup(name.data, name.size);
  }
}

/* Where the config of a load comes from, as errors name it: a `config`
 * override, else tritonserver's rule for --model-config-name <name>:
 * <dir>/configs/<name>.pbtxt when that file exists, else
 * <dir>/config.pbtxt. Polling sees a change to either, as the fingerprint
 * covers the whole folder. */
static const char *config_source(const srv_options_t *opt, const repo_job_t *job,
                                 char *path, size_t len) {
  if (job->override != NULL && job->override->config_json != NULL)
    return "config override";
  struct stat sb;
  if (opt->model_config_name[0] != '\0' &&
      (size_t)snprintf(path, len, "%s/configs/%s.pbtxt", job->dir,
                       opt->model_config_name) < len &&
      stat(path, &sb) == 0)
    return path;
  snprintf(path, len, "%s/config.pbtxt", job->dir);
  return path;
}

/* A model folder without config.pbtxt is a model whose config is
 * completed, unless auto-complete is off (--disable-auto-complete-config):
 * tritonserver's rule. Any other reason the file cannot be read stays an
 * error. */
static bool config_missing_allowed(const srv_options_t *opt, const char *path) {
  struct stat sb;
  return !opt->strict_model_config && stat(path, &sb) != 0 && errno == ENOENT;
}

/* The config, checked against the limits before the version policy or
 * anything else reads it. */
static inference_ModelConfig *config_get(const srv_options_t *opt, repo_job_t *job,
                                         upb_Arena *arena) {
  const char *name = job->record->name;
  char path[PATH_MAX], err[512];
  const char *source = config_source(opt, job, path, sizeof path);
  inference_ModelConfig *c = NULL;
  if (source == path && config_missing_allowed(opt, path)) {
    /* tritonserver's auto-complete: the model file and the backend fill
     * in the rest (model/platform.h, model/autocomplete.c). */
    c = inference_ModelConfig_new(arena);
    if (c == NULL) SRV_FATAL("out of memory");
  } else if (source == path) {
    c = cfg_model_config_read(path, arena, err, sizeof err);
    if (c == NULL) job->error = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s", err);
    /* A mapped folder's config names its folder: the model takes the
     * mapped name, as Triton renames it. */
    if (c != NULL && job->mapped)
      inference_ModelConfig_set_name(
          c, upb_StringView_FromString(srv_arena_copy(arena, name, strlen(name) + 1)));
  } else {
    job->error = srv_load_override_config(name, job->override->config_json,
                                          job->override->config_json_len, arena, &c);
  }
  if (job->error == NULL) job->error = srv_config_limits_check(c, name, source);
  return job->error == NULL ? c : NULL;
}

/* tritonserver's name of an error's code (Status::CodeString), which it
 * writes before the message of a version that failed, in its answer, its
 * log and its index ("Internal: ..."). */
static const char *code_word(grpc_status_code code) {
  switch (code) {
    case GRPC_STATUS_INTERNAL:
      return "Internal";
    case GRPC_STATUS_NOT_FOUND:
      return "Not found";
    case GRPC_STATUS_INVALID_ARGUMENT:
      return "Invalid argument";
    case GRPC_STATUS_UNAVAILABLE:
      return "Unavailable";
    case GRPC_STATUS_UNIMPLEMENTED:
      return "Unsupported";
    case GRPC_STATUS_ALREADY_EXISTS:
      return "Already exists";
    case GRPC_STATUS_CANCELLED:
      return "Cancelled";
    default:
      return "Unknown";
  }
}

static void versions_load(srv_repository_t *r, repo_job_t *job,
                          const inference_ModelConfig *c, const int64_t *v, size_t n) {
  char path[PATH_MAX];
  const char *source = config_source(r->srv->options, job, path, sizeof path);
  job->models = calloc(n, sizeof *job->models);
  job->failures = calloc(n, sizeof *job->failures);
  if (job->models == NULL || job->failures == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    srv_model_t *m;
    char id[REPO_ID_SIZE];
    const char *who = repo_id(id, job->record->ns, job->record->name);
    srv_status_t *st =
        srv_model_load(r->srv, job->dir, job->record->name, v[i], c, source, &m);
    /* --model-load-retry-count: as tritonserver, the version's whole
     * creation again (backend, model and instance initialization), at
     * once, each failure logged; the config was read once, before. */
    for (int retry = 1; st != NULL && retry <= r->srv->options->model_load_retry_count;
         retry++) {
      SRV_ERROR("failed to load '%s' version %lld: %s: %s; retry %d of %d", who,
                (long long)v[i], code_word(srv_status_code(st)), srv_status_message(st),
                retry, r->srv->options->model_load_retry_count);
      srv_status_free(st);
      st = srv_model_load(r->srv, job->dir, job->record->name, v[i], c, source, &m);
    }
    if (st != NULL) {
      /* The version's reason as tritonserver keeps it: "<code>: <message>". */
      char why[SRV_STATUS_MESSAGE_MAX];
      snprintf(why, sizeof why, "%s: %s", code_word(srv_status_code(st)),
               srv_status_message(st));
      SRV_ERROR("failed to load '%s' version %lld: %s", who, (long long)v[i], why);
      job->failures[job->failure_count++] = (srv_version_failure_t){v[i], srv_strdup(why)};
      srv_status_free(st);
      continue;
    }
    SRV_INFO("successfully loaded '%s' version %lld", who, (long long)v[i]);
    job->models[job->model_count++] = m;
  }
}

/* The config's repository agents get LOAD; one that moves the model makes
 * the load read the config and versions from the new folder. False: the
 * job failed. */
static bool agents_load(srv_repository_t *r, repo_job_t *job) {
  char *before = srv_strdup(job->dir);
  job->error = repo_agents_load(r->srv->options->repoagent_directory, job->config,
                                &job->dir, &job->agents);
  bool moved = job->error == NULL && strcmp(before, job->dir) != 0;
  free(before);
  if (moved) job->config = config_get(r->srv->options, job, job->arena);
  return job->error == NULL && job->config != NULL;
}

/* The agents hear how the load ended; a loaded model's chain lives in its
 * private folder record (repo_tempdir_t), whose release unloads it. */
static void agents_loaded(repo_job_t *job) {
  if (job->agents == NULL) return;
  bool ok = job->error == NULL && job->failure_count == 0;
  repo_agents_loaded(job->agents, ok);
  if (ok) {
    if (job->tempdir == NULL) job->tempdir = calloc(1, sizeof *job->tempdir);
    if (job->tempdir == NULL) SRV_FATAL("out of memory");
    job->tempdir->agents = job->agents;
  }
  job->agents = NULL;
}

/* First run: the folder, the config (kept in the job's arena) and the
 * models the steps of an ensemble use. */
static void job_read_config(srv_repository_t *r, repo_job_t *job) {
  const char *name = job->record->name;
  const srv_load_override_t *o = job->override;
  if (o != NULL && o->file_count > 0) {
    job->error = srv_load_override_materialize(name, o, &job->dir);
    if (job->error != NULL) return;
    job->tempdir = calloc(1, sizeof *job->tempdir);
    if (job->tempdir == NULL) SRV_FATAL("out of memory");
    job->tempdir->path = srv_strdup(job->dir);
  } else {
    const char *ns = job->record->ns;
    job->error = ns != NULL ? repo_roots_find_in(&r->roots, ns, name, &job->dir,
                                                 &job->mapped, &job->no_folder)
                            : repo_roots_find(&r->roots, name, &job->dir, &job->mapped,
                                              &job->no_folder);
    if (job->error != NULL) return;
    /* Before reading anything: an edit made while loading shows next poll. */
    job->fingerprint = srv_repo_fingerprint(job->dir);
  }
  job->arena = upb_Arena_New();
  if (job->arena == NULL) SRV_FATAL("out of memory");
  job->config = config_get(r->srv->options, job, job->arena);
  if (job->config == NULL || !agents_load(r, job)) return;
  if (srv_ensemble_config_is(job->config)) {
    /* The config's own errors first, in the compiler's words, before its
     * step names are trusted to name models (the graph itself is made
     * again by each version's load). */
    char path[PATH_MAX];
    srv_ensemble_graph_t graph;
    job->error = srv_ensemble_graph_compile(
        job->config, name, config_source(r->srv->options, job, path, sizeof path),
        job->arena, &graph);
    if (job->error != NULL) return;
  }
  deps_collect(job, job->config);
}

/* Last run: the versions the policy selects. */
static void job_load_versions(srv_repository_t *r, repo_job_t *job) {
  int64_t *v = malloc(VERSIONS_MAX * sizeof *v);
  if (v == NULL) SRV_FATAL("out of memory");
  size_t n =
      versions_select(job->config, v, srv_repo_versions(job->dir, v, VERSIONS_MAX));
  char id[REPO_ID_SIZE];
  if (n == 0)
    job->error = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                "at least one version must be available under the "
                                "version policy of model '%s'",
                                repo_id(id, job->record->ns, job->record->name));
  else
    versions_load(r, job, job->config, v, n);
  free(v);
}

/* An ensemble's job comes back after the first run, and the repository
 * sends it again once its steps' models are loaded (repo_deps.c). */
static void job_load(srv_repository_t *r, repo_job_t *job) {
  if (!job->steps_ready) {
    job_read_config(r, job);
    if (job->error == NULL && job->dep_count > 0) return;
  }
  if (job->error == NULL) job_load_versions(r, job);
  agents_loaded(job);
  job->config = NULL;
  if (job->arena != NULL) upb_Arena_Free(job->arena);
  job->arena = NULL;
  if (job->error == NULL) return;
  const char *why = srv_status_message(job->error);
  char id[REPO_ID_SIZE];
  if (strncmp(why, "failed to load", 14) == 0)
    SRV_ERROR("%s", why);
  else
    SRV_ERROR("failed to load '%s': %s", repo_id(id, job->record->ns, job->record->name),
              why);
}

/* ---- JOB_DESTROY --------------------------------------------------------- */

void repo_model_destroy(srv_model_t *m) {
  /* The scheduler stops the instances (TRITONBACKEND_ModelInstanceFinalize)
   * and then itself; TRITONBACKEND_ModelFinalize comes after both, as in
   * Triton. */
  srv_model_stop(m);
  srv_model_wait_stopped(m);
  srv_model_free(m);
}

void repo_job_run(srv_repository_t *r, repo_job_t *job) {
  switch (job->kind) {
    case JOB_LOAD:
      job_load(r, job);
      return;
    case JOB_DESTROY: {
      char id[REPO_ID_SIZE]; /* the record outlives its draining models */
      SRV_INFO("unloading '%s' version %lld",
               repo_id(id, job->record->ns, job->model->name),
               (long long)job->model->version);
      repo_model_destroy(job->model);
      return;
    }
    case JOB_SCAN:
      (r->namespacing ? srv_repo_scan_ns : srv_repo_scan)(
          r->srv->options->model_repositories, r->srv->options->model_repository_count,
          true, &job->listing);
      return;
    case JOB_RESOLVE:
      repo_ns_resolve_run(r, job);
      return;
    case JOB_REMOVE_DIR:
      if (job->dir != NULL) srv_load_override_remove(job->dir);
      repo_agents_free(job->agents); /* UNLOAD, UNLOAD_COMPLETE */
      job->agents = NULL;
      return;
  }
  SRV_FATAL("model loader: unexpected job kind %d", (int)job->kind);
}

void repo_job_free(repo_job_t *job) {
  repo_agents_free(job->agents); /* a load dropped half-way (shutdown) */
  free(job->dir);
  srv_status_free(job->error);
  free(job->models);
  for (size_t i = 0; i < job->failure_count; i++) free(job->failures[i].reason);
  free(job->failures);
  for (size_t i = 0; i < job->dep_count; i++) free(job->deps[i]);
  free(job->deps);
  if (job->arena != NULL) upb_Arena_Free(job->arena);
  if (job->kind == JOB_SCAN || job->kind == JOB_RESOLVE)
    srv_repo_listing_free(&job->listing);
  free(job);
}
