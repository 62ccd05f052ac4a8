/* What the sequence backend reads from a model configuration: the
 * sequence_batching section (control input names and kinds, strategy,
 * implicit state), the value tensors, and the backend's parameters. Which
 * model it serves follows from them (see backends/README.md, "sequence in
 * detail"). Any thread; read once at model load, then read-only. Pure C,
 * no server calls. */
#ifndef NEREID_BACKENDS_SEQUENCE_SEQ_CONFIG_H
#define NEREID_BACKENDS_SEQUENCE_SEQ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/common/model_config.h"
#include "backends/sequence/seq_control.h"

/* The kinds of control_input, in the order of Triton's Control.Kind names
 * below (not its enum numbers). */
typedef enum { SEQ_START, SEQ_END, SEQ_READY, SEQ_CORRID, SEQ_CONTROL_KINDS } seq_kind_t;

/* What a ready request computes (parameter `sequence_mode`). */
typedef enum {
  SEQ_MODE_ACCUMULATE,  /* "accumulate" (default): Triton's sequence backends */
  SEQ_MODE_CONTROL_SUM, /* "control_sum": Triton's quickstart graphs, stateless */
} seq_mode_t;

/* Where an accumulating model keeps its accumulator. */
typedef enum {
  SEQ_STORE_NONE,   /* control_sum: nothing is kept */
  SEQ_STORE_SLOT,   /* `direct` strategy: one per batch slot of an instance */
  SEQ_STORE_CORRID, /* `oldest` strategy: one per correlation ID */
  SEQ_STORE_STATE,  /* sequence_batching.state: in the server, per sequence */
} seq_store_t;

/* Longest execute_delay_ms accepted. */
#define SEQ_MAX_DELAY_MS BK_MAX_EXECUTE_DELAY_MS
/* Accumulators an instance keeps for `oldest` models: twice
 * max_candidate_sequences, within these bounds. */
#define SEQ_MIN_CORRID_CAPACITY 1024u
#define SEQ_MAX_CORRID_CAPACITY 65536u
/* Most batch slots (max_batch_size) a `direct` accumulating model may have. */
#define SEQ_MAX_SLOTS 65536u

typedef struct {
  const char *name;                  /* NULL when the model has no such control */
  seq_flag_t flag;                   /* START, END, READY */
  TRITONSERVER_DataType corrid_type; /* CORRID */
} seq_control_t;

/** Everything below points into the bk_model_config_t it was read from,
 *  which must outlive it. */
typedef struct {
  seq_mode_t mode;
  seq_store_t store;
  seq_control_t controls[SEQ_CONTROL_KINDS];
  const bk_tensor_config_t *input, *output; /* the value tensors */
  const char *state_input, *state_output;   /* SEQ_STORE_STATE */
  uint32_t slots;                           /* SEQ_STORE_SLOT: max(1, max_batch_size) */
  uint32_t corrid_capacity;                 /* SEQ_STORE_CORRID */
  uint32_t execute_delay_ms;                /* sleep before each execution */
} seq_config_t;

/** Reads and checks what the backend needs. False with a message naming
 *  the field at fault in err (NUL-terminated). */
bool seq_config_read(const bk_model_config_t *cfg, seq_config_t *out, char *err,
                     size_t err_len);

/** Triton's name of a kind ("CONTROL_SEQUENCE_START"), for messages. */
const char *seq_kind_name(seq_kind_t kind);

#endif
