/* What backends read from a model configuration (the JSON form that
 * TRITONBACKEND_ModelConfig returns): name, max_batch_size, decoupled, the
 * inputs and outputs, string parameters. Any thread; parsed once at model
 * load, then read-only. Pure C, no server calls. */
#ifndef NEREID_BACKENDS_COMMON_MODEL_CONFIG_H
#define NEREID_BACKENDS_COMMON_MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/common/json.h"
#include "triton/core/tritonserver.h"

/* More dims than this in a config tensor is rejected at load. */
#define BK_MAX_DIMS 16

/** One entry of the config's `input` or `output` list. `dims` are those a
 * request carries without its batch dim: the config's `reshape.shape` when
 * present (the server reshapes before the backend sees the tensor), else
 * `dims`. */
typedef struct {
  const char *name; /* owned by the config's document */
  TRITONSERVER_DataType datatype;
  uint32_t dims_count;
  int64_t dims[BK_MAX_DIMS];
} bk_tensor_config_t;

typedef struct {
  bk_json_doc_t *doc;    /* owns every string here */
  const bk_json_t *root; /* the whole config, for backend-specific fields */
  const char *name;
  int64_t max_batch_size;
  bool decoupled; /* model_transaction_policy.decoupled */
  size_t input_count, output_count;
  bk_tensor_config_t *inputs, *outputs; /* malloc'd arrays */
} bk_model_config_t;

/** Parses config JSON into *cfg. False with a message naming the field at
 * fault in err (cfg then holds nothing to free). */
bool bk_model_config_parse(const char *json, size_t len, bk_model_config_t *cfg,
                           char *err, size_t err_len);

/** Frees what bk_model_config_parse allocated; a zeroed cfg is fine. */
void bk_model_config_free(bk_model_config_t *cfg);

/** The input / output called `name`, or NULL. */
const bk_tensor_config_t *bk_model_config_input(const bk_model_config_t *cfg,
                                                const char *name);
const bk_tensor_config_t *bk_model_config_output(const bk_model_config_t *cfg,
                                                 const char *name);

/** `parameters { key: KEY value { string_value: ... } }`, or NULL. */
const char *bk_model_config_param(const bk_model_config_t *cfg, const char *key);

/** Longest `execute_delay_ms` the backends accept (ms). */
#define BK_MAX_EXECUTE_DELAY_MS 10000

/** Reads string parameter `key` as a whole number of milliseconds in
 * [0, max] into *ms (0 when absent). False with a message naming the
 * parameter and the range in err (*ms then untouched). */
bool bk_model_config_param_ms(const bk_model_config_t *cfg, const char *key, uint32_t max,
                              uint32_t *ms, char *err, size_t err_len);

/** Checks a request tensor's shape against the config tensor: with
 * max_batch_size > 0 a leading batch dim in [0, max_batch_size] comes first.
 * False with a message naming the tensor and both shapes in err (none when
 * err_len is 0: err may then be NULL). */
bool bk_model_config_check_shape(const bk_model_config_t *cfg,
                                 const bk_tensor_config_t *t, const int64_t *shape,
                                 uint32_t dims_count, char *err, size_t err_len);

#endif
