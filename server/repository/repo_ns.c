/* Model namespaces (--model-namespacing, see repository.md "Namespaces"):
 * an operation naming a model without a namespace becomes one part per
 * namespace holding the name, and an ensemble's steps are bound to the
 * namespace their names resolve to. Repository actor, except
 * repo_ns_resolve_run (a loader thread). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/repository/repo_internal.h"

const char *repo_id(char buf[REPO_ID_SIZE], const char *ns, const char *name) {
  if (ns == NULL || ns[0] == '\0') return name;
  snprintf(buf, REPO_ID_SIZE, "%s::%s", ns, name);
  return buf;
}

/* An operation split in parts, answered once every part is answered.
 * Lives on the repository actor. */
typedef struct {
  srv_repository_t *r;
  srv_repo_op_t *whole;
  size_t pending;
  srv_status_t *error; /* the first failed part's */
  /* A client's load lists every failed part, as tritonserver's answer
   * does: "load failed for model '<identifier>': <why>\n" each. */
  bool lists;
  char *text;
  size_t text_len;
} repo_whole_t;

static void whole_drop(repo_whole_t *w) {
  if (--w->pending > 0) return;
  srv_repository_t *r = w->r;
  srv_repo_op_t *whole = w->whole;
  srv_status_t *st = w->error;
  if (st != NULL && w->lists) {
    srv_status_t *all = srv_status_new(srv_status_code(st), "%s", w->text);
    srv_status_free(st);
    st = all;
  }
  free(w->text);
  free(w);
  repo_op_done(r, whole, st);
}

static void whole_list(repo_whole_t *w, const srv_repo_op_t *part) {
  char id[REPO_ID_SIZE];
  const char *who = repo_id(id, part->ns, part->name);
  const char *why = srv_status_message(part->status);
  size_t add = strlen("load failed for model '': \n") + strlen(who) + strlen(why);
  char *grown = realloc(w->text, w->text_len + add + 1);
  if (grown == NULL) SRV_FATAL("out of memory");
  w->text = grown;
  w->text_len += (size_t)snprintf(w->text + w->text_len, add + 1,
                                  "load failed for model '%s': %s\n", who, why);
}

/* `done` of a part: runs inside the op_finish of its record. */
static void part_answered(srv_repo_op_t *part) {
  repo_whole_t *w = part->ctx;
  if (part->status != NULL && w->lists) whole_list(w, part);
  if (part->status != NULL && w->error == NULL) {
    w->error = part->status;
    part->status = NULL;
  }
  repo_op_free(part);
  whole_drop(w);
}

/* One part per namespace in nss[0..n), run now; none: answered at once. */
static void parts_start(srv_repository_t *r, srv_repo_op_t *op, char *const *nss,
                        size_t n) {
  repo_whole_t *w = calloc(1, sizeof *w);
  if (w == NULL) SRV_FATAL("out of memory");
  /* + this function's. A step load keeps the first error: its ensemble
   * quotes the failure of one model (repo_steps_answered). */
  *w = (repo_whole_t){
      .r = r,
      .whole = op,
      .pending = n + 1,
      .lists = op->kind == SRV_REPO_LOAD && op->origin != REPO_ORIGIN_STEP};
  for (size_t i = 0; i < n; i++) {
    srv_repo_op_t *part = repo_op_new(op->kind, nss[i], op->name);
    /* The override's bytes stay the asker's: the whole outlives its parts. */
    part->override = op->override;
    part->unload_dependents = op->unload_dependents;
    part->origin = op->origin;
    part->part = true;
    part->ctx = w;
    part->done = part_answered;
    repo_op_run(r, part);
  }
  whole_drop(w);
}

void repo_ns_split(srv_repository_t *r, srv_repo_op_t *op) {
  if (op->kind == SRV_REPO_UNLOAD) {
    /* Every namespace's record of the name, as tritonserver unloads each
     * identifier of it. Copies: a part may drop its record. */
    char **nss = calloc(r->record_count + 1, sizeof *nss);
    if (nss == NULL) SRV_FATAL("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < r->record_count; i++) /* every one has a namespace */
      if (strcmp(r->records[i]->name, op->name) == 0 && r->records[i]->ns != NULL)
        nss[n++] = srv_strdup(r->records[i]->ns);
    parts_start(r, op, nss, n);
    for (size_t i = 0; i < n; i++) free(nss[i]);
    free(nss);
    return;
  }
  srv_status_t *bad = srv_model_name_check(op->name, strlen(op->name));
  if (bad != NULL) {
    repo_op_done(r, op, bad);
    return;
  }
  if (op->override.file_count > 0) {
    /* Files of the client's make a folder of no repository: tritonserver
     * gives it the empty namespace. */
    char *none = "";
    parts_start(r, op, &none, 1);
    return;
  }
  repo_job_t *job = repo_job_new(JOB_RESOLVE);
  job->op = op;
  repo_job_queue(r, job);
}

void repo_ns_resolve_run(srv_repository_t *r, repo_job_t *job) {
  job->error = repo_roots_find_all(&r->roots, job->op->name, &job->listing);
}

void repo_ns_resolved(srv_repository_t *r, repo_job_t *job) {
  if (job->error != NULL) {
    srv_status_t *st = job->error;
    job->error = NULL;
    repo_op_done(r, job->op, st);
    return;
  }
  char **nss = calloc(job->listing.count + 1, sizeof *nss);
  if (nss == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < job->listing.count; i++) nss[i] = job->listing.models[i].ns;
  parts_start(r, job->op, nss, job->listing.count);
  free(nss);
}

void repo_ns_bind_steps(srv_repository_t *r, repo_job_t *job) {
  if (job->config == NULL || !inference_ModelConfig_has_ensemble_scheduling(job->config))
    return;
  inference_ModelEnsembling *e =
      inference_ModelConfig_mutable_ensemble_scheduling(job->config, job->arena);
  if (e == NULL) SRV_FATAL("out of memory");
  size_t n;
  inference_ModelEnsembling_Step **steps = inference_ModelEnsembling_mutable_step(e, &n);
  for (size_t i = 0; i < n; i++) {
    /* Always written, as tritonserver does: a config's own value binds
     * nothing (without namespaces the field is emptied). */
    const char *ns = NULL;
    if (r->namespacing) {
      upb_StringView name = inference_ModelEnsembling_Step_model_name(steps[i]);
      char *copy = srv_strndup(name.data, name.size);
      const repo_record_t *rec = repo_record_resolve(r, job->record->ns, copy);
      free(copy);
      if (rec != NULL) ns = rec->ns;
    }
    size_t len = ns != NULL ? strlen(ns) : 0;
    char *bytes = upb_Arena_Malloc(job->arena, len + 1);
    if (bytes == NULL) SRV_FATAL("out of memory");
    memcpy(bytes, ns != NULL ? ns : "", len + 1);
    inference_ModelEnsembling_Step_set_model_namespace(
        steps[i], upb_StringView_FromDataAndSize(bytes, len));
  }
}
