/* A model's `sequence_batching` settings, read and checked once at load
 * into plain values the sequence scheduler uses while serving: the
 * strategy and its batching settings, the control inputs with the bytes of
 * their false and true values, and the implicit states with their initial
 * contents. Loading thread; read-only once the model serves. */
#ifndef NEREID_SERVER_SCHED_SEQUENCE_CONFIG_H
#define NEREID_SERVER_SCHED_SEQUENCE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "model_config.upb.h"
#include "server/common/status.h"
#include "triton/core/tritonserver.h"

/** What a control input tells the model (Triton's Control.Kind). */
typedef enum {
  SRV_SEQ_CONTROL_START,
  SRV_SEQ_CONTROL_END,
  SRV_SEQ_CONTROL_READY,
  SRV_SEQ_CONTROL_CORRID,
} srv_seq_control_kind_t;

/** Control tensors per request: at most one of each kind. */
#define SRV_SEQ_CONTROL_MAX 4u

/** One control input. Boolean kinds (START, END, READY) carry their false
 *  and true values as the tensor's bytes (`value_size` bytes each: 4 for
 *  FP32 and INT32, 1 for BOOL). CORRID carries only its datatype (UINT64,
 *  INT64, UINT32, INT32 or BYTES for STRING). */
typedef struct {
  srv_seq_control_kind_t kind;
  const char *name; /* the input's name, in the model's arena */
  TRITONSERVER_DataType datatype;
  uint8_t value_size;
  uint8_t false_value[4], true_value[4];
} srv_seq_control_t;

/** One implicit state (sequence_batching.state). */
typedef struct {
  const char *input_name;  /* the model input that receives the state */
  const char *output_name; /* the name the backend updates it by */
  TRITONSERVER_DataType datatype;
  const int64_t *dims; /* without the batch dimension; -1: variable */
  uint32_t dims_count;
  bool same_buffer; /* use_same_buffer_for_input_output */
  bool growable;    /* use_growable_memory */
  /** initial_state given. Without it Triton hands the first request of a
   *  sequence uninitialized memory (with 1 for each -1 dim); the scheduler
   *  gives zeros of that shape instead (no stale bytes reach a backend). */
  bool has_initial;
  int64_t *initial_dims;       /* initial_state dims (no -1) */
  uint32_t initial_dims_count; /* == dims_count */
  /** initial_size bytes: zeros, or the data_file's first bytes (fixed-size
   *  types: the dims' byte size; BYTES: its first elements of the dims,
   *  each a 4-byte length and its bytes; zero_data BYTES: empty strings).
   *  At most SRV_CONFIG_INITIAL_STATE_MAX bytes for all states together. */
  void *initial_data;
  uint64_t initial_size;
} srv_seq_state_config_t;

typedef enum { SRV_SEQ_DIRECT, SRV_SEQ_OLDEST } srv_seq_strategy_t;

typedef struct {
  srv_seq_strategy_t strategy;
  /** Sequence slots per instance: max(1, max_batch_size) for direct;
   *  oldest.max_candidate_sequences (or max(1, max_batch_size) when it is
   *  0) for oldest. At most SRV_CONFIG_SEQUENCE_SLOTS_MAX. */
  uint32_t slots_per_instance;
  uint64_t idle_ns; /* max_sequence_idle_microseconds, 0 read as 1 s */
  /* direct */
  uint64_t direct_delay_ns;   /* direct.max_queue_delay_microseconds */
  float min_slot_utilization; /* direct.minimum_slot_utilization, in [0, 1] */
  /* oldest */
  /** oldest.preferred_batch_size, ascending, each once, each in [1,
   *  max_batch_size] (Triton's rule). Empty when none is given (Triton's
   *  config normalization would list max_batch_size, if above 0). */
  uint32_t *preferred;
  uint32_t preferred_count;
  uint64_t oldest_delay_ns; /* oldest.max_queue_delay_microseconds */
  bool preserve_ordering;   /* oldest.preserve_ordering */
  srv_seq_control_t controls[SRV_SEQ_CONTROL_MAX];
  uint32_t control_count;
  srv_seq_state_config_t *states;
  uint32_t state_count;
} srv_seq_config_t;

/** Reads and checks `config`'s sequence_batching (which must be set) for
 *  model `model` whose folder is `dir` (initial_state data files are read
 *  from <dir>/initial_state/<data_file>, a name that must stay inside that
 *  folder). Everything is allocated in `arena`. On error the status
 *  (INVALID_ARGUMENT) names `source` (the config's file or "config
 *  override"), the field and the reason, and *out is untouched. */
srv_status_t *srv_seq_config_read(const inference_ModelConfig *config, const char *model,
                                  const char *source, const char *dir, upb_Arena *arena,
                                  srv_seq_config_t *out);

/** The control of `kind`, or NULL when the model has none. */
const srv_seq_control_t *srv_seq_config_control(const srv_seq_config_t *c,
                                                srv_seq_control_kind_t kind);

/** The state whose output_name is `name`, or NULL. */
const srv_seq_state_config_t *srv_seq_config_state_by_output(const srv_seq_config_t *c,
                                                             const char *name);

#endif
