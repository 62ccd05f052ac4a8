/* Ensembles and the models their steps use, on the repository actor (see
 * repository.md, "Ensembles"): an ensemble's load waits for the loads of
 * its steps' models, cycles fail, unloads cascade, reloads rebind. Only
 * the repository's behaviour calls these. */
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/core/server.h"
#include "server/repository/repo_internal.h"

/* The models `rec`'s steps use, as far as the repository knows: those its
 * running load read (once it came back from its first run), else those of
 * its loaded versions. A load still reading its config says nothing yet;
 * it looks for cycles itself when it comes back. */
static char **record_steps(const repo_record_t *rec, size_t *n) {
  const repo_job_t *job = rec->load_job;
  if (job != NULL && (job->parked || job->steps_ready)) {
    *n = job->dep_count;
    return job->deps;
  }
  *n = rec->version_count > 0 ? rec->dep_count : 0;
  return rec->deps;
}

/* The record the step name `dep` of ensemble `ens` means (with
 * namespaces: its own namespace's first, see repo_record_resolve). */
static repo_record_t *step_record(srv_repository_t *r, const repo_record_t *ens,
                                  const char *dep) {
  return repo_record_resolve(r, ens->ns, dep);
}

/* Whether the step name `dep` of `ens` means the model of `rec`. */
static bool dep_is(srv_repository_t *r, const repo_record_t *ens, const char *dep,
                   const repo_record_t *rec) {
  if (strcmp(dep, rec->name) != 0) return false;
  return !r->namespacing || step_record(r, ens, dep) == rec;
}

static bool steps_use(srv_repository_t *r, const repo_record_t *user,
                      const repo_record_t *rec) {
  size_t n;
  char **steps = record_steps(user, &n);
  for (size_t i = 0; i < n; i++)
    if (dep_is(r, user, steps[i], rec)) return true;
  return false;
}

static void marks_clear(srv_repository_t *r) {
  for (size_t i = 0; i < r->record_count; i++) r->records[i]->mark = false;
}

/* tritonserver's text for a cycle, from the side of `rec`: the model
 * before it on the cycle is `last`. Both by identifier (repo_id). */
static srv_status_t *cycle_error(const repo_record_t *rec, const repo_record_t *last) {
  char id[REPO_ID_SIZE], last_id[REPO_ID_SIZE];
  const char *name = repo_id(id, rec->ns, rec->name);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "circular dependency between ensembles: %s -> ... -> %s -> %s",
                        name, repo_id(last_id, last->ns, last->name), name);
}

/* Whether the model `name` (a step of `from`) leads back to `target`
 * through steps; *last is then the model on the way whose step target is.
 * Each record is walked once (marks), so a diamond costs no more than a
 * chain. A waiting ensemble found on the cycle gets the cycle as its own
 * error: its wait would never end either. */
static bool steps_reach(srv_repository_t *r, const char *name, const repo_record_t *from,
                        const repo_record_t *target, const repo_record_t **last) {
  if (dep_is(r, from, name, target)) {
    *last = from;
    return true;
  }
  repo_record_t *rec = step_record(r, from, name);
  if (rec == NULL || rec->mark) return false;
  rec->mark = true;
  size_t n;
  char **steps = record_steps(rec, &n);
  for (size_t i = 0; i < n; i++) {
    if (!steps_reach(r, steps[i], rec, target, last)) continue;
    if (rec->load_job != NULL && rec->load_job->parked && rec->steps_error == NULL)
      rec->steps_error = cycle_error(rec, from);
    return true;
  }
  return false;
}

/* A cycle through the job's steps fails its load, as tritonserver's
 * dependency graph refuses one: waiting would never end. */
static srv_status_t *cycle_check(srv_repository_t *r, const repo_job_t *job) {
  srv_status_t *st = NULL;
  const repo_record_t *last = NULL;
  for (size_t i = 0; i < job->dep_count && st == NULL; i++)
    if (steps_reach(r, job->deps[i], job->record, job->record, &last))
      st = cycle_error(job->record, last);
  marks_clear(r);
  return st;
}

/* A step's model is ready now, with nothing under way that could change
 * it: no need to ask for its load. With namespaces, only a model of the
 * ensemble's own namespace is: one of another namespace stands in while
 * its own has none, and the load asks every root again, as tritonserver
 * polls a step's name in every repository at each load of the ensemble
 * (a folder that appeared in its own root loads, and is bound). */
static bool step_ready(srv_repository_t *r, const repo_record_t *ens, const char *name) {
  const repo_record_t *rec = step_record(r, ens, name);
  if (rec != NULL && r->namespacing && strcmp(rec->ns, ens->ns) != 0) return false;
  return rec != NULL && rec->version_count > 0 && rec->running == NULL &&
         rec->queue_head == NULL;
}

static void job_fail(repo_job_t *job, srv_status_t *st) {
  SRV_ERROR("%s", srv_status_message(st));
  job->error = st;
}

bool repo_steps_wait(srv_repository_t *r, repo_job_t *job) {
  if (job->steps_ready || job->dep_count == 0 || job->error != NULL) return false;
  repo_record_t *rec = job->record;
  if (r->closing) {
    char id[REPO_ID_SIZE];
    job->error = srv_status_new(GRPC_STATUS_UNAVAILABLE,
                                "failed to load '%s': the server is shutting down",
                                repo_id(id, rec->ns, rec->name));
    return false;
  }
  srv_status_t *cycle = cycle_check(r, job);
  if (cycle != NULL) {
    job_fail(job, cycle);
    return false;
  }
  /* Parked before the step loads are asked: their answers may come in
   * this very turn (a step loaded already). */
  job->parked = true;
  r->jobs_parked++;
  rec->steps_pending = 1; /* this function's own, dropped below */
  for (size_t i = 0; i < job->dep_count; i++) {
    if (step_ready(r, rec, job->deps[i])) continue;
    /* No namespace: with namespaces, every one holding the name loads, as
     * tritonserver polls a step's name in every repository. */
    srv_repo_op_t *op = repo_op_new(SRV_REPO_LOAD, NULL, job->deps[i]);
    op->origin = REPO_ORIGIN_STEP;
    op->ctx = rec;
    rec->steps_pending++;
    act_send(&r->actor, &op->msg);
  }
  if (--rec->steps_pending == 0) act_send(&r->actor, &rec->steps_msg);
  return true;
}

/* Whether, with namespaces, `name` means nothing to `ens` because several
 * other namespaces have it (and its own has not). */
static bool step_ambiguous(srv_repository_t *r, const repo_record_t *ens,
                           const char *name) {
  if (!r->namespacing || step_record(r, ens, name) != NULL) return false;
  size_t n = 0;
  for (size_t i = 0; i < r->record_count; i++)
    if (strcmp(r->records[i]->name, name) == 0 && !repo_record_unloaded(r->records[i]))
      n++;
  return n > 1;
}

void repo_steps_answered(srv_repository_t *r, const srv_repo_op_t *op) {
  repo_record_t *ens = op->ctx; /* kept: its load is running */
  const repo_record_t *step = step_record(r, ens, op->name);
  /* tritonserver's words, each model named by its identifier (the step's
   * own name when no record resolves it) */
  char id[REPO_ID_SIZE], step_id[REPO_ID_SIZE];
  const char *ens_id = repo_id(id, ens->ns, ens->name);
  const char *dep = step != NULL ? repo_id(step_id, step->ns, step->name) : op->name;
  if (ens->steps_error == NULL && step_ambiguous(r, ens, op->name))
    ens->steps_error = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                      "ensemble %s contains models that are not "
                                      "available or ambiguous: %s",
                                      ens_id, op->name);
  if (ens->steps_error == NULL && (step == NULL || step->version_count == 0)) {
    if (op->status != NULL)
      ens->steps_error = srv_status_new(
          GRPC_STATUS_INVALID_ARGUMENT,
          "ensemble '%s' depends on '%s' which has no loaded version. Model '%s' "
          "loading failed with error: %s",
          ens_id, dep, dep, srv_status_message(op->status));
    else
      ens->steps_error = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                        "ensemble '%s' depends on '%s' which has no "
                                        "loaded version",
                                        ens_id, dep);
  }
  /* A message, not a call: this runs inside another record's turn. */
  if (--ens->steps_pending == 0) act_send(&r->actor, &ens->steps_msg);
}

repo_job_t *repo_steps_resume(srv_repository_t *r, repo_record_t *rec) {
  repo_job_t *job = rec->load_job;
  job->parked = false;
  r->jobs_parked--;
  srv_status_t *st = rec->steps_error;
  rec->steps_error = NULL;
  if (st == NULL && r->closing) {
    char id[REPO_ID_SIZE];
    st = srv_status_new(GRPC_STATUS_UNAVAILABLE,
                        "failed to load '%s': the server is shutting down",
                        repo_id(id, rec->ns, rec->name));
  }
  if (st != NULL) {
    rec->orphaned = true;
    job_fail(job, st);
    return job;
  }
  job->steps_ready = true;
  repo_ns_bind_steps(r, job);
  repo_job_queue(r, job);
  return NULL;
}

void repo_steps_check_bound(srv_repository_t *r, repo_job_t *job) {
  if (job->error != NULL || job->model_count == 0) return;
  for (size_t i = 0; i < job->dep_count; i++) {
    const repo_record_t *step = step_record(r, job->record, job->deps[i]);
    if (step != NULL && step->version_count > 0) continue;
    /* It left while the versions loaded: they may hold references on its
     * versions, which its unload waits for. */
    job->record->orphaned = true;
    char id[REPO_ID_SIZE], step_id[REPO_ID_SIZE];
    job_fail(job, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                 "ensemble '%s' depends on '%s' which has no loaded "
                                 "version",
                                 repo_id(id, job->record->ns, job->record->name),
                                 step != NULL ? repo_id(step_id, step->ns, step->name)
                                              : job->deps[i]));
    return;
  }
}

void repo_steps_refuse(srv_repository_t *r, repo_record_t *rec) {
  char id[REPO_ID_SIZE];
  srv_repo_op_t **link = &rec->queue_head, *kept_tail = NULL;
  while (*link != NULL) {
    srv_repo_op_t *op = *link;
    if (op->origin != REPO_ORIGIN_STEP) {
      kept_tail = op;
      link = &op->next;
      continue;
    }
    *link = op->next;
    op->status = srv_status_new(GRPC_STATUS_UNAVAILABLE, "'%s' is being unloaded",
                                repo_id(id, rec->ns, rec->name));
    if (!op->part) repo_steps_answered(r, op);
    op->done(op);
  }
  rec->queue_tail = kept_tail;
}

/* Runs the unloads `rec`'s unload causes, now; it waits for their
 * answers. The names are copied first: running one may add or drop
 * records. */
static void cascade(srv_repository_t *r, repo_record_t *rec, srv_repo_op_t **ops,
                    size_t n) {
  rec->cascade_pending += n;
  for (size_t i = 0; i < n; i++) {
    ops[i]->origin = REPO_ORIGIN_CASCADE;
    ops[i]->ctx = rec;
    repo_op_run(r, ops[i]);
  }
  free(ops);
}

static srv_repo_op_t **ops_new(size_t cap) {
  srv_repo_op_t **ops = calloc(cap + 1, sizeof *ops);
  if (ops == NULL) SRV_FATAL("out of memory");
  return ops;
}

void repo_users_unload(srv_repository_t *r, repo_record_t *rec) {
  srv_repo_op_t **ops = ops_new(r->record_count);
  size_t n = 0;
  for (size_t i = 0; i < r->record_count; i++) {
    repo_record_t *user = r->records[i];
    if (user == rec || user->version_count == 0 || !steps_use(r, user, rec)) continue;
    user->orphaned = true;
    char id[REPO_ID_SIZE], step_id[REPO_ID_SIZE];
    SRV_INFO("unloading ensemble '%s': it uses '%s', which unloads",
             repo_id(id, user->ns, user->name), repo_id(step_id, rec->ns, rec->name));
    ops[n++] = repo_op_new(SRV_REPO_UNLOAD, user->ns, user->name);
  }
  cascade(r, rec, ops, n);
}

/* Whether an ensemble other than `except` uses the model, loaded or loading. */
static bool used_by_other(srv_repository_t *r, const repo_record_t *step,
                          const repo_record_t *except) {
  for (size_t i = 0; i < r->record_count; i++) {
    const repo_record_t *user = r->records[i];
    if (user == except || user == step) continue;
    if ((user->version_count > 0 || user->load_job != NULL) && steps_use(r, user, step))
      return true;
  }
  return false;
}

void repo_steps_unload(srv_repository_t *r, repo_record_t *rec) {
  srv_repo_op_t **ops = ops_new(rec->dep_count);
  size_t n = 0;
  for (size_t i = 0; i < rec->dep_count; i++) {
    const repo_record_t *step = step_record(r, rec, rec->deps[i]);
    if (step == NULL || step == rec || step->version_count == 0 || step->explicit_load ||
        used_by_other(r, step, rec))
      continue;
    ops[n] = repo_op_new(SRV_REPO_UNLOAD, step->ns, step->name);
    ops[n++]->unload_dependents = true; /* its own steps, in turn */
  }
  cascade(r, rec, ops, n);
}

/* Whether every model `rec`'s last load named in its steps is ready. */
static bool steps_all_ready(srv_repository_t *r, const repo_record_t *rec) {
  for (size_t i = 0; i < rec->dep_count; i++) {
    const repo_record_t *step = step_record(r, rec, rec->deps[i]);
    if (step == NULL || step->version_count == 0) return false;
  }
  return true;
}

/* Whether `user` loads again now that `rec` loaded: it uses `rec` and is
 * loaded or loading (a reload: bind the new versions), or it went for want
 * of a step's model and every one is ready now, as tritonserver's graph
 * loads an ensemble again once its steps are there. */
static bool user_rebinds(srv_repository_t *r, const repo_record_t *user,
                         const repo_record_t *rec, bool reload) {
  if (user == rec) return false;
  bool loading = user->load_job != NULL && user->load_job->steps_ready;
  if (reload && steps_use(r, user, rec) && (user->version_count > 0 || loading))
    return true;
  /* A step's model appears in the ensemble's own namespace: it binds that
   * one instead of another namespace's, as tritonserver re-checks an
   * ensemble whose step matched a model of another namespace. */
  if (!reload && rec->ns != NULL && user->ns != NULL && user->version_count > 0 &&
      strcmp(user->ns, rec->ns) == 0 && user->running == NULL)
    for (size_t i = 0; i < user->dep_count; i++)
      if (strcmp(user->deps[i], rec->name) == 0) return true;
  if (!user->orphaned || user->version_count > 0 || user->running != NULL) return false;
  for (size_t i = 0; i < user->dep_count; i++)
    if (dep_is(r, user, user->deps[i], rec)) return steps_all_ready(r, user);
  return false;
}

void repo_users_rebind(srv_repository_t *r, const repo_record_t *rec, bool reload) {
  for (size_t i = 0; i < r->record_count; i++) {
    const repo_record_t *user = r->records[i];
    if (!user_rebinds(r, user, rec, reload)) continue;
    char id[REPO_ID_SIZE], step_id[REPO_ID_SIZE];
    const char *user_id = repo_id(id, user->ns, user->name);
    const char *rec_id = repo_id(step_id, rec->ns, rec->name);
    if (user->from_override && user->load_job == NULL) {
      /* Its config was the client's and is gone: it keeps the old versions
       * of the step's model (or stays unloaded) until loaded again. */
      SRV_WARN(
          "ensemble '%s' (loaded with a config override) is not loaded again "
          "for '%s'",
          user_id, rec_id);
      continue;
    }
    SRV_INFO("loading ensemble '%s' again: '%s' loaded", user_id, rec_id);
    srv_repo_op_t *op = repo_op_new(SRV_REPO_LOAD, user->ns, user->name);
    op->origin = REPO_ORIGIN_REBIND;
    act_send(&r->actor, &op->msg);
  }
}
