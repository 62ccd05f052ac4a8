/* The sequence backend: stateful example models for the sequence batcher
 * (Triton's simple_sequence, simple_dyna_sequence,
 * simple_string_dyna_sequence, and an implicit-state accumulator). Reads
 * the control inputs named in sequence_batching as ordinary inputs and
 * answers every request, padding (READY=0) included, with one response.
 * Entry points: server loading threads (initialize/finalize) and each
 * instance's execute thread, which alone touches that instance's copy of
 * the config (read-only after load) and its accumulators. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/common/clock.h"
#include "backends/common/config_fetch.h"
#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/execute.h"
#include "backends/common/export.h"
#include "backends/common/input.h"
#include "backends/common/output.h"
#include "backends/common/simple_backend.h"
#include "backends/sequence/seq_accum.h"
#include "backends/sequence/seq_config.h"
#include "backends/sequence/seq_corrid_map.h"

/* An instance: its copy of the config and its accumulators. */
typedef struct {
  bk_model_config_t cfg;
  seq_config_t seq;          /* points into cfg */
  int32_t *slots;            /* SEQ_STORE_SLOT: one accumulator per batch slot */
  seq_corrid_map_t *corrids; /* SEQ_STORE_CORRID */
  uint32_t next_slot;        /* batch slot of the request being answered */
} seq_instance_t;

/* ---- Reading a request ---------------------------------------------------- */

/* Flag `kind` into *value; *value keeps its default when the model has no
 * such control (no READY: always ready; no END: never the end). */
static TRITONSERVER_Error *read_flag(const seq_config_t *seq, seq_kind_t kind,
                                     TRITONBACKEND_Request *request, bool *value) {
  const seq_control_t *c = &seq->controls[kind];
  if (c->name == NULL) return NULL;
  bk_input_t in;
  BK_RETURN_IF_ERROR(bk_input_read(request, c->name, &in));
  bool ok = in.datatype == c->flag.datatype && in.element_count == 1 &&
            seq_flag_decode(&c->flag, in.data, in.byte_size, value);
  bk_input_release(&in);
  if (ok) return NULL;
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                  "control input '%s' (%s): expected one %s element holding the "
                  "configured false or true value",
                  c->name, seq_kind_name(kind), bk_datatype_name(c->flag.datatype));
}

/* The correlation ID: *key for the accumulator map, and its int32 form. */
static TRITONSERVER_Error *read_corrid(const seq_config_t *seq,
                                       TRITONBACKEND_Request *request, uint64_t *key,
                                       int32_t *corrid32) {
  const seq_control_t *c = &seq->controls[SEQ_CORRID];
  if (c->name == NULL) return NULL;
  bk_input_t in;
  BK_RETURN_IF_ERROR(bk_input_read(request, c->name, &in));
  char why[BK_ERROR_MAX / 2] = "";
  bool ok = in.datatype == c->corrid_type && in.element_count == 1 &&
            seq_corrid_decode(in.datatype, in.data, in.byte_size, key, why, sizeof why);
  bk_input_release(&in);
  if (ok) {
    *corrid32 = seq_corrid_int32(*key);
    return NULL;
  }
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                  "control input '%s' (CONTROL_SEQUENCE_CORRID): expected one %s "
                  "element%s%s",
                  c->name, bk_datatype_name(c->corrid_type), why[0] ? ": " : "", why);
}

/* The value input: INT32 of the config's dims, one sequence step. */
static TRITONSERVER_Error *read_value(const seq_instance_t *inst,
                                      TRITONBACKEND_Request *request, bk_input_t *in) {
  const bk_tensor_config_t *t = inst->seq.input;
  BK_RETURN_IF_ERROR(bk_input_read(request, t->name, in));
  char why[BK_ERROR_MAX - 32];
  TRITONSERVER_Error *err = NULL;
  if (in->datatype != TRITONSERVER_TYPE_INT32) {
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                   "input '%s': datatype %s, expected INT32", t->name,
                   bk_datatype_name(in->datatype));
  } else if (!bk_model_config_check_shape(&inst->cfg, t, in->shape, in->dims_count, why,
                                          sizeof why)) {
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
  } else if (inst->cfg.max_batch_size > 0 && in->shape[0] != 1) {
    /* A sequence advances one step per request, as in Triton's backends. */
    err = bk_error(TRITONSERVER_ERROR_UNSUPPORTED,
                   "input '%s': a sequence request carries one step (batch size 1), "
                   "not %lld",
                   t->name, (long long)in->shape[0]);
  }
  if (err != NULL) bk_input_release(in);
  return err;
}

/* ---- Implicit state ------------------------------------------------------- */

static TRITONSERVER_Error *state_read(const seq_config_t *seq,
                                      TRITONBACKEND_Request *request, int32_t *acc) {
  bk_input_t in;
  BK_RETURN_IF_ERROR(bk_input_read(request, seq->state_input, &in));
  bool ok = in.datatype == TRITONSERVER_TYPE_INT32 && in.element_count == 1;
  if (ok) memcpy(acc, in.data, sizeof *acc);
  bk_input_release(&in);
  if (ok) return NULL;
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                  "state input '%s': expected one INT32 element, got %s with %llu",
                  seq->state_input, bk_datatype_name(in.datatype),
                  (unsigned long long)in.element_count);
}

/* Hands the new accumulator to the server as the sequence's next state
 * (the config's dims [ 1 ], behind the batch dim when the model batches). */
static TRITONSERVER_Error *state_write(const seq_instance_t *inst,
                                       TRITONBACKEND_Request *request, int32_t acc) {
  static const int64_t shape[2] = {1, 1};
  uint32_t dims = inst->cfg.max_batch_size > 0 ? 2 : 1;
  TRITONBACKEND_State *state = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_StateNew(&state, request, inst->seq.state_output,
                                            TRITONSERVER_TYPE_INT32, shape, dims));
  void *buf = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t type_id = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_StateBuffer(state, &buf, sizeof acc, &type, &type_id));
  if (type == TRITONSERVER_MEMORY_GPU) {
    return bk_error(TRITONSERVER_ERROR_UNSUPPORTED,
                    "state '%s': the server placed it in GPU memory; this backend "
                    "writes CPU memory only",
                    inst->seq.state_output);
  }
  memcpy(buf, &acc, sizeof acc);
  return TRITONBACKEND_StateUpdate(state);
}

/* ---- Computing ------------------------------------------------------------ */

/* OUTPUT, when requested, shaped like the value input: `acc` in every
 * element, or the control sum when acc is NULL. */
static TRITONSERVER_Error *write_output(const seq_instance_t *inst,
                                        TRITONBACKEND_Request *request,
                                        TRITONBACKEND_Response *response,
                                        const bk_input_t *in, const seq_step_t *step,
                                        const int32_t *acc) {
  const char *name = inst->seq.output->name;
  bool wanted = false;
  BK_RETURN_IF_ERROR(bk_output_requested(request, name, &wanted));
  if (!wanted) return NULL;
  void *out = NULL;
  BK_RETURN_IF_ERROR(bk_output_new(response, name, TRITONSERVER_TYPE_INT32, in->shape,
                                   in->dims_count, in->byte_size, &out));
  size_t n = (size_t)in->element_count;
  if (acc != NULL) {
    seq_fill(out, n, *acc);
  } else {
    seq_control_sum(in->data, out, n, step);
  }
  return NULL;
}

/* One ready step of an accumulating model whose accumulator the backend
 * keeps: per batch slot, or per correlation ID (dropped at END). */
static int32_t step_kept(seq_instance_t *inst, uint32_t slot, uint64_t key,
                         const bk_input_t *in, const seq_step_t *step) {
  size_t n = (size_t)in->element_count;
  if (inst->seq.store == SEQ_STORE_SLOT) {
    inst->slots[slot] = seq_accum_step(inst->slots[slot], in->data, n, step);
    return inst->slots[slot];
  }
  int32_t acc = 0; /* an unknown ID starts from 0, as in Triton's backend */
  seq_corrid_map_get(inst->corrids, key, &acc);
  acc = seq_accum_step(acc, in->data, n, step);
  if (step->end) {
    seq_corrid_map_remove(inst->corrids, key);
  } else if (seq_corrid_map_put(inst->corrids, key, acc)) {
    BK_LOG(TRITONSERVER_LOG_WARN,
           "model '%s': more than %u open sequences on one instance; the one idle "
           "longest lost its accumulator",
           inst->cfg.name, inst->seq.corrid_capacity);
  }
  return acc;
}

static TRITONSERVER_Error *compute(seq_instance_t *inst, uint32_t slot, uint64_t key,
                                   TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response, const bk_input_t *in,
                                   const seq_step_t *step) {
  switch (inst->seq.store) {
    case SEQ_STORE_NONE:
      return write_output(inst, request, response, in, step, NULL);
    case SEQ_STORE_STATE: {
      /* At START the state input holds no accumulator yet (Triton leaves
       * it uninitialized without initial_state), so it is not read. */
      int32_t acc = 0;
      if (!step->start) BK_RETURN_IF_ERROR(state_read(&inst->seq, request, &acc));
      acc = seq_accum_step(acc, in->data, (size_t)in->element_count, step);
      BK_RETURN_IF_ERROR(write_output(inst, request, response, in, step, &acc));
      return state_write(inst, request, acc);
    }
    default: {
      int32_t acc = step_kept(inst, slot, key, in, step);
      return write_output(inst, request, response, in, step, &acc);
    }
  }
}

/* bk_respond_fn. Requests are answered in batch order, so the n-th call of
 * an Execute is batch slot n. A request with READY=0 is padding for an
 * empty slot: it gets an empty response and changes nothing. */
static TRITONSERVER_Error *respond(void *ctx, TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response,
                                   uint64_t *batch_size) {
  seq_instance_t *inst = ctx;
  uint32_t slot = inst->next_slot++;
  const seq_config_t *seq = &inst->seq;
  bool ready = true;
  BK_RETURN_IF_ERROR(read_flag(seq, SEQ_READY, request, &ready));
  if (!ready) return NULL;
  seq_step_t step = {false, false, 0};
  uint64_t key = 0;
  BK_RETURN_IF_ERROR(read_flag(seq, SEQ_START, request, &step.start));
  BK_RETURN_IF_ERROR(read_flag(seq, SEQ_END, request, &step.end));
  BK_RETURN_IF_ERROR(read_corrid(seq, request, &key, &step.corrid32));
  bk_input_t in;
  BK_RETURN_IF_ERROR(read_value(inst, request, &in));
  TRITONSERVER_Error *err = compute(inst, slot, key, request, response, &in, &step);
  bk_input_release(&in);
  return err;
}

/* ---- Entry points --------------------------------------------------------- */

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  return bk_check_api_version("sequence");
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes) {
  return bk_prefer_cpu_instances(attributes);
}

/* The model only checks the config at load (simple_backend's lifecycle);
 * the config that serves is each instance's own copy, read below. */
static bool validate(const bk_model_config_t *cfg, char *err, size_t err_len) {
  seq_config_t seq;
  return seq_config_read(cfg, &seq, err, err_len);
}

/* No respond function: Execute is this backend's own, as its instances
 * keep accumulators. */
static const bk_simple_backend_t kBackend = {"sequence", validate, NULL, false};

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
  return bk_simple_model_initialize(&kBackend, model);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
  return bk_simple_model_finalize(model);
}

static void instance_free(seq_instance_t *inst) {
  if (inst == NULL) return;
  free(inst->slots);
  seq_corrid_map_free(inst->corrids);
  bk_model_config_free(&inst->cfg);
  free(inst);
}

/* Reads the config (already checked by ModelInitialize) and allocates the
 * accumulators that the instance keeps. */
static TRITONSERVER_Error *instance_setup(TRITONBACKEND_Model *model,
                                          seq_instance_t *inst) {
  BK_RETURN_IF_ERROR(bk_model_config_fetch(model, &inst->cfg));
  char why[BK_ERROR_MAX - 64];
  if (!seq_config_read(&inst->cfg, &inst->seq, why, sizeof why)) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s' (backend 'sequence'): %s",
                    inst->cfg.name, why);
  }
  bool ok = true;
  if (inst->seq.store == SEQ_STORE_SLOT) {
    ok = (inst->slots = calloc(inst->seq.slots, sizeof *inst->slots)) != NULL;
  } else if (inst->seq.store == SEQ_STORE_CORRID) {
    ok = (inst->corrids = seq_corrid_map_new(inst->seq.corrid_capacity)) != NULL;
  }
  return ok ? NULL : bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
}

/* Each instance keeps its own accumulators: the sequence batcher sends all
 * of a sequence's requests to one instance. */
BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance) {
  TRITONBACKEND_Model *model = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  seq_instance_t *inst = calloc(1, sizeof *inst);
  if (inst == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  TRITONSERVER_Error *err = instance_setup(model, inst);
  if (err == NULL) err = TRITONBACKEND_ModelInstanceSetState(instance, inst);
  if (err != NULL) instance_free(inst);
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance) {
  void *state = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  instance_free(state);
  return NULL;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  /* Failing before touching a request leaves them all to the server. */
  void *state = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  seq_instance_t *inst = state;
  if (inst == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "instance has no state");
  const seq_config_t *seq = &inst->seq;
  if (seq->store == SEQ_STORE_SLOT && request_count > seq->slots) {
    return bk_error(TRITONSERVER_ERROR_UNSUPPORTED,
                    "model '%s': a batch of %u requests, but the model has %u batch "
                    "slots",
                    inst->cfg.name, request_count, seq->slots);
  }
  /* Triton's sequence test backends sleep here too (parameter
   * execute_delay_ms), to make batches form in tests. */
  if (seq->execute_delay_ms > 0) bk_sleep_ms(seq->execute_delay_ms);
  inst->next_slot = 0;
  bk_execute_each(instance, requests, request_count, respond, inst);
  return NULL;
}
