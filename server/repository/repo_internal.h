/* What the repository actor (repository.c) and its loader threads
 * (repo_jobs.c) share: model records, jobs, the repository itself. Records
 * and the job queue belong to the repository actor; a job belongs to the
 * loader running it from dispatch until it is sent back. */
#ifndef NEREID_SERVER_REPOSITORY_REPO_INTERNAL_H
#define NEREID_SERVER_REPOSITORY_REPO_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "actors/timer.h"
#include "server/model/model.h"
#include "server/repository/model_name.h"
#include "server/repository/repo_scan.h"
#include "server/repository/repository.h"

/* Message kinds of the repository actor. */
enum {
  REPO_OP = 0x300,    /* srv_repo_op_t */
  REPO_JOB_DONE,      /* repo_job_t, back from a loader */
  REPO_MODEL_DRAINED, /* a model's drained_msg: its last reference is gone */
  REPO_RECLAIM,       /* timer: free registry views no reader holds */
  REPO_POLL,          /* timer: rescan the repositories */
  REPO_CLOSE,         /* shutdown: refuse new work, report when idle */
  REPO_STEPS_DONE,    /* a record's steps_msg: its ensemble's step loads are answered */
  REPO_STOP,
};

/* Who asked for an operation (srv_repo_op_t.origin). */
enum {
  REPO_ORIGIN_ASKED = 0, /* a client, start-up or poll */
  REPO_ORIGIN_STEP,      /* load a model an ensemble's step uses, if not loaded */
  REPO_ORIGIN_REBIND,    /* load an ensemble again: a model its steps use loaded */
  REPO_ORIGIN_CASCADE,   /* unload: a model it uses, or that uses it, unloads */
};

/* What a load leaves that outlives its models: a private model folder
 * (load with file overrides) and the chain of repository agents that saw
 * the load (repo_agent.h). Released once no live model uses it and it is
 * no longer its record's: the folder is removed, the agents unloaded. */
typedef struct {
  char *path;                 /* or NULL */
  struct repo_agents *agents; /* or NULL */
  size_t users;
} repo_tempdir_t;

/* Everything the repository knows about one model name (with
 * --model-namespacing, one name in one namespace). */
typedef struct repo_record {
  char *name;
  char *ns; /* namespace: its root, "" for file overrides; NULL without namespaces */
  srv_model_state_t state;
  char *reason;           /* UNAVAILABLE: why */
  srv_model_t **versions; /* published, ascending */
  size_t version_count;
  srv_version_failure_t *failures;
  size_t failure_count;
  uint64_t fingerprint;    /* of the folder when it last loaded (poll mode) */
  bool from_override;      /* loaded with a config or files of a client's */
  bool ever_loaded;        /* some version of it was ready once */
  repo_tempdir_t *tempdir; /* current private folder, or NULL */
  char **deps;             /* models the loaded ensemble's steps use */
  size_t dep_count;
  bool explicit_load;        /* an asker loaded it (not only as an ensemble's step) */
  bool asked_load;           /* the running load (or one joined) is an asker's */
  bool mark;                 /* repo_deps.c's graph walks */
  bool orphaned;             /* unloaded, or failed, for want of a step's model */
  struct repo_job *load_job; /* the running load's job, while it exists */
  /* The running load's job waits for the loads of its steps' models: */
  size_t steps_pending;      /* step loads not answered yet */
  srv_status_t *steps_error; /* the first step that has no ready version */
  act_msg_t steps_msg;       /* REPO_STEPS_DONE, once steps_pending is 0 */
  /* The running unload waits for the unloads it caused: */
  size_t cascade_pending;
  struct repo_record *later_next; /* srv_repository.later_head */
  bool later_queued;
  srv_repo_op_t *running; /* the operation under way, or NULL */
  srv_repo_op_t *joined;  /* loads that joined the running one */
  srv_repo_op_t *queue_head, *queue_tail;
  size_t draining; /* left the registry, not yet destroyed */
} repo_record_t;

typedef enum {
  JOB_LOAD = 1,
  JOB_DESTROY,
  JOB_SCAN,
  JOB_REMOVE_DIR,
  JOB_RESOLVE, /* the namespaces holding a name (repo_ns.c) */
} repo_job_kind_t;

typedef struct repo_job {
  act_msg_t msg; /* to a loader; back to the repository as REPO_JOB_DONE */
  repo_job_kind_t kind;
  struct repo_job *next; /* the repository's queue */
  struct repo_loader *loader;
  /* JOB_LOAD in */
  repo_record_t *record;
  const srv_load_override_t *override; /* NULL or the running op's */
  /* JOB_LOAD runs twice for an ensemble: first it reads the config and its
   * steps' models (deps), then, once the repository has loaded those, it
   * loads the versions. The config lives in `arena` in between. */
  bool steps_ready;
  bool parked; /* with the repository, waiting for step loads */
  struct upb_Arena *arena;
  inference_ModelConfig *config;
  /* JOB_LOAD out */
  char *dir;               /* model folder; JOB_REMOVE_DIR: the one to remove */
  repo_tempdir_t *tempdir; /* made for the files of the override */
  uint64_t fingerprint;
  bool mapped;          /* the folder is served under another name */
  srv_status_t *error;  /* the model as a whole failed */
  bool no_folder;       /* ... because no repository has its folder */
  srv_model_t **models; /* loaded versions, one reference each */
  size_t model_count;
  srv_version_failure_t *failures;
  size_t failure_count;
  char **deps;
  size_t dep_count;
  /* JOB_LOAD: the agents while loading; JOB_REMOVE_DIR: to unload */
  struct repo_agents *agents;
  /* JOB_DESTROY */
  srv_model_t *model;
  /* JOB_SCAN; JOB_RESOLVE: out, the folders of `op`'s name (ns set) */
  srv_repo_listing_t listing;
  /* JOB_RESOLVE: in, the operation whose name is resolved */
  srv_repo_op_t *op;
} repo_job_t;

typedef struct repo_loader {
  act_actor_t actor; /* pinned: loads block */
  act_msg_t stop_msg;
  struct srv_repository *repo;
  struct repo_loader *next_idle;
  bool started;
} repo_loader_t;

/* A registered folder served under another model name. */
typedef struct {
  char *model; /* the name it is served under */
  char *dir;   /* <root>/<folder> */
  char *root;  /* the registration it came with */
} repo_mapping_t;

/* The roots now (repo_roots.c): any thread, under `lock`. */
typedef struct {
  pthread_mutex_t lock;
  char **paths;
  size_t count;
  repo_mapping_t *maps;
  size_t map_count;
} repo_roots_t;

/* A model alive (loaded, not yet destroyed) and its private folder. */
typedef struct {
  srv_model_t *model;
  repo_tempdir_t *tempdir;
} repo_live_t;

struct srv_repository {
  act_actor_t actor;
  struct srv_server *srv;
  srv_registry_t *registry;
  repo_roots_t roots;
  /* Threads of models dropping their last reference (any thread) and the
   * main thread at shutdown: see model_drained in repository.c. */
  _Atomic uint32_t notifiers;
  _Atomic bool closed;
  bool namespacing; /* --model-namespacing; set at creation */
  /* The repository actor's state. */
  repo_record_t **records;
  size_t record_count, record_cap;
  repo_live_t *live;
  size_t live_count, live_cap;
  repo_loader_t *loaders;
  size_t loader_count;
  repo_loader_t *idle;
  repo_job_t *jobs_head, *jobs_tail;
  size_t jobs_running;
  size_t jobs_parked;        /* load jobs waiting for their steps' models */
  repo_record_t *later_head; /* unloads to finish at the end of the turn */
  bool closing;
  bool scanning;
  /* SRV_REPO_POLL askers: waiting for a scan to start; served by the scan
   * under way; answered once the operations its result started
   * (poll_pending, any scan's) are answered. Lists linked through next. */
  srv_repo_op_t *poll_waiting, *poll_serving, *poll_answering;
  size_t poll_pending;
  bool reclaim_armed, poll_armed;
  uint64_t reclaim_delay_ns;
  sem_t *close_done; /* posted once closing and idle */
  /* The main thread's, at shutdown: close_done points here, and how far
   * srv_repository_stop got (it may be called again after a timeout). */
  sem_t close_sem;
  bool close_sent, models_stopping;
  act_timer_t reclaim_timer, poll_timer;
  act_msg_t reclaim_msg, poll_msg, close_msg, stop_msg;
};

/* repository.c: the actor. */
void repo_behaviour(act_actor_t *self, act_msg_t *msg);
/** The record of namespace `ns` (NULL: none) and `name`, or NULL. */
repo_record_t *repo_record_find(srv_repository_t *r, const char *ns, const char *name);
/** The record of `name`, created when missing. Records of names that are
 *  not listed are dropped once idle (record_drop_if_unknown). */
repo_record_t *repo_record_get(srv_repository_t *r, const char *ns, const char *name);
/** The record a step naming `name` means to an ensemble of namespace
 *  `ns`: its own namespace's, else the only one of that name that is not
 *  unloaded (tritonserver's rule), else NULL. Without namespaces,
 *  repo_record_find. */
repo_record_t *repo_record_resolve(srv_repository_t *r, const char *ns, const char *name);
/** Whether a record is unloaded: never loaded, or unloaded since. */
bool repo_record_unloaded(const repo_record_t *rec);
/** Answers an operation (as the end of its run would): sets its status,
 *  tells the ensemble or unload waiting for it, calls `done`. */
void repo_op_done(srv_repository_t *r, srv_repo_op_t *op, srv_status_t *st);
void repo_record_free(repo_record_t *rec);
repo_job_t *repo_job_new(repo_job_kind_t kind);
void repo_job_queue(srv_repository_t *r, repo_job_t *job);
/** An unload caused by the running unload of `op->ctx` was answered. */
void repo_cascade_answered(srv_repository_t *r, const srv_repo_op_t *op);
/** Runs an operation now, inside the current turn (as REPO_OP would). */
void repo_op_run(srv_repository_t *r, srv_repo_op_t *op);
/** Discards versions a load made but will not publish: they are destroyed
 *  (counted in the record's `draining`). */
void repo_models_discard(srv_repository_t *r, repo_job_t *job);
/** An operation the repository asks of itself: it owns a copy of `name`
 *  (a record may be gone by the time it runs) and frees itself when done. */
srv_repo_op_t *repo_op_new(srv_repo_op_kind_t kind, const char *ns, const char *name);
/** `done` of the operations the repository asks of itself. */
void repo_op_free(srv_repo_op_t *op);

/* repo_deps.c: ensembles and the models their steps use (actor). */
/** A load job back from its first run: true when the repository keeps it
 *  (it waits for its steps' models, or runs again at once to load the
 *  versions); false when it goes on as a finished load (no steps, an
 *  error, a cycle, closing). */
bool repo_steps_wait(srv_repository_t *r, repo_job_t *job);
/** REPO_STEPS_DONE: the parked job runs again, or comes back failed
 *  (returned, for the caller to finish as a load), or NULL. */
repo_job_t *repo_steps_resume(srv_repository_t *r, repo_record_t *rec);
/** A step load was answered (`op->ctx` is the ensemble's record). */
void repo_steps_answered(srv_repository_t *r, const srv_repo_op_t *op);
/** A loaded ensemble whose steps' models are no longer all ready fails:
 *  sets job->error. Before the load is accepted. */
void repo_steps_check_bound(srv_repository_t *r, repo_job_t *job);
/** Step loads queued on `rec`, which starts to unload, are refused: they
 *  would wait for the unload, which may wait for their ensembles. */
void repo_steps_refuse(srv_repository_t *r, repo_record_t *rec);
/** Unloads, now, the loaded ensembles whose steps use `rec`; `rec`'s
 *  unload waits for them (cascade_pending). */
void repo_users_unload(srv_repository_t *r, repo_record_t *rec);
/** unload_dependents: unloads the models `rec`'s steps use that no asker
 *  loaded and no other ensemble uses; `rec`'s unload waits for them. */
void repo_steps_unload(srv_repository_t *r, repo_record_t *rec);
/** `rec` loaded: reloads the ensembles whose steps use it when this was
 *  a reload, and loads again those that went for want of it (orphaned)
 *  once all their steps' models are ready. */
void repo_users_rebind(srv_repository_t *r, const repo_record_t *rec, bool reload);

/* repo_control.c: start-up, polling, shutdown. */
void repo_poll_start(srv_repository_t *r);
/** An SRV_REPO_POLL operation arrived (not closing). */
void repo_poll_asked(srv_repository_t *r, srv_repo_op_t *op);
/** Closing: answers the askers whose scan has not started. */
void repo_poll_refuse_waiting(srv_repository_t *r, srv_status_t *(*why)(const srv_repo_op_t *));
void repo_poll_result(srv_repository_t *r, repo_job_t *job);

/* repo_ns.c: model namespaces (--model-namespacing). */
/** Room for a model's identifier: a root path, "::" and a name. */
#define REPO_ID_SIZE (PATH_MAX + SRV_MODEL_NAME_MAX + 3)
/** How tritonserver names a model in answers and log lines: its identifier
 *  "<namespace>::<name>" in a namespace; the bare name without namespaces
 *  (`ns` NULL) or in the empty one (file overrides), so that nothing
 *  changes with namespacing off. Written into `buf` when needed; returns
 *  the text. Any thread. */
const char *repo_id(char buf[REPO_ID_SIZE], const char *ns, const char *name);
/** An operation naming no namespace, with namespaces on: it is split into
 *  one part per namespace holding the name (a load asks a loader which
 *  first) and answered once every part is: a client's load with every
 *  failed part listed in tritonserver's words, anything else with the
 *  first error. */
void repo_ns_split(srv_repository_t *r, srv_repo_op_t *op);
/** JOB_RESOLVE back from a loader: the parts start. */
void repo_ns_resolved(srv_repository_t *r, repo_job_t *job);
/** JOB_RESOLVE on a loader: fills job->listing. */
void repo_ns_resolve_run(srv_repository_t *r, repo_job_t *job);
/** Binds each step of a parked ensemble's config to the namespace of the
 *  model its step name resolves to (Step.model_namespace, as tritonserver
 *  sets it; empty without namespaces), so its versions take that model
 *  from the registry. */
void repo_ns_bind_steps(srv_repository_t *r, repo_job_t *job);

/* repo_roots.c: the roots and their mappings. */
void repo_roots_init(repo_roots_t *t, const srv_options_t *opt);
void repo_roots_fini(repo_roots_t *t);
/** The folder of model `name` (malloc'ed) in exactly one root, or through
 *  its mapping (*mapped). No folder at all: *missing, and Triton's INTERNAL
 *  "failed to poll from model repository" (the reason is logged). Blocks on
 *  stat: loader threads. */
srv_status_t *repo_roots_find(repo_roots_t *t, const char *name, char **out,
                              bool *mapped, bool *missing);
/** repo_roots_find in the one root `ns` (a namespace). */
srv_status_t *repo_roots_find_in(repo_roots_t *t, const char *ns, const char *name,
                                 char **out, bool *mapped, bool *missing);
/** The folders of model `name` in every root (through its mapping, if
 *  mapped), each with ns = its root, into *out; none: the error
 *  repo_roots_find gives. Blocks on stat: loader threads. */
srv_status_t *repo_roots_find_all(repo_roots_t *t, const char *name,
                                  srv_repo_listing_t *out);

/* repo_jobs.c: the loaders' side. */
void repo_loaders_start(srv_repository_t *r);
void repo_loaders_stop(srv_repository_t *r);
/** Runs on a loader thread; fills the job's outputs. */
void repo_job_run(srv_repository_t *r, repo_job_t *job);
void repo_job_free(repo_job_t *job);
/** Stops, finalizes and frees a model (blocks until its threads finish). */
void repo_model_destroy(srv_model_t *m);

#endif
