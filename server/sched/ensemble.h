/* The ensemble scheduler: an ensemble model's actor runs each request as a
 * graph of step requests sent to the composing models' own schedulers
 * (see ensemble.md). Set up on the loading thread (ensemble_setup.c);
 * while the ensemble serves, everything below except the pool and the
 * counters is read-only, and those belong to the ensemble's actor. */
#ifndef NEREID_SERVER_SCHED_ENSEMBLE_H
#define NEREID_SERVER_SCHED_ENSEMBLE_H

#include <stddef.h>

#include "actors/actor.h"
#include "server/model/model.h"
#include "server/sched/ensemble_graph.h"

typedef struct srv_ensemble {
  srv_ensemble_graph_t graph;
  /* Per step: its composing model (one reference each, held until the
   * ensemble is freed), whether it is decoupled, the spec of each bound
   * input (the model's own, by graph binding order) and the model's own
   * names of the outputs the step asks for. */
  srv_model_t **models;
  bool *decoupled;
  const srv_tensor_spec_t ***input_specs;
  const char ***output_names;
  bool has_sequences; /* a step's model has sequences (srv_model_has_sequences) */
  /* Scopes (ensemble.md, "Decoupled steps"): 0 is the request's own; the
   * responses of decoupled step s each open a frame of scope s + 1. */
  uint32_t scope_count;
  uint32_t *step_scope;   /* per step: the scope it runs in */
  uint32_t *tensor_scope; /* per tensor: the scope whose frames hold it */
  uint32_t output_scope;  /* the scope whose frames answer the request */
  uint32_t **scope_steps; /* per scope: its steps, in run order */
  uint32_t *scope_step_count;
  /* A run's start, computed at load (ensemble_setup.c, run_plan): a root
   * frame's wait counts (per step, then the answer), the steps of scope 0
   * that wait for nothing, in run order, and per step whether it binds
   * every input its model requires. */
  uint32_t *root_wait;
  uint32_t *root_ready, root_ready_count;
  bool *required_bound;
  /* Per step input (at input_offset): whether its shape check is proven
   * at load: the ensemble's own input, checked by the frontend against a
   * spec of the same type and dims, the two models batching alike. */
  bool *input_proven;
  /* A frame's memory, one block: offsets of its parts. */
  size_t frame_bytes, tensors_at, wait_at, steps_at, inputs_at, kept_at;
  uint32_t *input_offset; /* per step: its first input in the block's inputs */
  /* The actor's. */
  struct ens_frame *pool;   /* frames ready for reuse */
  struct ens_frame *checks; /* frames that may be done, looked at after each message */
  uint32_t runs;            /* runs under way */
  struct srv_ens_run *unwatched_head, *unwatched_tail; /* oldest first */
  bool stopping;
} srv_ensemble_t;

/** Compiles m's ensemble_scheduling (ensemble_graph.h), acquires every
 *  composing model from the registry and checks the graph against them;
 *  on success m->ens is set and m->decoupled says whether the ensemble
 *  streams. `source` names the config in errors. Loading thread. */
srv_status_t *srv_ensemble_setup(srv_model_t *m, const char *source);

/** After srv_stats_init: the per-step statistics. Loading thread. */
void srv_ensemble_stats_init(srv_model_t *m);

/** Drops the composing models' references (NULL m->ens, or dropped
 *  already: nothing). Once the actor stopped. */
void srv_ensemble_models_release(srv_model_t *m);

/** Drops the composing models' references and frees the scheduler (NULL
 *  m->ens: nothing). Once the actor stopped, or the load failed. */
void srv_ensemble_free(srv_model_t *m);

/** Ends sequence `id` (or `id_string`) of `owner` in every step model
 *  that has sequences (srv_model_sequence_end, for a stream that closed).
 *  Any thread holding a reference on m. */
void srv_ensemble_sequence_end(srv_model_t *m, uint64_t id, const char *id_string,
                               uint64_t owner);

/** The ensemble model's actor (SRV_MODEL_* kinds, and the SRV_MSG_INFER_*
 *  answers to its step requests). */
void srv_ensemble_behaviour(act_actor_t *self, act_msg_t *msg);

#endif
