/* The repository actor (see repository.h and repository.md): per model name
 * a record and a queue of operations; jobs go to the loader threads; every
 * change is published as a new registry view. Only the behaviour below
 * touches records, the job queue and the live list. */
#include "server/repository/repository.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/repository/model_name.h"
#include "server/repository/repo_internal.h"

#define RECLAIM_FIRST_NS 200000ull /* 200 µs: readers leave quickly */
#define RECLAIM_MAX_NS 50000000ull /* 50 ms: a reader is slow to leave */

static void op_start(srv_repository_t *r, repo_record_t *rec, srv_repo_op_t *op);
static srv_status_t *shutting_down(const srv_repo_op_t *op);

/* ---- Records -------------------------------------------------------------- */

repo_record_t *repo_record_find(srv_repository_t *r, const char *ns, const char *name) {
  for (size_t i = 0; i < r->record_count; i++)
    if (strcmp(r->records[i]->name, name) == 0 &&
        srv_repo_ns_cmp(r->records[i]->ns, ns) == 0)
      return r->records[i];
  return NULL;
}

bool repo_record_unloaded(const repo_record_t *rec) {
  return srv_model_state_is_unloaded(rec->state, rec->reason, rec->version_count);
}

repo_record_t *repo_record_resolve(srv_repository_t *r, const char *ns,
                                   const char *name) {
  repo_record_t *own = repo_record_find(r, ns, name);
  if (!r->namespacing || (own != NULL && !repo_record_unloaded(own))) return own;
  repo_record_t *only = NULL;
  size_t count = 0;
  for (size_t i = 0; i < r->record_count; i++) {
    repo_record_t *rec = r->records[i];
    if (strcmp(rec->name, name) != 0 || repo_record_unloaded(rec)) continue;
    only = rec;
    count++;
  }
  if (count == 0) return own;
  return count == 1 ? only : NULL;
}

repo_record_t *repo_record_get(srv_repository_t *r, const char *ns, const char *name) {
  repo_record_t *rec = repo_record_find(r, ns, name);
  if (rec != NULL) return rec;
  if (r->record_count == r->record_cap) {
    r->record_cap = r->record_cap ? 2 * r->record_cap : 16;
    r->records = realloc(r->records, r->record_cap * sizeof *r->records);
    if (r->records == NULL) SRV_FATAL("out of memory");
  }
  rec = calloc(1, sizeof *rec);
  if (rec == NULL) SRV_FATAL("out of memory");
  rec->name = srv_strdup(name);
  rec->ns = ns != NULL ? srv_strdup(ns) : NULL;
  rec->steps_msg.kind = REPO_STEPS_DONE;
  r->records[r->record_count++] = rec;
  char id[REPO_ID_SIZE];
  SRV_VERBOSE(2, "repository: record of '%s' made, %zu in all", repo_id(id, ns, name),
              r->record_count);
  return rec;
}

static void failures_clear(repo_record_t *rec) {
  for (size_t i = 0; i < rec->failure_count; i++) free(rec->failures[i].reason);
  free(rec->failures);
  rec->failures = NULL;
  rec->failure_count = 0;
}

static void reason_set(repo_record_t *rec, const char *reason) {
  free(rec->reason);
  rec->reason = reason != NULL ? srv_strdup(reason) : NULL;
}

static void deps_set(repo_record_t *rec, char **deps, size_t n) {
  for (size_t i = 0; i < rec->dep_count; i++) free(rec->deps[i]);
  free(rec->deps);
  rec->deps = deps;
  rec->dep_count = n;
}

/* Forgets a record that has nothing to tell: its name is not listed
 * (never loaded, or forgotten by load_forgotten), and no operation, model
 * or private folder refers to it. So names that never existed cost nothing
 * once their operations are answered, however many a client tries. */
static void record_drop_if_unknown(srv_repository_t *r, repo_record_t *rec) {
  if (rec->state != SRV_MODEL_STATE_UNKNOWN || rec->version_count > 0 ||
      rec->draining > 0 || rec->running != NULL || rec->joined != NULL ||
      rec->queue_head != NULL || rec->tempdir != NULL)
    return;
  for (size_t i = 0; i < r->live_count; i++)
    if (r->live[i].model->repo_record == rec) return;
  for (size_t i = 0; i < r->record_count; i++)
    if (r->records[i] == rec) {
      r->records[i] = r->records[--r->record_count];
      char id[REPO_ID_SIZE];
      SRV_VERBOSE(2, "repository: record of '%s' dropped, %zu in all",
                  repo_id(id, rec->ns, rec->name), r->record_count);
      repo_record_free(rec);
      return;
    }
}

void repo_record_free(repo_record_t *rec) {
  free(rec->name);
  free(rec->ns);
  free(rec->reason);
  free(rec->versions);
  failures_clear(rec);
  deps_set(rec, NULL, 0);
  srv_status_free(rec->steps_error);
  free(rec);
}

/* ---- Publishing and reclaiming ------------------------------------------ */

static void reclaim_arm(srv_repository_t *r) {
  /* Closing: what is left is freed with the registry. */
  if (r->reclaim_armed || r->closing) return;
  r->reclaim_armed = true;
  act_timer_arm(r->srv->runtime, &r->reclaim_timer, act_now_ns() + r->reclaim_delay_ns,
                &r->actor, &r->reclaim_msg);
}

/* Publishes every record as it is now. */
static void publish(srv_repository_t *r) {
  srv_registry_entry_t *entries = calloc(r->record_count + 1, sizeof *entries);
  if (entries == NULL) SRV_FATAL("out of memory");
  size_t n = 0;
  for (size_t i = 0; i < r->record_count; i++) {
    const repo_record_t *rec = r->records[i];
    if (rec->state == SRV_MODEL_STATE_UNKNOWN && rec->version_count == 0) continue;
    entries[n++] = (srv_registry_entry_t){
        .name = rec->name,
        .ns = rec->ns,
        .state = rec->state,
        .reason = rec->reason,
        .versions = rec->versions,
        .version_count = rec->version_count,
        .failures = rec->failures,
        .failure_count = rec->failure_count,
    };
  }
  srv_registry_publish(r->registry, entries, n);
  free(entries);
  r->reclaim_delay_ns = RECLAIM_FIRST_NS;
  reclaim_arm(r);
}

static void on_reclaim(srv_repository_t *r) {
  r->reclaim_armed = false;
  if (srv_registry_reclaim(r->registry)) return;
  /* A reader is still inside an old view: back off and look again. */
  r->reclaim_delay_ns *= 2;
  if (r->reclaim_delay_ns > RECLAIM_MAX_NS) r->reclaim_delay_ns = RECLAIM_MAX_NS;
  reclaim_arm(r);
}

/* ---- Jobs ----------------------------------------------------------------- */

repo_job_t *repo_job_new(repo_job_kind_t kind) {
  repo_job_t *job = calloc(1, sizeof *job);
  if (job == NULL) SRV_FATAL("out of memory");
  job->kind = kind;
  return job;
}

static void jobs_dispatch(srv_repository_t *r) {
  while (r->idle != NULL && r->jobs_head != NULL) {
    repo_job_t *job = r->jobs_head;
    r->jobs_head = job->next;
    if (r->jobs_head == NULL) r->jobs_tail = NULL;
    repo_loader_t *l = r->idle;
    r->idle = l->next_idle;
    job->loader = l;
    r->jobs_running++;
    act_send(&l->actor, &job->msg);
  }
}

void repo_job_queue(srv_repository_t *r, repo_job_t *job) {
  job->next = NULL;
  if (r->jobs_tail != NULL)
    r->jobs_tail->next = job;
  else
    r->jobs_head = job;
  r->jobs_tail = job;
  jobs_dispatch(r);
}

static void tempdir_release(srv_repository_t *r, repo_tempdir_t *t) {
  if (t == NULL || --t->users > 0) return;
  repo_job_t *job = repo_job_new(JOB_REMOVE_DIR);
  job->dir = t->path; /* the job frees both */
  job->agents = t->agents;
  free(t);
  repo_job_queue(r, job);
}

/* ---- Live models ---------------------------------------------------------- */

/* Runs on whichever thread drops a model's last reference. The counter and
 * the flag make a Dekker pair with srv_repository_stop: either that thread
 * sees `closed` and sends nothing, or the main thread waits for its send to
 * finish before it stops the actor (both sides seq_cst). */
static void model_drained(srv_model_t *m) {
  srv_repository_t *r = m->server->repository;
  atomic_fetch_add_explicit(&r->notifiers, 1, memory_order_seq_cst);
  if (!atomic_load_explicit(&r->closed, memory_order_seq_cst))
    act_send(&r->actor, &m->drained_msg);
  /* release: the send happens before the main thread's stop. */
  atomic_fetch_sub_explicit(&r->notifiers, 1, memory_order_release);
}

static void live_add(srv_repository_t *r, srv_model_t *m, repo_record_t *rec,
                     repo_tempdir_t *t) {
  if (r->live_count == r->live_cap) {
    r->live_cap = r->live_cap ? 2 * r->live_cap : 16;
    r->live = realloc(r->live, r->live_cap * sizeof *r->live);
    if (r->live == NULL) SRV_FATAL("out of memory");
  }
  r->live[r->live_count++] = (repo_live_t){m, t};
  if (t != NULL) t->users++;
  m->repo_record = rec;
  m->drained = model_drained;
  m->drained_msg.kind = REPO_MODEL_DRAINED;
}

/* A model that left (or never entered) the registry and has no reference
 * left: destroy it on a loader. */
static void model_destroy_queue(srv_repository_t *r, srv_model_t *m) {
  repo_job_t *job = repo_job_new(JOB_DESTROY);
  job->model = m; /* freed by the job: never read after it comes back */
  job->record = m->repo_record;
  /* Out of the live list now: once freed, its address may be reused by a
   * model loading meanwhile. Shutdown waits for running jobs anyway. */
  for (size_t i = 0; i < r->live_count; i++)
    if (r->live[i].model == m) {
      job->tempdir = r->live[i].tempdir;
      r->live[i] = r->live[--r->live_count];
      break;
    }
  repo_job_queue(r, job);
}

/* ---- Operations ----------------------------------------------------------- */

void repo_op_free(srv_repo_op_t *op) {
  srv_status_free(op->status);
  free(op); /* and the name, in the same block */
}

srv_repo_op_t *repo_op_new(srv_repo_op_kind_t kind, const char *ns, const char *name) {
  size_t n = strlen(name) + 1, nn = ns != NULL ? strlen(ns) + 1 : 0;
  srv_repo_op_t *op = calloc(1, sizeof *op + n + nn);
  if (op == NULL) SRV_FATAL("out of memory");
  char *copy = (char *)(op + 1);
  memcpy(copy, name, n);
  if (ns != NULL) op->ns = memcpy(copy + n, ns, nn);
  op->kind = kind;
  op->name = copy;
  op->done = repo_op_free; /* nobody waits: the outcome is in the index */
  op->msg.kind = REPO_OP;
  return op;
}

void repo_op_done(srv_repository_t *r, srv_repo_op_t *op, srv_status_t *st) {
  op->status = st;
  /* A part's own `done` gathers it; its whole tells the waiters. */
  if (op->origin == REPO_ORIGIN_STEP && !op->part) repo_steps_answered(r, op);
  if (op->origin == REPO_ORIGIN_CASCADE && op->ctx != NULL && !op->part)
    repo_cascade_answered(r, op);
  if (op->done != NULL) op->done(op);
}

static srv_status_t *status_copy(const srv_status_t *st) {
  return st == NULL ? NULL
                    : srv_status_new(srv_status_code(st), "%s", srv_status_message(st));
}

/* What the caller of a load that failed hears. tritonserver answers a
 * failed load "load failed for model '<id>': <why>\n" (INVALID_ARGUMENT),
 * <why> being its life cycle's message ("version N is at UNAVAILABLE
 * state: ...;"); clients match that prefix. A part of a split load hears
 * <why> alone, as its whole lists every part so (repo_ns.c), and so does a
 * step load, whose ensemble quotes it. The answers tritonserver gives
 * before any load starts ("failed to load 'M', failed to poll from model
 * repository", the override's checks) already start "failed to load" and
 * go as they are. */
static srv_status_t *load_answer(const repo_record_t *rec, const srv_repo_op_t *op,
                                 const srv_status_t *why) {
  const char *msg = srv_status_message(why);
  if (op->part || op->origin == REPO_ORIGIN_STEP || strncmp(msg, "failed to load", 14) == 0)
    return status_copy(why);
  char id[REPO_ID_SIZE];
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "load failed for model '%s': %s\n",
                        repo_id(id, rec->ns, rec->name), msg);
}

/* The running operation is over: answer it (and the loads that joined it),
 * then start the next one queued for the same model. `st` is the outcome
 * of a load job when `loaded` (load_answer words it per caller). */
static void op_finish(srv_repository_t *r, repo_record_t *rec, srv_status_t *st,
                      bool loaded) {
  srv_repo_op_t *joined = rec->joined;
  rec->joined = NULL;
  while (joined != NULL) {
    srv_repo_op_t *next = joined->next;
    repo_op_done(r, joined,
                 st != NULL && loaded ? load_answer(rec, joined, st) : status_copy(st));
    joined = next;
  }
  srv_repo_op_t *op = rec->running;
  rec->running = NULL;
  rec->asked_load = false;
  if (st != NULL && loaded) {
    srv_status_t *answer = load_answer(rec, op, st);
    srv_status_free(st);
    st = answer;
  }
  repo_op_done(r, op, st);
  srv_repo_op_t *q = rec->queue_head;
  if (q == NULL || r->closing) return; /* closing: close_refuse_waiting answers */
  rec->queue_head = q->next;
  if (rec->queue_head == NULL) rec->queue_tail = NULL;
  op_start(r, rec, q);
}

static bool op_is_plain_load(const srv_repo_op_t *op) {
  return op->kind == SRV_REPO_LOAD && op->override.config_json == NULL &&
         op->override.file_count == 0;
}

/* Leaves the registry: the models' references drop after the grace period,
 * then each is destroyed (REPO_MODEL_DRAINED). */
static void versions_retire(repo_record_t *rec) {
  rec->draining += rec->version_count;
  free(rec->versions);
  rec->versions = NULL;
  rec->version_count = 0;
}

/* The running unload is over once its models are destroyed and the
 * unloads it caused (ensembles using the model, with unload_dependents the
 * models its steps use) are answered. */
static void unload_finish_if_drained(srv_repository_t *r, repo_record_t *rec) {
  if (rec->draining > 0 || rec->cascade_pending > 0 || rec->running == NULL ||
      rec->running->kind != SRV_REPO_UNLOAD)
    return;
  bool unloaded = rec->state == SRV_MODEL_STATE_UNLOADING;
  if (rec->state != SRV_MODEL_STATE_UNKNOWN) {
    rec->state = SRV_MODEL_STATE_UNAVAILABLE;
    reason_set(rec, SRV_MODEL_REASON_UNLOADED);
    publish(r);
  }
  char id[REPO_ID_SIZE];
  if (unloaded) SRV_INFO("successfully unloaded '%s'", repo_id(id, rec->ns, rec->name));
  op_finish(r, rec, NULL, false);
}

void repo_cascade_answered(srv_repository_t *r, const srv_repo_op_t *op) {
  repo_record_t *rec = op->ctx; /* kept: its unload is running */
  if (--rec->cascade_pending > 0 || rec->later_queued) return;
  /* Not now: this runs inside another record's op_finish. */
  rec->later_queued = true;
  rec->later_next = r->later_head;
  r->later_head = rec;
}

/* An unload: the ensembles using the model go first (they hold references
 * on its versions, so its unload would wait for them), then the model,
 * then, with unload_dependents, the models its steps use. Unloading a
 * model that is not loaded is done at once, as tritonserver answers it. */
static void unload_start(srv_repository_t *r, repo_record_t *rec, srv_repo_op_t *op) {
  bool steps_too = op->unload_dependents;
  if (op->origin != REPO_ORIGIN_CASCADE) rec->orphaned = false; /* on purpose */
  repo_steps_refuse(r, rec);
  rec->explicit_load = false;
  rec->cascade_pending = 1; /* this function's own, dropped below */
  repo_users_unload(r, rec);
  if (rec->version_count > 0 || rec->draining > 0) {
    rec->state = SRV_MODEL_STATE_UNLOADING;
    versions_retire(rec);
    tempdir_release(r, rec->tempdir); /* removed once its models are gone */
    rec->tempdir = NULL;
    publish(r);
  }
  if (steps_too) repo_steps_unload(r, rec);
  rec->cascade_pending--;
  unload_finish_if_drained(r, rec);
}

static void op_start(srv_repository_t *r, repo_record_t *rec, srv_repo_op_t *op) {
  rec->running = op;
  if (op->kind == SRV_REPO_UNLOAD) {
    unload_start(r, rec, op);
    return;
  }
  /* An ensemble's step loaded already; an ensemble to load again that is
   * no longer loaded, nor waiting for its steps: nothing to do. */
  if ((op->origin == REPO_ORIGIN_STEP && rec->version_count > 0) ||
      (op->origin == REPO_ORIGIN_REBIND && rec->version_count == 0 && !rec->orphaned)) {
    op_finish(r, rec, NULL, false);
    return;
  }
  rec->asked_load = op->origin == REPO_ORIGIN_ASKED;
  rec->state = SRV_MODEL_STATE_LOADING;
  publish(r); /* the index shows LOADING; ready versions keep serving */
  repo_job_t *job = repo_job_new(JOB_LOAD);
  job->record = rec;
  job->override = op_is_plain_load(op) ? NULL : &op->override;
  rec->load_job = job;
  repo_job_queue(r, job);
}

/* Two concurrent loads of one model load it once; a reload for an
 * ensemble's new step versions must start after the running load. */
static bool op_joins(const srv_repo_op_t *op, const repo_record_t *rec) {
  return op_is_plain_load(op) && op->origin != REPO_ORIGIN_REBIND &&
         op_is_plain_load(rec->running) && rec->queue_head == NULL;
}

void repo_op_run(srv_repository_t *r, srv_repo_op_t *op) {
  if (r->closing) {
    repo_op_done(r, op, shutting_down(op));
    return;
  }
  if (op->kind == SRV_REPO_POLL) {
    repo_poll_asked(r, op);
    return;
  }
  if (r->namespacing && op->ns == NULL) {
    repo_ns_split(r, op);
    return;
  }
  repo_record_t *rec = repo_record_find(r, op->ns, op->name);
  if (rec == NULL && op->kind == SRV_REPO_UNLOAD) {
    /* Nothing of that name is loaded: done, as tritonserver answers, and
     * no record is made for it. */
    repo_op_done(r, op, NULL);
    return;
  }
  if (rec == NULL) {
    /* A name that cannot be a folder gets no record (it would be listed). */
    srv_status_t *bad = srv_model_name_check(op->name, strlen(op->name));
    if (bad != NULL) {
      repo_op_done(r, op, bad);
      return;
    }
    rec = repo_record_get(r, op->ns, op->name);
  }
  op->next = NULL;
  if (rec->running == NULL) {
    op_start(r, rec, op);
    record_drop_if_unknown(r, rec);
    return;
  }
  if (op->origin == REPO_ORIGIN_STEP && rec->running->kind == SRV_REPO_UNLOAD) {
    char id[REPO_ID_SIZE];
    repo_op_done(r, op,
                 srv_status_new(GRPC_STATUS_UNAVAILABLE, "'%s' is being unloaded",
                                repo_id(id, rec->ns, rec->name)));
    return;
  }
  if (op_joins(op, rec)) {
    if (op->origin == REPO_ORIGIN_ASKED) rec->asked_load = true;
    op->next = rec->joined;
    rec->joined = op;
    return;
  }
  if (rec->queue_tail != NULL)
    rec->queue_tail->next = op;
  else
    rec->queue_head = op;
  rec->queue_tail = op;
}

/* ---- Load results --------------------------------------------------------- */

/* What the failed load says, for the index, an ensemble quoting it and
 * (through load_answer) the caller: the job's error, else every failed
 * version in tritonserver's words, "version N is at UNAVAILABLE state:
 * <code>: <message>;" one after the other, ascending. */
static srv_status_t *load_error(const repo_job_t *job) {
  if (job->error != NULL) return status_copy(job->error);
  char text[SRV_STATUS_MESSAGE_MAX];
  size_t len = 0;
  for (size_t i = 0; i < job->failure_count && len < sizeof text; i++) {
    const srv_version_failure_t *f = &job->failures[i];
    int n = snprintf(text + len, sizeof text - len, "version %lld is at UNAVAILABLE state: %s;",
                     (long long)f->version, f->reason);
    if (n < 0) break;
    len += (size_t)n;
  }
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s", text);
}

void repo_models_discard(srv_repository_t *r, repo_job_t *job) {
  repo_record_t *rec = job->record;
  rec->draining += job->model_count; /* their destroys count down */
  for (size_t i = 0; i < job->model_count; i++) {
    live_add(r, job->models[i], rec, job->tempdir);
    srv_model_unref(job->models[i]);
  }
  job->model_count = 0;
}

static void load_accept(srv_repository_t *r, repo_record_t *rec, repo_job_t *job) {
  versions_retire(rec); /* a reload: the old versions drain and go */
  rec->versions = job->models;
  rec->version_count = job->model_count;
  job->models = NULL;
  for (size_t i = 0; i < rec->version_count; i++)
    live_add(r, rec->versions[i], rec, job->tempdir);
  if (rec->tempdir != job->tempdir) {
    tempdir_release(r, rec->tempdir);
    rec->tempdir = job->tempdir;
    if (rec->tempdir != NULL) rec->tempdir->users++; /* the record's own use */
  }
  job->tempdir = NULL;
  failures_clear(rec);
  rec->failures = job->failures;
  rec->failure_count = job->failure_count;
  job->failures = NULL;
  job->failure_count = 0;
  deps_set(rec, job->deps, job->dep_count);
  job->deps = NULL;
  job->dep_count = 0;
  rec->fingerprint = job->fingerprint;
  rec->from_override = job->override != NULL;
  if (rec->version_count > 0) rec->ever_loaded = true;
  if (rec->version_count > 0 && rec->asked_load) rec->explicit_load = true;
  if (rec->version_count > 0) rec->orphaned = false;
  rec->state =
      rec->version_count > 0 ? SRV_MODEL_STATE_READY : SRV_MODEL_STATE_UNAVAILABLE;
}

/* A private folder no model of the load kept: remove it now. */
static void tempdir_drop_if_unused(srv_repository_t *r, repo_job_t *job) {
  if (job->tempdir == NULL || job->model_count > 0) return;
  job->tempdir->users++;
  tempdir_release(r, job->tempdir);
  job->tempdir = NULL;
}

/* A failed load that leaves nothing to list, as tritonserver lists only
 * folders and loaded models: the name has no folder, or came with an
 * override and never loaded. */
static bool load_forgotten(const repo_record_t *rec, const repo_job_t *job) {
  return job->no_folder || (job->override != NULL && !rec->ever_loaded);
}

static void on_load_done(srv_repository_t *r, repo_job_t *job) {
  repo_record_t *rec = job->record;
  rec->load_job = NULL;
  if (job->agents != NULL) {
    /* A parked ensemble's load that failed here, not on a loader: its
     * agents hear LOAD_FAIL on one (their code may block). */
    repo_job_t *fail = repo_job_new(JOB_REMOVE_DIR);
    fail->agents = job->agents;
    job->agents = NULL;
    repo_job_queue(r, fail);
  }
  repo_steps_check_bound(r, job);
  if (job->error != NULL) repo_models_discard(r, job);
  bool failed = job->error != NULL || job->failure_count > 0;
  bool reload = !failed && rec->version_count > 0;
  srv_status_t *st = failed ? load_error(job) : NULL;
  tempdir_drop_if_unused(r, job);
  if (failed && rec->version_count > 0) {
    /* A failed reload leaves the serving versions as they were; the ones
     * that did load were never published and go at once. */
    repo_models_discard(r, job);
    rec->state = SRV_MODEL_STATE_READY;
    publish(r);
  } else {
    load_accept(r, rec, job);
    reason_set(rec, job->error != NULL ? srv_status_message(job->error) : NULL);
    if (failed && rec->version_count == 0 && load_forgotten(rec, job)) {
      rec->state = SRV_MODEL_STATE_UNKNOWN; /* nothing to list */
      reason_set(rec, NULL);
      failures_clear(rec);
    }
    publish(r);
    /* The registry holds its own references now; drop the loader's. */
    for (size_t i = 0; i < rec->version_count; i++) srv_model_unref(rec->versions[i]);
    if (rec->version_count > 0) repo_users_rebind(r, rec, reload);
  }
  op_finish(r, rec, st, true);
  record_drop_if_unknown(r, rec);
}

/* ---- The behaviour -------------------------------------------------------- */

static srv_status_t *shutting_down(const srv_repo_op_t *op) {
  char q[SRV_QUOTE_SIZE];
  if (op->kind == SRV_REPO_POLL)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "failed to poll the model repository: the server is shutting "
                          "down");
  return srv_status_new(
      GRPC_STATUS_UNAVAILABLE, "failed to %s '%s': the server is shutting down",
      op->kind == SRV_REPO_LOAD ? "load" : "unload", srv_quote_str(q, op->name));
}

/* At shutdown, operations that have not started, and unloads that wait for
 * requests to drain, are answered now: their callers must not wait for
 * what will not happen (the models left are stopped by the main thread). */
static void close_refuse_waiting(srv_repository_t *r) {
  for (size_t i = 0; i < r->record_count; i++) {
    repo_record_t *rec = r->records[i];
    while (rec->queue_head != NULL) {
      srv_repo_op_t *op = rec->queue_head;
      rec->queue_head = op->next;
      repo_op_done(r, op, shutting_down(op));
    }
    rec->queue_tail = NULL;
    if (rec->running != NULL && rec->running->kind == SRV_REPO_UNLOAD)
      op_finish(r, rec, shutting_down(rec->running), false);
  }
}

/* Shutdown may go on once no job runs and no timer message can still
 * arrive (the actor's stop must be its last message). */
static void close_check(srv_repository_t *r) {
  if (r->closing && r->jobs_running == 0 && r->jobs_head == NULL && r->jobs_parked == 0 &&
      !r->reclaim_armed && !r->poll_armed && !r->scanning && r->close_done != NULL) {
    sem_post(r->close_done);
    r->close_done = NULL;
  }
}

static void on_job_done(srv_repository_t *r, repo_job_t *job) {
  r->jobs_running--;
  job->loader->next_idle = r->idle;
  r->idle = job->loader;
  switch (job->kind) {
    case JOB_LOAD:
      if (repo_steps_wait(r, job)) {
        jobs_dispatch(r);
        close_check(r);
        return; /* the repository keeps it */
      }
      on_load_done(r, job);
      break;
    case JOB_DESTROY: {
      repo_record_t *rec = job->record;
      tempdir_release(r, job->tempdir);
      job->tempdir = NULL;
      if (rec->draining > 0) rec->draining--;
      unload_finish_if_drained(r, rec);
      break;
    }
    case JOB_SCAN:
      r->scanning = false;
      repo_poll_result(r, job);
      break;
    case JOB_REMOVE_DIR:
      break;
    case JOB_RESOLVE:
      repo_ns_resolved(r, job);
      break;
  }
  repo_job_free(job);
  jobs_dispatch(r);
  close_check(r);
}

/* Unloads whose cascades were answered during the turn end now, outside
 * the op_finish that answered them. */
static void later_run(srv_repository_t *r) {
  while (r->later_head != NULL) {
    repo_record_t *rec = r->later_head;
    r->later_head = rec->later_next;
    rec->later_queued = false;
    unload_finish_if_drained(r, rec);
    record_drop_if_unknown(r, rec);
  }
}

static void behaviour(srv_repository_t *r, act_msg_t *msg) {
  switch (msg->kind) {
    case REPO_OP:
      repo_op_run(r, (srv_repo_op_t *)msg);
      return;
    case REPO_STEPS_DONE: {
      repo_job_t *failed = repo_steps_resume(
          r, (repo_record_t *)((char *)msg - offsetof(repo_record_t, steps_msg)));
      if (failed != NULL) {
        on_load_done(r, failed);
        repo_job_free(failed);
      }
      close_check(r);
      return;
    }
    case REPO_JOB_DONE:
      on_job_done(r, (repo_job_t *)msg);
      return;
    case REPO_MODEL_DRAINED:
      model_destroy_queue(
          r, (srv_model_t *)((char *)msg - offsetof(srv_model_t, drained_msg)));
      return;
    case REPO_RECLAIM:
      on_reclaim(r);
      close_check(r);
      return;
    case REPO_POLL:
      repo_poll_start(r);
      close_check(r);
      return;
    case REPO_CLOSE:
      r->closing = true;
      close_refuse_waiting(r);
      repo_poll_refuse_waiting(r, shutting_down);
      /* A timer that fails to cancel is firing: its message still comes. */
      if (r->reclaim_armed && act_timer_cancel(r->srv->runtime, &r->reclaim_timer))
        r->reclaim_armed = false;
      if (r->poll_armed && act_timer_cancel(r->srv->runtime, &r->poll_timer))
        r->poll_armed = false;
      close_check(r);
      return;
    case REPO_STOP:
      return;
    default:
      SRV_FATAL("repository: unexpected message kind %u", msg->kind);
  }
}

void repo_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_repository_t *r = act_actor_state(self);
  behaviour(r, msg);
  if (r->later_head == NULL) return;
  later_run(r);
  close_check(r);
}
