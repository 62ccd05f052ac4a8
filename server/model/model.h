/* A loaded model version (TRITONBACKEND_Model) and its instances
 * (TRITONBACKEND_ModelInstance). The model's actor is its scheduler: it
 * alone touches the queue and the idle list. Each instance is a pinned
 * actor that runs the backend's execute on its own thread. Everything else
 * is set while loading and read-only while the model serves. */
#ifndef NEREID_SERVER_MODEL_MODEL_H
#define NEREID_SERVER_MODEL_MODEL_H

#include <semaphore.h>
#include <stdbool.h>

#include "actors/actor.h"
#include "actors/epoch.h"
#include "actors/timer.h"
#include "server/common/status.h"
#include "server/model/backend.h"
#include "server/model/model_view.h"
#include "server/model/request.h"
#include "server/sched/batcher.h"
#include "server/sched/queue.h"
#include "server/sched/rate_limiter.h"
#include "server/stats/stats.h"
#include "server/stats/thread_slot.h"

typedef struct TRITONBACKEND_ModelInstance srv_instance_t;

/* What one writer slot (stats/thread_slot.h) of threads writes in a model
 * on every request, on a line of its own: their share of the sliced
 * references (model.c, "References") and their sends under way through
 * the gate (sched/gate.c). */
typedef struct {
  _Alignas(SRV_SLOT_LINE) _Atomic int64_t refs; /* +1/-1 of this slot's threads */
  _Atomic uint32_t senders;
} srv_model_slot_t;

/* Message kinds of the model actor. */
enum {
  SRV_MODEL_REQUEST = 0x200, /* a TRITONBACKEND_Request to schedule */
  SRV_MODEL_INSTANCE_IDLE,   /* an instance finished its batch */
  SRV_MODEL_CANCEL,          /* a request's cancel_msg */
  SRV_MODEL_TIMER,           /* the batching delay or a queue timeout is due */
  SRV_MODEL_STOP,            /* srv_model_stop: fail what waits, then stop */
  SRV_MODEL_STOP_RETRY,      /* a gated send was under way: look again */
  SRV_MODEL_STOPPED,         /* the actor's final message */
  SRV_MODEL_SEQ_END,         /* srv_model_sequence_end (sched/sequence.c) */
  SRV_MODEL_RL_WITHDRAWN,    /* the rate limiter gave back a waiting ask */
  SRV_MODEL_RL_DETACHED,     /* the rate limiter let go of the instances */
};

struct TRITONBACKEND_Model {
  char *name;
  int64_t version;
  uint64_t serial;         /* srv_model_serial */
  char version_string[24]; /* as the protocol spells it, made once at load */
  char *dir;               /* <repository>/<model> */
  char *version_dir;       /* <repository>/<model>/<version> */
  upb_Arena *arena;        /* holds config and everything derived from it */
  inference_ModelConfig *config;
  char *config_json;
  bool config_settable;  /* during TRITONBACKEND_ModelInitialize only */
  bool config_replaced;  /* TRITONBACKEND_ModelSetConfig replaced it */
  bool groups_defaulted; /* the config named no instance group */
  size_t config_json_len;
  int32_t max_batch_size;
  bool decoupled;
  srv_tensor_spec_t *inputs, *outputs;
  uint32_t input_count, output_count;
  const char **output_names; /* default requested outputs */
  TRITONBACKEND_Backend *backend;
  void *state; /* the backend's */
  struct srv_server *server;
  srv_instance_t **instances;
  uint32_t instance_count;
  srv_stats_t stats;
  /* Set once by the model actor when it closes for good; read by every
   * sender (srv_model_send). Among read-mostly fields: no line that
   * requests write. */
  _Atomic bool closed;
  /* References while the registry publishes the model are sliced: counted
   * in `slots`, inside a section of `ref_epoch` (the registry's domain, set
   * once, with `sliced`); see model.c, "References". Read per reference. */
  _Atomic bool sliced;
  act_epoch_t *_Atomic ref_epoch;
  /* The registry's (its writer thread): whether the model was sliced once,
   * and whether `refs` still holds SRV_MODEL_REF_BIAS. */
  bool was_sliced, biased;
  /* Lifetime: counted references, one held by the registry while the model
   * is published, one by each request's shared state and by each lookup
   * still using it. The unref that drops the last calls `drained` (set by
   * the repository before it publishes the model). While sliced, most are
   * in `slots` and this holds a bias instead (model.c). Its own line, away
   * from what the model actor and the instances read. The model is
   * allocated aligned (aligned_alloc) for these lines. */
  _Alignas(SRV_SLOT_LINE) _Atomic uint64_t refs;
  void (*drained)(srv_model_t *m);
  act_msg_t drained_msg;     /* the repository's, to tell its actor */
  void *repo_record;         /* the repository's record of this model name */
  /* Read-only once loaded (the model actor reads it per batch): off the
   * line of refs, which frontends write. */
  _Alignas(SRV_SLOT_LINE) srv_batcher_t batcher;
  struct srv_seq_sched *seq; /* the sequence batcher's; NULL without one */
  struct srv_ensemble *ens;  /* an ensemble's scheduler; NULL for other models */
  /* The server's response cache when this model uses it (config
   * response_cache.enable, ../cache/cache_hook.h); else NULL. */
  struct srv_cache *cache;
  act_actor_t actor;         /* the scheduler */
  act_msg_t stop_msg, stop_retry_msg, stopped_msg;
  sem_t stopped; /* posted by the scheduler when it handled stopped_msg */
  /* The waiter's (srv_model_wait_stopped_until): which posts it consumed. */
  uint32_t waited_instances;
  bool waited_stopped;
  /* Per writer slot: sliced references, and the sends to the model actor
   * from outside its owner chain (enqueue, cancel, ordered responses),
   * which pass a gate so that none comes after the actor's final message:
   * each thread writes its own slot, so no line is written by two. */
  srv_model_slot_t slots[SRV_THREAD_SLOTS];
  /* Scheduler state: the model actor only (a line of its own). */
  _Alignas(SRV_SLOT_LINE) srv_queue_t queue;
  srv_instance_t *idle;
  uint32_t idle_count, started_count;
  act_timer_t timer;
  act_msg_t timer_msg;
  uint64_t timer_at; /* armed for this deadline; 0: not armed */
  bool timer_flying; /* fired or uncancellable: timer_msg is on its way */
  uint64_t watch_at;  /* the next queue sweep for lazy watching; 0: none due */
  bool stopping, retry_sent;
  srv_infer_state_t *order_head, *order_tail; /* preserve_ordering */
  /* The rate limiter (sched/rate_limiter_model.c): the instances' tickets
   * are attached from load until the limiter answers rl_detach. */
  struct srv_rl *rl; /* the server's limiter; NULL: off, or no instance */
  bool rl_detaching, rl_detached;
  srv_rl_detach_t rl_detach;
  act_msg_t rl_detached_msg;
};

struct TRITONBACKEND_ModelInstance {
  act_actor_t actor; /* pinned: its thread runs the backend */
  srv_model_t *model;
  uint32_t index; /* in model->instances */
  char *name;
  TRITONSERVER_InstanceGroupKind kind;
  int32_t device_id;
  void *state; /* the backend's */
  bool initialized;
  bool device_bound;             /* the instance's thread made its GPU current */
  char *host_policy; /* its group's host_policy, else "cpu", "gpu_<N>", "model" */
  bool started;                  /* its thread runs */
  sem_t finalized;               /* posted by the stop handler, after finalize */
  srv_instance_t *next_idle;     /* the model actor's idle list */
  act_msg_t execute_msg;         /* model actor -> instance: run `batch` */
  TRITONBACKEND_Request **batch; /* grown by the batcher while idle */
  uint32_t batch_count, batch_cap;
  act_msg_t idle_msg; /* instance -> model actor */
  act_msg_t stop_msg;
  /* Its group's rate_limiter (in the model's config arena) and, with the
   * rate limiter on, its ticket (rate_limiter.md); NULL otherwise. */
  const inference_ModelRateLimiter *rate_limiter;
  srv_rl_ticket_t *rl_ticket;
  /* Requests in the backend's Execute now, 0 otherwise; written by the
   * instance's thread, read only for shutdown's log of what it abandons. */
  _Atomic uint32_t executing;
};

/** Loads version `version` of the model in `dir` (named `name`): takes a
 *  copy of `config` (or reads <dir>/config.pbtxt when config is NULL),
 *  completes it, acquires its backend, initializes the model and its
 *  instances, and starts its actors. `config_source` names where config
 *  came from in errors (NULL: <dir>/config.pbtxt). The model starts with
 *  one reference (the caller's). On error everything acquired is released
 *  and the status says why. A loading thread outside the runtime. */
srv_status_t *srv_model_load(struct srv_server *srv, const char *dir, const char *name,
                             int64_t version, const inference_ModelConfig *config,
                             const char *config_source, srv_model_t **out);

/** Stops the model: requests still queued or arriving later are answered
 *  UNAVAILABLE; once every instance finished its batch, the scheduler stops
 *  them and itself. Any thread outside the model's own actors. */
void srv_model_stop(srv_model_t *m);

/** After srv_model_stop: waits for the instances' finalize and the
 *  scheduler's stop. A thread outside the runtime. */
void srv_model_wait_stopped(srv_model_t *m);

/** srv_model_wait_stopped bounded by a deadline (common/deadline.h): true
 *  once the model has stopped, false at the deadline. It may be called
 *  again; what it saw stays seen. One waiting thread, outside the runtime. */
bool srv_model_wait_stopped_until(srv_model_t *m, uint64_t deadline_ns);

/** For an exit that cannot wait any longer, on a model that stopped:
 *  TRITONBACKEND_ModelFinalize, freeing nothing. Main thread. */
void srv_model_finalize(srv_model_t *m);

/** For the same exit, on a model that did not stop: logs each instance
 *  still inside Execute and the requests it holds, and marks the model's
 *  backend abandoned (srv_backends_abandon leaves it alone). Touches
 *  nothing the model's threads use. Main thread. */
void srv_model_abandon(srv_model_t *m);

/** Drops the references m holds on other models (an ensemble's on its
 *  composing models), for a shutdown that frees every model in any order.
 *  After m stopped. */
void srv_model_drop_dependencies(srv_model_t *m);

/** Finalizes the backend's model state and frees the model. After
 *  srv_model_stop, once the model's actor has handled its stop message and
 *  its instances have finalized (srv_instances_wait). A thread outside the
 *  runtime (the backend's finalize may block). */
void srv_model_free(srv_model_t *m);

/** Sends msg to the model's actor unless the actor has closed for good
 *  (it is sending its final message); false then, and msg is still the
 *  caller's. Any thread; lock-free; writes only the calling thread's own
 *  gate slot (sched/gate.c). */
bool srv_model_send(srv_model_t *m, act_msg_t *msg);

/** Closes m's gate for good: every srv_model_send from now on returns
 *  false. True when no send that passed the gate is still under way (the
 *  actor may send itself its final message); false when one may be: look
 *  again later (the model actor sends itself SRV_MODEL_STOP_RETRY). The
 *  model actor only. */
bool srv_model_gate_close(srv_model_t *m);

/** The second half of srv_model_enqueue: r goes to the model's queue (or
 *  is answered UNAVAILABLE when the model is unloading), past tracing and
 *  the response cache; for a request whose lookup missed on a cache
 *  library's call thread (../cache/cache_hook.c). Any thread owning r. */
void srv_model_enqueue_uncached(srv_model_t *m, TRITONBACKEND_Request *request);

/** Answers request r with an error response (code, message) and releases
 *  it, counting a failure: for requests the server refuses before they
 *  run. Any thread that owns r (the model actor for queued requests). */
void srv_request_fail(TRITONBACKEND_Request *r, TRITONSERVER_Error_Code code,
                      const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Whether input `name` (one of m's input names) allows ragged batches. */
bool srv_model_input_ragged(const srv_model_t *m, const char *name);

/* Instances (instance.c). */
srv_status_t *srv_instances_create(srv_model_t *m);
void srv_instances_stop(srv_model_t *m);
/** Waits until every started instance has finalized. Outside the runtime. */
void srv_instances_wait(srv_model_t *m);
void srv_instances_free(srv_model_t *m);

#endif
