/* Reading the model configuration JSON into bk_model_config_t. Any thread;
 * runs at model load. */
#include "backends/common/model_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/datatype.h"
#include "backends/common/shape.h"

/* Reads a dims array ("dims" or "reshape.shape"); absent means a scalar. */
static bool read_dims(const bk_json_t *arr, bk_tensor_config_t *t, const char *field,
                      char *err, size_t err_len) {
  if (arr == NULL) return true;
  if (bk_json_type(arr) != BK_JSON_ARRAY || bk_json_count(arr) > BK_MAX_DIMS) {
    snprintf(err, err_len, "tensor '%s': '%s' must be an array of at most %d dims",
             t->name, field, BK_MAX_DIMS);
    return false;
  }
  t->dims_count = (uint32_t)bk_json_count(arr);
  for (uint32_t i = 0; i < t->dims_count; i++) {
    if (!bk_json_int(bk_json_at(arr, i), &t->dims[i]) || t->dims[i] < -1) {
      snprintf(err, err_len, "tensor '%s': '%s' element %u is not a valid dim", t->name,
               field, i);
      return false;
    }
  }
  return true;
}

static bool read_tensor(const bk_json_t *v, bk_tensor_config_t *t, char *err,
                        size_t err_len) {
  memset(t, 0, sizeof *t);
  t->name = bk_json_str(bk_json_get(v, "name"), NULL);
  if (t->name == NULL || t->name[0] == '\0') {
    snprintf(err, err_len, "a tensor has no name");
    return false;
  }
  const char *type = bk_json_str(bk_json_get(v, "data_type"), NULL);
  t->datatype = bk_datatype_from_config(type);
  if (t->datatype == TRITONSERVER_TYPE_INVALID) {
    snprintf(err, err_len, "tensor '%s': unsupported data_type '%s'", t->name,
             type ? type : "(none)");
    return false;
  }
  const bk_json_t *reshape = bk_json_get(v, "reshape");
  if (reshape != NULL) {
    /* An empty reshape (scalar) prints no "shape" member at all. */
    return read_dims(bk_json_get(reshape, "shape"), t, "reshape.shape", err, err_len);
  }
  return read_dims(bk_json_get(v, "dims"), t, "dims", err, err_len);
}

static bool read_tensors(const bk_json_t *list, const char *field,
                         bk_tensor_config_t **out, size_t *count, char *err,
                         size_t err_len) {
  *out = NULL;
  *count = 0;
  if (list == NULL) return true;
  if (bk_json_type(list) != BK_JSON_ARRAY) {
    snprintf(err, err_len, "'%s' must be an array", field);
    return false;
  }
  size_t n = bk_json_count(list);
  if (n == 0) return true;
  *out = calloc(n, sizeof **out);
  if (*out == NULL) {
    snprintf(err, err_len, "out of memory");
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    if (!read_tensor(bk_json_at(list, i), &(*out)[i], err, err_len)) return false;
  }
  *count = n;
  return true;
}

static bool read_header(bk_model_config_t *cfg, char *err, size_t err_len) {
  if (bk_json_type(cfg->root) != BK_JSON_OBJECT) {
    snprintf(err, err_len, "model configuration is not a JSON object");
    return false;
  }
  cfg->name = bk_json_str(bk_json_get(cfg->root, "name"), NULL);
  if (cfg->name == NULL) cfg->name = "";
  const bk_json_t *mbs = bk_json_get(cfg->root, "max_batch_size");
  if (mbs != NULL &&
      (!bk_json_int(mbs, &cfg->max_batch_size) || cfg->max_batch_size < 0)) {
    snprintf(err, err_len, "'max_batch_size' must be a non-negative integer");
    return false;
  }
  const bk_json_t *policy = bk_json_get(cfg->root, "model_transaction_policy");
  bk_json_bool(bk_json_get(policy, "decoupled"), &cfg->decoupled);
  return true;
}

bool bk_model_config_parse(const char *json, size_t len, bk_model_config_t *cfg,
                           char *err, size_t err_len) {
  memset(cfg, 0, sizeof *cfg);
  char jerr[160];
  cfg->doc = bk_json_parse(json, len, jerr, sizeof jerr);
  if (cfg->doc == NULL) {
    snprintf(err, err_len, "model configuration is not valid JSON: %s", jerr);
    return false;
  }
  cfg->root = bk_json_root(cfg->doc);
  bool ok = read_header(cfg, err, err_len) &&
            read_tensors(bk_json_get(cfg->root, "input"), "input", &cfg->inputs,
                         &cfg->input_count, err, err_len) &&
            read_tensors(bk_json_get(cfg->root, "output"), "output", &cfg->outputs,
                         &cfg->output_count, err, err_len);
  if (!ok) bk_model_config_free(cfg);
  return ok;
}

void bk_model_config_free(bk_model_config_t *cfg) {
  free(cfg->inputs);
  free(cfg->outputs);
  bk_json_doc_free(cfg->doc);
  memset(cfg, 0, sizeof *cfg);
}

static const bk_tensor_config_t *find(const bk_tensor_config_t *list, size_t n,
                                      const char *name) {
  for (size_t i = 0; name != NULL && i < n; i++) {
    if (strcmp(list[i].name, name) == 0) return &list[i];
  }
  return NULL;
}

const bk_tensor_config_t *bk_model_config_input(const bk_model_config_t *cfg,
                                                const char *name) {
  return find(cfg->inputs, cfg->input_count, name);
}

const bk_tensor_config_t *bk_model_config_output(const bk_model_config_t *cfg,
                                                 const char *name) {
  return find(cfg->outputs, cfg->output_count, name);
}

const char *bk_model_config_param(const bk_model_config_t *cfg, const char *key) {
  const bk_json_t *p = bk_json_get(bk_json_get(cfg->root, "parameters"), key);
  return bk_json_str(bk_json_get(p, "string_value"), NULL);
}

bool bk_model_config_param_ms(const bk_model_config_t *cfg, const char *key, uint32_t max,
                              uint32_t *ms, char *err, size_t err_len) {
  const char *s = bk_model_config_param(cfg, key);
  if (s == NULL) {
    *ms = 0;
    return true;
  }
  /* Digits only: no sign, no blanks, no exponent; at most 10 of them so
   * the value cannot overflow before the range check. */
  size_t n = strspn(s, "0123456789");
  uint64_t v = 0;
  for (size_t i = 0; i < n && n <= 10; i++) v = v * 10 + (uint64_t)(s[i] - '0');
  if (n == 0 || s[n] != '\0' || n > 10 || v > max) {
    snprintf(err, err_len,
             "parameter '%s' must be an integer in [0, %" PRIu32 "], got \"%.32s\"", key,
             max, s);
    return false;
  }
  *ms = (uint32_t)v;
  return true;
}

/* Out of line: the shapes' text buffers stay off the passing check's
 * stack. */
static __attribute__((cold, noinline)) void shape_mismatch(const bk_model_config_t *cfg,
                                                           const bk_tensor_config_t *t,
                                                           const int64_t *shape,
                                                           uint32_t dims_count, char *err,
                                                           size_t err_len) {
  char got[96], want[96];
  snprintf(err, err_len, "tensor '%s': shape %s does not match the model's %s%s", t->name,
           bk_shape_format(shape, dims_count, got, sizeof got),
           cfg->max_batch_size > 0 ? "[batch]+" : "",
           bk_shape_format(t->dims, t->dims_count, want, sizeof want));
}

bool bk_model_config_check_shape(const bk_model_config_t *cfg,
                                 const bk_tensor_config_t *t, const int64_t *shape,
                                 uint32_t dims_count, char *err, size_t err_len) {
  const int64_t *rest = shape;
  uint32_t rest_count = dims_count;
  bool batch_ok = true;
  if (cfg->max_batch_size > 0) {
    batch_ok = dims_count > 0 && shape[0] >= 0 && shape[0] <= cfg->max_batch_size;
    rest = shape + (dims_count > 0);
    rest_count = dims_count - (dims_count > 0);
  }
  if (batch_ok && bk_shape_matches(t->dims, t->dims_count, rest, rest_count)) return true;
  if (err_len > 0) shape_mismatch(cfg, t, shape, dims_count, err, err_len);
  return false;
}
