/* Reading the sequence backend's part of a model configuration (see
 * seq_config.h). Model load thread. */
#include "backends/sequence/seq_config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backends/common/datatype.h"

static const char *const kKindNames[SEQ_CONTROL_KINDS] = {
    "CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_READY",
    "CONTROL_SEQUENCE_CORRID"};

/* The `<type>_false_true` lists, one of which a flag control fills. */
static const struct {
  const char *field;
  TRITONSERVER_DataType datatype;
} kFlagLists[] = {{"int32_false_true", TRITONSERVER_TYPE_INT32},
                  {"fp32_false_true", TRITONSERVER_TYPE_FP32},
                  {"bool_false_true", TRITONSERVER_TYPE_BOOL}};

#define FLAG_LISTS (sizeof kFlagLists / sizeof kFlagLists[0])

const char *seq_kind_name(seq_kind_t kind) {
  return (unsigned)kind < SEQ_CONTROL_KINDS ? kKindNames[kind] : "?";
}

/* An absent kind is proto3's default, CONTROL_SEQUENCE_START. */
static bool read_kind(const bk_json_t *control, seq_kind_t *kind) {
  const bk_json_t *k = bk_json_get(control, "kind");
  if (k == NULL) {
    *kind = SEQ_START;
    return true;
  }
  const char *name = bk_json_str(k, NULL);
  for (int i = 0; name != NULL && i < SEQ_CONTROL_KINDS; i++) {
    if (strcmp(name, kKindNames[i]) == 0) {
      *kind = (seq_kind_t)i;
      return true;
    }
  }
  return false;
}

/* Element j of false_true list `list` into flag value j. */
static bool read_flag_value(const bk_json_t *v, TRITONSERVER_DataType type,
                            seq_flag_t *flag, int j) {
  int64_t i = 0;
  double d = 0;
  switch (type) {
    case TRITONSERVER_TYPE_INT32:
      if (!bk_json_int(v, &i) || i < INT32_MIN || i > INT32_MAX) return false;
      flag->values[j].i32 = (int32_t)i;
      return true;
    case TRITONSERVER_TYPE_FP32:
      if (!bk_json_num(v, &d) || !isfinite(d)) return false;
      flag->values[j].f32 = (float)d;
      return true;
    default:
      return bk_json_bool(v, &flag->values[j].b);
  }
}

static bool flag_values_differ(const seq_flag_t *f) {
  switch (f->datatype) {
    case TRITONSERVER_TYPE_INT32:
      return f->values[0].i32 != f->values[1].i32;
    case TRITONSERVER_TYPE_FP32:
      return f->values[0].f32 != f->values[1].f32;
    default:
      return f->values[0].b != f->values[1].b;
  }
}

/* A START/END/READY control: exactly one false_true list, of two
 * different values. */
static bool read_flag(const bk_json_t *control, const char *name, seq_flag_t *flag,
                      char *err, size_t len) {
  int lists = 0;
  for (size_t l = 0; l < FLAG_LISTS; l++) {
    const bk_json_t *arr = bk_json_get(control, kFlagLists[l].field);
    if (bk_json_count(arr) == 0) continue;
    lists++;
    flag->datatype = kFlagLists[l].datatype;
    bool ok = bk_json_type(arr) == BK_JSON_ARRAY && bk_json_count(arr) == 2;
    for (int j = 0; ok && j < 2; j++)
      ok = read_flag_value(bk_json_at(arr, j), flag->datatype, flag, j);
    if (!ok || !flag_values_differ(flag)) {
      snprintf(err, len,
               "sequence_batching.control_input '%s': %s must hold two different "
               "values, [false, true]",
               name, kFlagLists[l].field);
      return false;
    }
  }
  if (lists == 1) return true;
  snprintf(err, len,
           "sequence_batching.control_input '%s': give exactly one of "
           "int32_false_true, fp32_false_true, bool_false_true",
           name);
  return false;
}

static bool read_corrid(const bk_json_t *control, const char *name, seq_control_t *c,
                        char *err, size_t len) {
  const char *type = bk_json_str(bk_json_get(control, "data_type"), NULL);
  c->corrid_type = bk_datatype_from_config(type);
  if (seq_corrid_type_ok(c->corrid_type)) return true;
  snprintf(err, len,
           "sequence_batching.control_input '%s': CONTROL_SEQUENCE_CORRID data_type "
           "must be TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING, "
           "not %s",
           name, type != NULL ? type : "(none)");
  return false;
}

/* One control_input entry: a name and exactly one control. */
static bool read_control_input(const bk_json_t *ci, seq_config_t *out, char *err,
                               size_t len) {
  const char *name = bk_json_str(bk_json_get(ci, "name"), NULL);
  if (name == NULL || name[0] == '\0') {
    snprintf(err, len, "sequence_batching.control_input: an entry has no name");
    return false;
  }
  const bk_json_t *controls = bk_json_get(ci, "control");
  const bk_json_t *control = bk_json_at(controls, 0);
  seq_kind_t kind = SEQ_START;
  if (bk_json_type(controls) != BK_JSON_ARRAY || bk_json_count(controls) != 1 ||
      !read_kind(control, &kind)) {
    snprintf(err, len,
             "sequence_batching.control_input '%s': needs exactly one control of a "
             "known kind",
             name);
    return false;
  }
  seq_control_t *c = &out->controls[kind];
  if (c->name != NULL) {
    snprintf(err, len, "sequence_batching.control_input '%s': %s is already input '%s'",
             name, kKindNames[kind], c->name);
    return false;
  }
  c->name = name;
  if (kind == SEQ_CORRID) return read_corrid(control, name, c, err, len);
  return read_flag(control, name, &c->flag, err, len);
}

static bool read_controls(const bk_json_t *sb, seq_config_t *out, char *err, size_t len) {
  const bk_json_t *list = bk_json_get(sb, "control_input");
  if (list != NULL && bk_json_type(list) != BK_JSON_ARRAY) {
    snprintf(err, len, "sequence_batching.control_input must be an array");
    return false;
  }
  for (size_t i = 0; i < bk_json_count(list); i++) {
    if (!read_control_input(bk_json_at(list, i), out, err, len)) return false;
  }
  if (out->controls[SEQ_START].name != NULL) return true;
  snprintf(err, len,
           "sequence_batching.control_input needs a CONTROL_SEQUENCE_START control");
  return false;
}

/* sequence_batching.state: at most one, an INT32 of one element. */
static bool read_state(const bk_json_t *sb, seq_config_t *out, char *err, size_t len) {
  const bk_json_t *list = bk_json_get(sb, "state");
  size_t n = bk_json_count(list);
  if (n == 0) return true;
  const bk_json_t *st = bk_json_at(list, 0);
  out->state_input = bk_json_str(bk_json_get(st, "input_name"), NULL);
  out->state_output = bk_json_str(bk_json_get(st, "output_name"), NULL);
  const bk_json_t *dims = bk_json_get(st, "dims");
  int64_t dim = 0;
  bool ok = n == 1 && out->state_input != NULL && out->state_input[0] != '\0' &&
            out->state_output != NULL && out->state_output[0] != '\0' &&
            bk_datatype_from_config(bk_json_str(bk_json_get(st, "data_type"), NULL)) ==
                TRITONSERVER_TYPE_INT32 &&
            bk_json_count(dims) == 1 && bk_json_int(bk_json_at(dims, 0), &dim) &&
            dim == 1;
  if (ok) return true;
  snprintf(err, len,
           "sequence_batching.state: expected one state with input_name, "
           "output_name, data_type TYPE_INT32 and dims [ 1 ]");
  return false;
}

/* One INT32 value input and one INT32 output of the same 1-D dims. */
static bool read_tensors(const bk_model_config_t *cfg, seq_config_t *out, char *err,
                         size_t len) {
  if (cfg->input_count == 1 && cfg->output_count == 1) {
    out->input = &cfg->inputs[0];
    out->output = &cfg->outputs[0];
    if (out->input->datatype == TRITONSERVER_TYPE_INT32 &&
        out->output->datatype == TRITONSERVER_TYPE_INT32 && out->input->dims_count == 1 &&
        out->output->dims_count == 1 && out->input->dims[0] == out->output->dims[0])
      return true;
  }
  snprintf(err, len,
           "expected one input and one output, both TYPE_INT32 with the same dims "
           "[ n ] or [ -1 ] (the controls are not listed as inputs)");
  return false;
}

/* `sequence_mode` and `execute_delay_ms`. */
static bool read_parameters(const bk_model_config_t *cfg, seq_config_t *out, char *err,
                            size_t len) {
  const char *mode = bk_model_config_param(cfg, "sequence_mode");
  if (mode == NULL || strcmp(mode, "accumulate") == 0) {
    out->mode = SEQ_MODE_ACCUMULATE;
  } else if (strcmp(mode, "control_sum") == 0) {
    out->mode = SEQ_MODE_CONTROL_SUM;
  } else {
    snprintf(err, len,
             "parameter 'sequence_mode' must be \"accumulate\" or \"control_sum\", not "
             "\"%.64s\"",
             mode);
    return false;
  }
  return bk_model_config_param_ms(cfg, "execute_delay_ms", SEQ_MAX_DELAY_MS,
                                  &out->execute_delay_ms, err, len);
}

/* The accumulator's home follows from the strategy and the state. */
static bool choose_store(const bk_model_config_t *cfg, const bk_json_t *sb,
                         seq_config_t *out, char *err, size_t len) {
  const bk_json_t *oldest = bk_json_get(sb, "oldest");
  if (out->mode == SEQ_MODE_CONTROL_SUM) {
    out->store = SEQ_STORE_NONE;
    if (out->state_input == NULL) return true;
    snprintf(err, len,
             "sequence_mode \"control_sum\" keeps no state: remove "
             "sequence_batching.state");
    return false;
  }
  if (out->state_input != NULL) {
    out->store = SEQ_STORE_STATE;
  } else if (oldest != NULL) {
    if (out->controls[SEQ_CORRID].name == NULL) {
      snprintf(err, len,
               "an accumulating model with the oldest strategy needs a "
               "CONTROL_SEQUENCE_CORRID control to tell sequences apart");
      return false;
    }
    int64_t candidates = 0;
    bk_json_int(bk_json_get(oldest, "max_candidate_sequences"), &candidates);
    uint64_t cap = candidates > 0 ? 2 * (uint64_t)candidates : 0;
    if (cap < SEQ_MIN_CORRID_CAPACITY) cap = SEQ_MIN_CORRID_CAPACITY;
    if (cap > SEQ_MAX_CORRID_CAPACITY) cap = SEQ_MAX_CORRID_CAPACITY;
    out->store = SEQ_STORE_CORRID;
    out->corrid_capacity = (uint32_t)cap;
  } else {
    if (cfg->max_batch_size > SEQ_MAX_SLOTS) {
      snprintf(err, len,
               "max_batch_size %lld is above the %u batch slots this "
               "backend keeps accumulators for",
               (long long)cfg->max_batch_size, SEQ_MAX_SLOTS);
      return false;
    }
    out->store = SEQ_STORE_SLOT;
    out->slots = cfg->max_batch_size > 0 ? (uint32_t)cfg->max_batch_size : 1;
  }
  return true;
}

bool seq_config_read(const bk_model_config_t *cfg, seq_config_t *out, char *err,
                     size_t err_len) {
  memset(out, 0, sizeof *out);
  const bk_json_t *sb = bk_json_get(cfg->root, "sequence_batching");
  if (bk_json_type(sb) != BK_JSON_OBJECT) {
    snprintf(err, err_len, "the sequence backend needs a sequence_batching section");
    return false;
  }
  return read_parameters(cfg, out, err, err_len) &&
         read_controls(sb, out, err, err_len) && read_state(sb, out, err, err_len) &&
         read_tensors(cfg, out, err, err_len) && choose_store(cfg, sb, out, err, err_len);
}
