/* An ensemble's step list compiled once at load into a graph of numbered
 * tensors and steps, with Triton's checks on the config alone
 * (srv_ensemble_graph_compile) and against the composing models'
 * descriptions (srv_ensemble_graph_check). Loading thread; read-only once
 * the ensemble serves, when any thread may read it. */
#ifndef NEREID_SERVER_SCHED_ENSEMBLE_GRAPH_H
#define NEREID_SERVER_SCHED_ENSEMBLE_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "model_config.upb.h"
#include "server/common/status.h"
#include "server/model/model_view.h"

/** Producer step of an ensemble input. */
#define SRV_ENS_PRODUCER_INPUT UINT32_MAX

/** One use of a tensor: model input `input` of step `step`. */
typedef struct {
  uint32_t step;
  const char *input;
} srv_ens_consumer_t;

/** An ensemble tensor. Ids: the ensemble's inputs in config order, then
 *  each step's outputs, steps in config order and each step's outputs by
 *  model output name. */
typedef struct {
  const char *name;
  /** The step that writes it, or SRV_ENS_PRODUCER_INPUT for an ensemble
   *  input; `producer_output` is that step's model output (NULL for an
   *  ensemble input). */
  uint32_t producer;
  const char *producer_output;
  /** Every (step, model input) reading it, by step then model input name.
   *  Empty only for a tensor that is an ensemble output. */
  srv_ens_consumer_t *consumers;
  uint32_t consumer_count;
  bool is_output; /* an ensemble output */
} srv_ens_tensor_t;

/** A model input or output of a step, and the ensemble tensor bound to it. */
typedef struct {
  const char *name; /* the composing model's input or output */
  uint32_t tensor;
} srv_ens_binding_t;

/** One step: a request to `model_name` at `model_version` (-1: latest). */
typedef struct {
  const char *model_name;
  const char *model_namespace; /* the repository's binding (namespaces), or NULL */
  int64_t model_version;
  srv_ens_binding_t *inputs; /* by model input name */
  uint32_t input_count;
  srv_ens_binding_t *outputs; /* by model output name */
  uint32_t output_count;
  /** Inputs the step waits for: input_count. A run copies it and takes one
   *  off for each consumer entry of a tensor that becomes ready (ensemble
   *  inputs at the start, step outputs as their step completes); the step
   *  starts when its copy reaches 0. A tensor feeding two inputs of one
   *  step has two consumer entries, so the counts agree. */
  uint32_t wait_count;
} srv_ens_step_t;

typedef struct {
  const char *name; /* the ensemble */
  int32_t max_batch_size;
  srv_ens_tensor_t *tensors;
  uint32_t tensor_count;
  uint32_t input_count; /* tensors [0, input_count) are the ensemble inputs */
  srv_ens_step_t *steps;
  uint32_t step_count;
  uint32_t *outputs; /* tensor id of each ensemble output, in config order */
  uint32_t output_count;
  /** The steps in an order where each comes after the steps it reads
   *  from: a run started from it never waits on a later step. */
  uint32_t *order;
  /* name -> tensor id: open addressing, `slot_mask + 1` slots of id + 1
   * (0: empty). */
  uint32_t *slots;
  uint32_t slot_mask;
} srv_ensemble_graph_t;

/** Whether c describes an ensemble (platform "ensemble" or
 *  ensemble_scheduling): it has no backend and no instances, and
 *  srv_ensemble_graph_compile checks it. */
bool srv_ensemble_config_is(const inference_ModelConfig *c);

/** Compiles `config` (`platform: "ensemble"` with ensemble_scheduling) of
 *  ensemble `model` into *out, with the checks Triton makes on the config
 *  alone (model_config_utils.cc: ValidateEnsembleSchedulingConfig), the
 *  ensemble not listing itself as a step, a tensor written by one producer
 *  only (a step output named as an ensemble input included), and the
 *  bounds: steps, tensors and step inputs summed over the steps each at
 *  most SRV_CONFIG_LIST_MAX. Everything is allocated in `arena`. On error
 *  the status (INVALID_ARGUMENT) names the model, `source` (the config's
 *  file or "config override"), the step or tensor and the reason, and *out
 *  is untouched. Time O(steps + mappings) on average, plus the sorting of
 *  each step's maps. */
srv_status_t *srv_ensemble_graph_compile(const inference_ModelConfig *config,
                                         const char *model, const char *source,
                                         upb_Arena *arena, srv_ensemble_graph_t *out);

/** Checks g against its composing models as Triton does
 *  (ensemble_utils.cc: ValidateEnsembleConfig): `ensemble` describes the
 *  ensemble itself (its max_batch_size, inputs and outputs), `models` the
 *  `model_count` composing models, each found by its name. Every mapped
 *  input and output exists, every non-optional model input is mapped, a
 *  model that batches allows at least the ensemble's max_batch_size, and
 *  every tensor has one data type and agreeing dims wherever it is seen (-1
 *  matches any dim; a non-batching side's [-1, d...] matches a batching
 *  side's [d...]), and no step, nor the ensemble's outputs together, mixes
 *  tensors made by different requests of decoupled models. *decoupled is
 *  set to whether a step's model is decoupled: Triton then makes the
 *  ensemble decoupled. On error the status (INVALID_ARGUMENT) is Triton's
 *  text after the model and `source`, and *decoupled is untouched. Reads g
 *  only; any thread. */
srv_status_t *srv_ensemble_graph_check(const srv_ensemble_graph_t *g,
                                       const srv_model_desc_t *ensemble,
                                       const srv_model_desc_t *models,
                                       uint32_t model_count, const char *source,
                                       bool *decoupled);

/** The spec among `n` called `name`, or NULL. */
const srv_tensor_spec_t *srv_ens_spec_find(const srv_tensor_spec_t *specs, uint32_t n,
                                           const char *name);

/** The id of the tensor called `name`, or UINT32_MAX. */
uint32_t srv_ensemble_graph_tensor_find(const srv_ensemble_graph_t *g, const char *name);

#endif
