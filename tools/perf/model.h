/* What nereid-perf learns about the model before the load starts: inputs and
 * output names from ModelMetadata, max_batch_size and decoupled from ModelConfig; and the
 * server-side statistics (ModelStatistics) that it diffs per window.
 * Main thread only. */
#ifndef NEREID_TOOLS_PERF_MODEL_H
#define NEREID_TOOLS_PERF_MODEL_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/perf/common.h"
#include "tools/perf/options.h"

typedef enum {
  PERF_BOOL,
  PERF_UINT8,
  PERF_UINT16,
  PERF_UINT32,
  PERF_UINT64,
  PERF_INT8,
  PERF_INT16,
  PERF_INT32,
  PERF_INT64,
  PERF_FP16,
  PERF_FP32,
  PERF_FP64,
  PERF_BF16,
  PERF_BYTES,
} perf_dtype_t;

typedef struct {
  char *name;
  char datatype[16]; /* the protocol name, e.g. "INT32" */
  perf_dtype_t dtype;
  size_t elem_size;             /* 0 for BYTES */
  int64_t shape[PERF_MAX_DIMS]; /* without the batch dimension; -1: variable */
  size_t ndims;
} perf_input_t;

typedef struct {
  perf_input_t *inputs;
  size_t ninputs;
  char **outputs; /* output names (--shared-memory system asks for each one) */
  size_t noutputs;
  int32_t max_batch_size; /* > 0: every shape has a leading batch dimension */
  bool decoupled;
  bool sequence;   /* sequence_batching: requests carry sequence ids */
  bool string_ids; /* its CORRID control is a string: ids go as string_param */
} perf_model_t;

/** Fetches metadata and config of model `name` (version "" for the policy's
 *  choice). Fails with the server's message, or on a datatype that the
 *  tool does not know. */
bool perf_model_fetch(grpc_channel *ch, const char *name, const char *version,
                      unsigned timeout_ms, perf_model_t *m, perf_err_t *err);

void perf_model_free(perf_model_t *m);

/** Element size of a protocol datatype name; false if unknown. */
bool perf_dtype_parse(const char *name, size_t len, perf_dtype_t *dtype, size_t *size);

typedef struct {
  uint64_t count, ns;
} perf_duration_t;

/** A model's cumulative counters, summed over its versions (or the one asked for). */
typedef struct {
  perf_duration_t success, fail, queue, compute_input, compute_infer, compute_output;
  uint64_t inference_count, execution_count;
} perf_server_stats_t;

bool perf_server_stats_fetch(grpc_channel *ch, const char *name, const char *version,
                             unsigned timeout_ms, perf_server_stats_t *out,
                             perf_err_t *err);

/** out = b - a, field by field (a counter that went down counts 0). */
void perf_server_stats_delta(perf_server_stats_t *out, const perf_server_stats_t *a,
                             const perf_server_stats_t *b);

/** into += d. */
void perf_server_stats_add(perf_server_stats_t *into, const perf_server_stats_t *d);

#endif
