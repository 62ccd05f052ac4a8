/* What the rest of the server, frontends included, may use of a loaded
 * model version: its description, its references, its statistics, and
 * sending it a request. The model's own state (scheduler, instances,
 * backend) stays behind model.h, which only the core's subsystems see.
 * Everything described here is set while loading and read-only while the
 * model serves: any thread. */
#ifndef NEREID_SERVER_MODEL_MODEL_VIEW_H
#define NEREID_SERVER_MODEL_MODEL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actors/epoch.h"
#include "model_config.upb.h"
#include "server/model/request.h"
#include "server/stats/stats.h"

/* An input or output as the config declares it. */
typedef struct {
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *dims; /* without the batch dimension */
  uint32_t dims_count;
  bool optional;
  bool ragged; /* allow_ragged_batch: shapes may differ within a batch */
  /* An output's classification labels (label_filename), one per class
   * index; NULL and 0 without a labels file. */
  const char *const *labels;
  uint32_t label_count;
} srv_tensor_spec_t;

/** A loaded model version as protocols describe it. The pointers are the
 *  model's own: valid while the caller holds a reference on it. */
typedef struct {
  const char *name;
  int64_t version;
  const char *version_string; /* as the protocol spells it */
  const inference_ModelConfig *config;
  /* The config as JSON, as TRITONBACKEND_ModelConfig and Triton's HTTP
   * config endpoint give it (config_json.h); NUL-terminated. */
  const char *config_json;
  size_t config_json_len;
  int32_t max_batch_size; /* 0: the model does not batch */
  bool decoupled;
  const srv_tensor_spec_t *inputs, *outputs;
  uint32_t input_count, output_count;
  const char *const *output_names; /* what a request asking for none gets */
} srv_model_desc_t;

/** Fills *out with m's description. Any thread holding a reference. */
void srv_model_describe(const srv_model_t *m, srv_model_desc_t *out);

/** m's name, for messages. */
const char *srv_model_name(const srv_model_t *m);

/** m's statistics counters (stats.h reads them lock-free). */
srv_stats_t *srv_model_stats(srv_model_t *m);

/** Takes a reference. The caller already holds one, or reads the model from
 *  a registry view (an epoch section keeps it alive meanwhile). Any thread;
 *  lock-free. */
void srv_model_ref(srv_model_t *m);

/** Drops a reference; the last one lets the model unload. Any thread. */
void srv_model_unref(srv_model_t *m);

/* ---- For the registry (repository/registry.c), its writer thread ---- */

/** m enters the registry (which holds a reference): from now on
 *  references are counted per thread, inside sections of epoch domain d
 *  (the registry's). Once in a model's life; later calls do nothing. */
void srv_model_ref_slice(srv_model_t *m, act_epoch_t *d);

/** m leaves the registry: references are counted in one atomic again.
 *  Before the registry retires the view m leaves (seq_cst store). */
void srv_model_ref_unslice(srv_model_t *m);

/** A grace period of d after srv_model_ref_unslice (the view's reclaim):
 *  adds the per-thread counts to the atomic one and takes its bias off.
 *  The registry's own reference is still held (never drains here). Does
 *  nothing for a model not sliced or already folded. */
void srv_model_ref_fold(srv_model_t *m);

/** srv_model_ref inside a read section of d (the domain given to
 *  srv_model_ref_slice), which a lookup holds anyway: the same count,
 *  without opening a nested section (issue 21). Any thread. */
void srv_model_ref_in_section(srv_model_t *m, act_epoch_t *d);

/** Sends a request to the model's scheduler. Any thread. A model that is
 *  stopping answers it UNAVAILABLE. */
void srv_model_enqueue(srv_model_t *m, TRITONBACKEND_Request *request);

/** A number no other load of any model has had (loads are counted), to
 *  tell a model apart from a later load of the same name and version. */
uint64_t srv_model_serial(const srv_model_t *m);

/** Whether m has a sequence batcher (sequence_batching). Any thread. */
bool srv_model_has_sequences(const srv_model_t *m);

/** Ends sequence `id` (or `id_string` when not NULL) of m, if it is still
 *  live and `owner` (non-zero) still owns it, that is, gave its last START
 *  (TRITONBACKEND_Request.seq_owner): what it queued still runs, then its
 *  slot is free (sched/sequence.md). For a frontend whose client left (a
 *  closed stream); a sequence started again by another client since is
 *  not its to end. Any thread holding a reference on m; nothing happens
 *  once m is stopping. */
void srv_model_sequence_end(srv_model_t *m, uint64_t id, const char *id_string,
                            uint64_t owner);

#endif
