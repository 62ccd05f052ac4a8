/* The repository's life: creation, the start-up loads of each control
 * mode, poll mode's rescans, and the two-step shutdown. The main thread
 * runs start-up and shutdown; polling runs on the repository actor. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/repository/repo_agent.h"
#include "server/repository/repo_internal.h"

srv_repository_t *srv_repository_new(srv_server_t *srv) {
  srv_repository_t *r = calloc(1, sizeof *r);
  if (r == NULL) SRV_FATAL("out of memory");
  r->srv = srv;
  r->registry = srv_registry_new();
  r->namespacing = srv->options->model_namespacing;
  repo_roots_init(&r->roots, srv->options);
  atomic_init(&r->notifiers, 0);
  atomic_init(&r->closed, false);
  act_timer_init(&r->reclaim_timer);
  act_timer_init(&r->poll_timer);
  r->reclaim_msg.kind = REPO_RECLAIM;
  r->poll_msg.kind = REPO_POLL;
  r->close_msg.kind = REPO_CLOSE;
  r->stop_msg.kind = REPO_STOP;
  sem_init(&r->close_sem, 0, 0);
  act_actor_init(&r->actor, srv->runtime, repo_behaviour, r);
  repo_loaders_start(r);
  return r;
}

srv_registry_t *srv_repository_registry(srv_repository_t *r) { return r->registry; }

void srv_repository_submit(srv_repository_t *r, srv_repo_op_t *op) {
  op->msg.kind = REPO_OP;
  op->status = NULL;
  act_send(&r->actor, &op->msg);
}

/* ---- Start-up ------------------------------------------------------------- */

static void startup_done(srv_repo_op_t *op) { sem_post(op->ctx); }

static bool name_listed(const srv_repo_model_t *models, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(models[i].name, name) == 0) return true;
  return false;
}

/* The models start-up loads: every model folder (with namespaces, one per
 * root holding it), or --load-model's list (no namespace: each one holding
 * the name). Names and namespaces only; dir is unused. */
static void startup_models(const srv_options_t *opt, srv_repo_listing_t *out) {
  bool all = strcmp(opt->model_control_mode, "explicit") != 0;
  for (size_t i = 0; i < opt->load_model_count; i++)
    if (strcmp(opt->load_models[i], "*") == 0) all = true;
  *out = (srv_repo_listing_t){0};
  if (all)
    (opt->model_namespacing ? srv_repo_scan_ns : srv_repo_scan)(
        opt->model_repositories, opt->model_repository_count, false, out);
  srv_repo_model_t *grown =
      realloc(out->models, (out->count + opt->load_model_count + 1) * sizeof *grown);
  if (grown == NULL) SRV_FATAL("out of memory");
  out->models = grown;
  for (size_t i = 0; i < opt->load_model_count; i++) {
    const char *name = opt->load_models[i];
    if (strcmp(name, "*") != 0 && !name_listed(out->models, out->count, name))
      out->models[out->count++] = (srv_repo_model_t){.name = srv_strdup(name)};
  }
}

/* Poll mode with a period: the timer polls. An embedding program that
 * asks for no period (0) polls itself (SRV_REPO_POLL), as Triton's
 * in-process server only polls when asked. */
static bool poll_timed(const srv_repository_t *r) {
  return strcmp(r->srv->options->model_control_mode, "poll") == 0 &&
         r->srv->options->repository_poll_secs > 0;
}

static void poll_arm(srv_repository_t *r) {
  uint64_t period = (uint64_t)r->srv->options->repository_poll_secs * 1000000000ull;
  r->poll_armed = true;
  act_timer_arm(r->srv->runtime, &r->poll_timer, act_now_ns() + period, &r->actor,
                &r->poll_msg);
}

bool srv_repository_start(srv_repository_t *r) {
  srv_repo_listing_t models;
  startup_models(r->srv->options, &models);
  size_t n = models.count;
  srv_repo_op_t *ops = calloc(n + 1, sizeof *ops);
  sem_t done;
  sem_init(&done, 0, 0);
  if (ops == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    ops[i] = (srv_repo_op_t){.kind = SRV_REPO_LOAD,
                             .name = models.models[i].name,
                             .ns = models.models[i].ns,
                             .done = startup_done,
                             .ctx = &done};
    srv_repository_submit(r, &ops[i]);
  }
  bool all_loaded = true;
  for (size_t i = 0; i < n; i++) sem_wait(&done);
  for (size_t i = 0; i < n; i++) {
    /* sem_wait made each op's status visible (the post came after it). */
    if (ops[i].status != NULL) all_loaded = false;
    srv_status_free(ops[i].status);
  }
  sem_destroy(&done);
  free(ops);
  srv_repo_listing_free(&models);
  if (poll_timed(r)) act_send(&r->actor, &r->poll_msg); /* the first poll arms the timer */
  return all_loaded;
}

/* ---- Poll mode (the repository actor) ------------------------------------- */

/* A scan starts; it serves every asker waiting so far. */
static void scan_start(srv_repository_t *r) {
  if (r->closing || r->scanning) return;
  r->scanning = true;
  while (r->poll_waiting != NULL) {
    srv_repo_op_t *op = r->poll_waiting;
    r->poll_waiting = op->next;
    op->next = r->poll_serving;
    r->poll_serving = op;
  }
  repo_job_queue(r, repo_job_new(JOB_SCAN));
}

void repo_poll_start(srv_repository_t *r) {
  r->poll_armed = false; /* the timer's message: it fired */
  scan_start(r);
}

/* Answers the askers whose scan's operations are all answered, then starts
 * the scan that those who came since wait for. */
static void poll_answer_if_done(srv_repository_t *r) {
  if (r->poll_pending > 0 || r->scanning) return;
  while (r->poll_answering != NULL) {
    srv_repo_op_t *op = r->poll_answering;
    r->poll_answering = op->next;
    op->status = NULL;
    op->done(op);
  }
  if (r->poll_waiting != NULL) scan_start(r);
}

void repo_poll_asked(srv_repository_t *r, srv_repo_op_t *op) {
  op->next = r->poll_waiting;
  r->poll_waiting = op;
  /* A scan while the last one's loads still run would load them twice. */
  if (r->poll_pending == 0) scan_start(r);
}

void repo_poll_refuse_waiting(srv_repository_t *r,
                              srv_status_t *(*why)(const srv_repo_op_t *)) {
  while (r->poll_waiting != NULL) {
    srv_repo_op_t *op = r->poll_waiting;
    r->poll_waiting = op->next;
    op->status = why(op);
    op->done(op);
  }
}

/* `done` of the operations a scan starts: the askers wait for all of them. */
static void poll_op_answered(srv_repo_op_t *op) {
  srv_repository_t *r = op->ctx;
  repo_op_free(op);
  r->poll_pending--;
  poll_answer_if_done(r);
}

static void poll_submit(srv_repository_t *r, srv_repo_op_kind_t kind, const char *ns,
                        const char *name) {
  srv_repo_op_t *op = repo_op_new(kind, ns, name);
  op->done = poll_op_answered;
  op->ctx = r;
  r->poll_pending++;
  srv_repository_submit(r, op);
}

/* Loads what appeared or changed, unloads what disappeared. A model busy
 * with an operation, or loaded from a client's override, is left alone. */
void repo_poll_result(srv_repository_t *r, repo_job_t *job) {
  const srv_repo_listing_t *l = &job->listing;
  for (size_t i = 0; i < l->count; i++) {
    const srv_repo_model_t *m = &l->models[i];
    repo_record_t *rec = repo_record_find(r, m->ns, m->name);
    if (rec != NULL && (rec->running != NULL || rec->from_override)) continue;
    if (rec != NULL && !repo_record_unloaded(rec) && rec->fingerprint == m->fingerprint)
      continue;
    char id[REPO_ID_SIZE];
    SRV_VERBOSE(1, "poll: %s '%s'", rec == NULL ? "new model" : "model changed",
                repo_id(id, m->ns, m->name));
    /* A reload that fails keeps the old versions and this fingerprint: it
     * is tried again when the folder changes again. */
    if (rec != NULL) rec->fingerprint = m->fingerprint;
    poll_submit(r, SRV_REPO_LOAD, m->ns, m->name);
  }
  for (size_t i = 0; i < r->record_count; i++) {
    repo_record_t *rec = r->records[i];
    if (rec->running != NULL || rec->from_override || repo_record_unloaded(rec)) continue;
    if (srv_repo_listing_find_ns(l, rec->ns, rec->name) != NULL) continue;
    char id[REPO_ID_SIZE];
    SRV_VERBOSE(1, "poll: model '%s' was removed", repo_id(id, rec->ns, rec->name));
    poll_submit(r, SRV_REPO_UNLOAD, rec->ns, rec->name);
  }
  /* An asked scan may finish while the timer is armed: it stays as it is. */
  if (!r->closing && !r->poll_armed && poll_timed(r)) poll_arm(r);
  while (r->poll_serving != NULL) {
    srv_repo_op_t *op = r->poll_serving;
    r->poll_serving = op->next;
    op->next = r->poll_answering;
    r->poll_answering = op;
  }
  poll_answer_if_done(r);
}

/* ---- Shutdown ------------------------------------------------------------- */

bool srv_repository_stop(srv_repository_t *r, uint64_t deadline_ns) {
  if (r->models_stopping) return true;
  if (!r->close_sent) {
    /* No more drained notices (see model_drained); wait out any being sent. */
    atomic_store_explicit(&r->closed, true, memory_order_seq_cst);
    /* acquire: pairs with the notifier's release decrement. */
    while (atomic_load_explicit(&r->notifiers, memory_order_acquire) != 0) sched_yield();
    r->close_done = &r->close_sem; /* the send below publishes it to the actor */
    act_send(&r->actor, &r->close_msg);
    r->close_sent = true;
  }
  /* The post (once no job runs) also hands the actor's state to us. */
  if (!srv_sem_wait_until(&r->close_sem, deadline_ns)) return false;
  repo_loaders_stop(r);
  act_send_stop(&r->actor, &r->stop_msg);
  for (size_t i = 0; i < r->live_count; i++) srv_model_stop(r->live[i].model);
  r->models_stopping = true;
  return true;
}

bool srv_repository_wait(srv_repository_t *r, uint64_t deadline_ns) {
  if (!r->models_stopping) return false;
  bool all = true; /* once the deadline has passed, each wait only looks */
  for (size_t i = 0; i < r->live_count; i++)
    if (!srv_model_wait_stopped_until(r->live[i].model, deadline_ns)) all = false;
  return all;
}

void srv_repository_abandon(srv_repository_t *r) {
  if (!r->models_stopping) {
    SRV_ERROR(
        "a model load or unload was still running: no model and no backend is "
        "finalized");
    return;
  }
  /* A deadline already past: only what has stopped by now counts. */
  for (size_t i = 0; i < r->live_count; i++) {
    srv_model_t *m = r->live[i].model;
    if (srv_model_wait_stopped_until(m, 0))
      srv_model_finalize(m);
    else
      srv_model_abandon(m);
  }
  srv_backends_abandon(r->srv);
}

static void tempdirs_remove(srv_repository_t *r) {
  repo_tempdir_t **all = calloc(r->live_count + r->record_count + 1, sizeof *all);
  if (all == NULL) SRV_FATAL("out of memory");
  size_t n = 0;
  for (size_t i = 0; i < r->live_count; i++) all[n++] = r->live[i].tempdir;
  for (size_t i = 0; i < r->record_count; i++) all[n++] = r->records[i]->tempdir;
  for (size_t i = 0; i < n; i++) {
    if (all[i] == NULL) continue;
    repo_tempdir_t *t = all[i];
    for (size_t j = i; j < n; j++)
      if (all[j] == t) all[j] = NULL;
    if (t->path != NULL) srv_load_override_remove(t->path);
    repo_agents_free(t->agents); /* the models are gone: UNLOAD, UNLOAD_COMPLETE */
    free(t->path);
    free(t);
  }
  free(all);
}

void srv_repository_free(srv_repository_t *r) {
  for (size_t i = 0; i < r->live_count; i++) srv_model_wait_stopped(r->live[i].model);
  /* Ensembles hold references on their composing models, which may come
   * first in the list: every reference goes before any model is freed. */
  for (size_t i = 0; i < r->live_count; i++)
    srv_model_drop_dependencies(r->live[i].model);
  for (size_t i = 0; i < r->live_count; i++) srv_model_free(r->live[i].model);
  tempdirs_remove(r);
  free(r->live);
  srv_registry_free(r->registry);
  for (size_t i = 0; i < r->record_count; i++) repo_record_free(r->records[i]);
  free(r->records);
  free(r->loaders);
  repo_roots_fini(&r->roots);
  sem_destroy(&r->close_sem);
  struct srv_server *srv = r->srv;
  free(r);
  srv_backends_finalize(srv); /* what no other server uses */
}
