/* A model's sequence_batching settings, read and checked at load (see
 * sequence_config.h). The checks are Triton's (model_config_utils.cc for
 * controls and strategies, the sequence batch scheduler for implicit
 * states and their initial data), plus the bounds that keep a config from
 * sizing memory without limit: sequence slots and initial state bytes
 * (config_limits.h). Loading thread only. */
#include "server/sched/sequence_config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/api/datatype.h"
#include "server/common/memory.h"
#include "server/model/config_limits.h"

/* What every message names: the model, where its config came from. */
typedef struct {
  const char *model, *source, *dir;
  upb_Arena *arena;
  int32_t max_batch_size;
  uint64_t initial_total; /* bytes of initial state data read so far */
} ctx_t;

static srv_status_t *bad(const ctx_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static srv_status_t *bad(const ctx_t *c, const char *fmt, ...) {
  char what[SRV_STATUS_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "model '%s': %s: %s", c->model,
                        c->source, what);
}

static uint64_t us_to_ns(uint64_t us) {
  return us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000;
}

/* ---- control inputs ---- */

static const char *const kKindNames[SRV_SEQ_CONTROL_MAX] = {
    [SRV_SEQ_CONTROL_START] = "CONTROL_SEQUENCE_START",
    [SRV_SEQ_CONTROL_END] = "CONTROL_SEQUENCE_END",
    [SRV_SEQ_CONTROL_READY] = "CONTROL_SEQUENCE_READY",
    [SRV_SEQ_CONTROL_CORRID] = "CONTROL_SEQUENCE_CORRID",
};

/* Control.Kind as numbered in model_config.proto (READY is 1, END is 2). */
static bool kind_from_config(int32_t v, srv_seq_control_kind_t *out) {
  switch (v) {
    case inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_START:
      *out = SRV_SEQ_CONTROL_START;
      return true;
    case inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_READY:
      *out = SRV_SEQ_CONTROL_READY;
      return true;
    case inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_END:
      *out = SRV_SEQ_CONTROL_END;
      return true;
    case inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID:
      *out = SRV_SEQ_CONTROL_CORRID;
      return true;
    default:
      return false;
  }
}

/* START, END, READY: exactly one of the three [false, true] lists, with
 * exactly two entries, kept as the tensor's bytes. */
static srv_status_t *control_bool(const ctx_t *c, const char *at,
                                  const inference_ModelSequenceBatching_Control *m,
                                  srv_seq_control_t *out) {
  const char *kind = kKindNames[out->kind];
  size_t ni, nf, nb;
  const int32_t *i32 = inference_ModelSequenceBatching_Control_int32_false_true(m, &ni);
  const float *f32 = inference_ModelSequenceBatching_Control_fp32_false_true(m, &nf);
  const bool *b = inference_ModelSequenceBatching_Control_bool_false_true(m, &nb);
  int given = (ni > 0) + (nf > 0) + (nb > 0);
  if (given == 0)
    return bad(c,
               "'%s': sequence batching must specify either 'int32_false_true', "
               "'fp32_false_true' or 'bool_false_true' for %s",
               at, kind);
  if (given > 1)
    return bad(c,
               "'%s': sequence batching specifies more than one from 'int32_false_true', "
               "'fp32_false_true' and 'bool_false_true' for %s",
               at, kind);
  const char *list = ni ? "int32_false_true" : nf ? "fp32_false_true" : "bool_false_true";
  size_t n = ni ? ni : nf ? nf : nb;
  if (n != 2)
    return bad(c,
               "'%s': sequence batching control '%s' must have exactly 2 entries for %s "
               "(it has %zu)",
               at, list, kind, n);
  if (ni) {
    out->datatype = TRITONSERVER_TYPE_INT32;
    out->value_size = 4;
    memcpy(out->false_value, &i32[0], 4);
    memcpy(out->true_value, &i32[1], 4);
  } else if (nf) {
    out->datatype = TRITONSERVER_TYPE_FP32;
    out->value_size = 4;
    memcpy(out->false_value, &f32[0], 4);
    memcpy(out->true_value, &f32[1], 4);
  } else {
    out->datatype = TRITONSERVER_TYPE_BOOL;
    out->value_size = 1;
    out->false_value[0] = b[0] ? 1 : 0;
    out->true_value[0] = b[1] ? 1 : 0;
  }
  return NULL;
}

/* CORRID: a data_type among Triton's five, and no [false, true] list. */
static srv_status_t *control_corrid(const ctx_t *c, const char *at,
                                    const inference_ModelSequenceBatching_Control *m,
                                    srv_seq_control_t *out) {
  size_t ni, nf, nb;
  inference_ModelSequenceBatching_Control_int32_false_true(m, &ni);
  inference_ModelSequenceBatching_Control_fp32_false_true(m, &nf);
  inference_ModelSequenceBatching_Control_bool_false_true(m, &nb);
  if (ni + nf + nb > 0)
    return bad(c,
               "'%s': sequence batching must not specify either 'int32_false_true', "
               "'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_CORRID",
               at);
  TRITONSERVER_DataType t = api_datatype_from_config_value(
      inference_ModelSequenceBatching_Control_data_type(m));
  switch (t) {
    case TRITONSERVER_TYPE_UINT64:
    case TRITONSERVER_TYPE_INT64:
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_INT32:
    case TRITONSERVER_TYPE_BYTES:
      out->datatype = t;
      return NULL;
    default:
      return bad(c,
                 "'%s.data_type' is %s: unexpected data type for control "
                 "CONTROL_SEQUENCE_CORRID. Allowed data types are TYPE_UINT64, "
                 "TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING",
                 at, api_datatype_config_name(t));
  }
}

/* A name the server keeps as a C string: set, and without a NUL inside
 * (which would cut it short and make two names one). */
static srv_status_t *name_read(const ctx_t *c, const char *at, upb_StringView v,
                               const char **out) {
  if (v.size == 0) return bad(c, "'%s' must be set", at);
  if (memchr(v.data, '\0', v.size) != NULL) return bad(c, "'%s' holds a NUL byte", at);
  *out = srv_arena_strview(c->arena, v);
  return NULL;
}

/* One control per kind across the config, and one per control input
 * (Triton refuses a name given twice "for multiple control kinds"; a second
 * control in one input means the same). An input with no control is
 * ignored, as Triton does. */
static srv_status_t *controls_read(const ctx_t *c,
                                   const inference_ModelSequenceBatching *sb,
                                   srv_seq_config_t *out) {
  size_t n;
  const inference_ModelSequenceBatching_ControlInput *const *in =
      inference_ModelSequenceBatching_control_input(sb, &n);
  bool seen[SRV_SEQ_CONTROL_MAX] = {false};
  char at[96];
  for (size_t i = 0; i < n; i++) {
    const char *name;
    snprintf(at, sizeof at, "sequence_batching.control_input[%zu].name", i);
    srv_status_t *st =
        name_read(c, at, inference_ModelSequenceBatching_ControlInput_name(in[i]), &name);
    if (st != NULL) return st;
    char q[SRV_QUOTE_SIZE];
    upb_StringView v = inference_ModelSequenceBatching_ControlInput_name(in[i]);
    for (size_t k = 0; k < i; k++) /* inputs without a control count too */
      if (upb_StringView_IsEqual(
              v, inference_ModelSequenceBatching_ControlInput_name(in[k])))
        return bad(c,
                   "'%s': sequence batching control tensor '%s' is specified for "
                   "multiple control kinds",
                   at, srv_quote_str(q, name));
    size_t nc;
    const inference_ModelSequenceBatching_Control *const *ctl =
        inference_ModelSequenceBatching_ControlInput_control(in[i], &nc);
    if (nc > 1)
      return bad(c,
                 "'sequence_batching.control_input[%zu].control': sequence batching "
                 "control tensor '%s' is specified for multiple control kinds (%zu "
                 "controls)",
                 i, srv_quote_str(q, name), nc);
    if (nc == 0) continue;
    snprintf(at, sizeof at, "sequence_batching.control_input[%zu].control[0]", i);
    int32_t kv = inference_ModelSequenceBatching_Control_kind(ctl[0]);
    srv_seq_control_t *ctrl = &out->controls[out->control_count];
    memset(ctrl, 0, sizeof *ctrl);
    if (!kind_from_config(kv, &ctrl->kind))
      return bad(c, "'%s.kind' is %d, not a known control kind", at, (int)kv);
    if (seen[ctrl->kind])
      return bad(c, "'%s': sequence batching specifies multiple %s tensors", at,
                 kKindNames[ctrl->kind]);
    seen[ctrl->kind] = true;
    ctrl->name = name;
    st = ctrl->kind == SRV_SEQ_CONTROL_CORRID ? control_corrid(c, at, ctl[0], ctrl)
                                              : control_bool(c, at, ctl[0], ctrl);
    if (st != NULL) return st;
    out->control_count++;
  }
  return NULL;
}

/* ---- strategy and slots ---- */

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Oldest: Triton's rule for preferred sizes is 0 < size <= max_batch_size
 * (so a model that does not batch can list none). Kept sorted, without
 * repeats. An empty list stays empty (Triton's normalization would list
 * max_batch_size). */
static srv_status_t *oldest_read(const ctx_t *c,
                                 const inference_ModelSequenceBatching_StrategyOldest *o,
                                 srv_seq_config_t *out) {
  out->strategy = SRV_SEQ_OLDEST;
  out->oldest_delay_ns = us_to_ns(
      inference_ModelSequenceBatching_StrategyOldest_max_queue_delay_microseconds(o));
  out->preserve_ordering =
      inference_ModelSequenceBatching_StrategyOldest_preserve_ordering(o);
  size_t n;
  const int32_t *sizes =
      inference_ModelSequenceBatching_StrategyOldest_preferred_batch_size(o, &n);
  if (n == 0) return NULL;
  out->preferred = srv_arena_alloc(c->arena, n * sizeof *out->preferred);
  for (size_t i = 0; i < n; i++) {
    if (sizes[i] <= 0)
      return bad(c,
                 "'sequence_batching.oldest.preferred_batch_size[%zu]' is %d: sequence "
                 "batching preferred batch size must be positive",
                 i, (int)sizes[i]);
    if (sizes[i] > c->max_batch_size)
      return bad(c,
                 "'sequence_batching.oldest.preferred_batch_size[%zu]' is %d: sequence "
                 "batching preferred batch size must be <= max batch size (%d)",
                 i, (int)sizes[i], (int)c->max_batch_size);
    out->preferred[i] = (uint32_t)sizes[i];
  }
  qsort(out->preferred, n, sizeof *out->preferred, u32_cmp);
  uint32_t kept = 1;
  for (size_t i = 1; i < n; i++)
    if (out->preferred[i] != out->preferred[kept - 1])
      out->preferred[kept++] = out->preferred[i];
  out->preferred_count = kept;
  return NULL;
}

/* Direct: the fraction of slots to wait for is in [0, 1] (Triton checks
 * that range; NaN is refused too). */
static srv_status_t *direct_read(const ctx_t *c,
                                 const inference_ModelSequenceBatching_StrategyDirect *d,
                                 srv_seq_config_t *out) {
  out->strategy = SRV_SEQ_DIRECT;
  if (d == NULL) return NULL;
  out->direct_delay_ns = us_to_ns(
      inference_ModelSequenceBatching_StrategyDirect_max_queue_delay_microseconds(d));
  float u = inference_ModelSequenceBatching_StrategyDirect_minimum_slot_utilization(d);
  if (!(u >= 0.0f && u <= 1.0f))
    return bad(c,
               "'sequence_batching.direct.minimum_slot_utilization' is %g: sequence "
               "batching minimum slot utilization must be in range (0.0, 1.0]",
               (double)u);
  out->min_slot_utilization = u;
  return NULL;
}

/* Slots per instance as Triton counts them, and all instances' slots held
 * to SRV_CONFIG_SEQUENCE_SLOTS_MAX: each slot is memory (state buffers,
 * per-slot queues) sized at load. */
static srv_status_t *slots_read(const ctx_t *c, const inference_ModelConfig *config,
                                const inference_ModelSequenceBatching *sb,
                                srv_seq_config_t *out) {
  uint64_t per = c->max_batch_size > 0 ? (uint64_t)c->max_batch_size : 1;
  int32_t candidates = 0;
  if (out->strategy == SRV_SEQ_OLDEST)
    candidates = inference_ModelSequenceBatching_StrategyOldest_max_candidate_sequences(
        inference_ModelSequenceBatching_oldest(sb));
  if (candidates > 0) per = (uint64_t)candidates;
  uint64_t instances = srv_config_instance_total(config);
  if (instances == 0) instances = 1; /* completion adds one group */
  uint64_t total;
  if (__builtin_mul_overflow(per, instances, &total)) total = UINT64_MAX;
  if (total > SRV_CONFIG_SEQUENCE_SLOTS_MAX) {
    if (candidates > 0)
      return bad(c,
                 "'sequence_batching.oldest.max_candidate_sequences' is %d: %llu "
                 "instances hold %llu sequence slots, above the limit of %u per model "
                 "version",
                 (int)candidates, (unsigned long long)instances,
                 (unsigned long long)total, SRV_CONFIG_SEQUENCE_SLOTS_MAX);
    return bad(c,
               "'max_batch_size' is %d: with %s each instance holds max_batch_size "
               "sequence slots, and %llu instances hold %llu, above the limit of %u per "
               "model version",
               (int)c->max_batch_size,
               out->strategy == SRV_SEQ_DIRECT ? "the direct strategy"
                                               : "max_candidate_sequences unset",
               (unsigned long long)instances, (unsigned long long)total,
               SRV_CONFIG_SEQUENCE_SLOTS_MAX);
  }
  out->slots_per_instance = (uint32_t)per;
  return NULL;
}

/* ---- implicit states ---- */

/* Element count of dims without -1 (each >= 1), or false past 2^63. */
static bool element_count(const int64_t *dims, size_t n, uint64_t *out) {
  uint64_t count = 1;
  for (size_t i = 0; i < n; i++)
    if (__builtin_mul_overflow(count, (uint64_t)dims[i], &count) || count > INT64_MAX)
      return false;
  *out = count;
  return true;
}

/* A data_file name that stays inside <dir>/initial_state: relative, no ".."
 * component, no NUL. */
static srv_status_t *data_file_check(const ctx_t *c, const char *at, upb_StringView v) {
  char q[SRV_QUOTE_SIZE];
  const char *shown = srv_quote(q, v.data, v.size);
  if (v.size == 0) return bad(c, "'%s' must name a file", at);
  if (memchr(v.data, '\0', v.size) != NULL) return bad(c, "'%s' holds a NUL byte", at);
  if (v.data[0] == '/')
    return bad(c, "'%s' is '%s': an absolute path; it must name a file in initial_state/",
               at, shown);
  for (size_t i = 0; i < v.size;) {
    size_t j = i;
    while (j < v.size && v.data[j] != '/') j++;
    if (j - i == 2 && v.data[i] == '.' && v.data[i + 1] == '.')
      return bad(c, "'%s' is '%s': a '..' component leaves initial_state/", at, shown);
    i = j + 1;
  }
  return NULL;
}

/* Reads `want` bytes of <dir>/initial_state/<name> (the whole file when
 * want is UINT64_MAX) into the arena. A file past the limit, or not a
 * regular file (a FIFO would block the load), is refused before any read. */
static srv_status_t *data_file_read(ctx_t *c, const char *at, upb_StringView name,
                                    uint64_t want, void **data, uint64_t *size) {
  srv_status_t *st = data_file_check(c, at, name);
  if (st != NULL) return st;
  char path[4096];
  int len = snprintf(path, sizeof path, "%s/initial_state/%.*s", c->dir, (int)name.size,
                     name.data);
  if (len < 0 || (size_t)len >= sizeof path)
    return bad(c, "'%s': the path of the data file is too long", at);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return bad(c, "'%s': %s: %s", at, path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return bad(c, "'%s': %s: not a regular file", at, path);
  }
  uint64_t file = (uint64_t)sb.st_size;
  if (file > SRV_CONFIG_INITIAL_STATE_MAX) {
    close(fd);
    return bad(c, "'%s': %s: %llu bytes, above the limit of %llu", at, path,
               (unsigned long long)file,
               (unsigned long long)SRV_CONFIG_INITIAL_STATE_MAX);
  }
  if (want == UINT64_MAX) want = file;
  if (want > file) {
    close(fd);
    return bad(c,
               "'%s': initial_state setting expects %llu bytes, but the data provided "
               "from %s only has %llu bytes",
               at, (unsigned long long)want, path, (unsigned long long)file);
  }
  char *buf = srv_arena_alloc(c->arena, want);
  uint64_t got = 0;
  while (got < want) { /* the file may shrink under us: then it is short */
    ssize_t r = read(fd, buf + got, want - got > (1u << 30) ? (1u << 30) : want - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (uint64_t)r;
  }
  close(fd);
  if (got < want)
    return bad(c, "'%s': %s: read %llu of %llu bytes", at, path, (unsigned long long)got,
               (unsigned long long)want);
  *data = buf;
  *size = want;
  return NULL;
}

/* BYTES data is `count` elements, each a 4-byte little-endian length and
 * its bytes. Triton hands the whole file to the backend; the first `count`
 * elements are kept here, so the tensor is well-formed. */
static srv_status_t *bytes_trim(const ctx_t *c, const char *at, const uint8_t *data,
                                uint64_t *size, uint64_t count) {
  uint64_t off = 0;
  for (uint64_t e = 0; e < count; e++) {
    uint32_t len;
    if (*size - off < 4) goto short_data;
    memcpy(&len, data + off, 4);
    off += 4;
    if (*size - off < len) goto short_data;
    off += len;
  }
  *size = off;
  return NULL;
short_data:
  return bad(c,
             "'%s': the data file holds fewer than the %llu BYTES elements of the dims "
             "(each a 4-byte length, then its bytes)",
             at, (unsigned long long)count);
}

/* The initial data's bytes: zeros, or the file's. Fixed-size types take
 * the dims' byte size (the file must have at least that much, as in
 * Triton); BYTES takes the file's first `count` elements, or for zeros
 * `count` empty strings (a zero length each). Bounded per model. */
static srv_status_t *initial_data_read(
    ctx_t *c, const char *at, const inference_ModelSequenceBatching_InitialState *is,
    srv_seq_state_config_t *out, uint64_t count) {
  uint32_t elem = api_datatype_byte_size(out->datatype);
  bool bytes = out->datatype == TRITONSERVER_TYPE_BYTES;
  uint64_t need;
  if (__builtin_mul_overflow(count, bytes ? 4u : elem, &need) ||
      need > SRV_CONFIG_INITIAL_STATE_MAX)
    return bad(c,
               "'%s.dims': %llu elements of %s are above the limit of %llu bytes of "
               "initial state",
               at, (unsigned long long)count, api_datatype_config_name(out->datatype),
               (unsigned long long)SRV_CONFIG_INITIAL_STATE_MAX);
  switch (inference_ModelSequenceBatching_InitialState_state_data_case(is)) {
    case inference_ModelSequenceBatching_InitialState_state_data_zero_data:
      out->initial_data = srv_arena_zalloc(c->arena, need);
      out->initial_size = need;
      break;
    case inference_ModelSequenceBatching_InitialState_state_data_data_file: {
      char file_at[128];
      snprintf(file_at, sizeof file_at, "%s.data_file", at);
      srv_status_t *st = data_file_read(
          c, file_at, inference_ModelSequenceBatching_InitialState_data_file(is),
          bytes ? UINT64_MAX : need, &out->initial_data, &out->initial_size);
      if (st == NULL && bytes)
        st = bytes_trim(c, file_at, out->initial_data, &out->initial_size, count);
      if (st != NULL) return st;
      break;
    }
    default:
      return bad(c,
                 "'%s': initial_state setting expects state '%s' to have state_data set "
                 "(zero_data or data_file)",
                 at, out->input_name);
  }
  if (out->initial_size > SRV_CONFIG_INITIAL_STATE_MAX - c->initial_total)
    return bad(c,
               "'%s': the initial states add up to more than the limit of %llu bytes per "
               "model version",
               at, (unsigned long long)SRV_CONFIG_INITIAL_STATE_MAX);
  c->initial_total += out->initial_size;
  return NULL;
}

/* initial_state (0 or 1 of them), with Triton's checks in Triton's order:
 * the data type, the name, the rank, then each dim (no -1; equal to the
 * state's where that is not -1). */
static srv_status_t *initial_read(ctx_t *c, size_t si,
                                  const inference_ModelSequenceBatching_State *s,
                                  srv_seq_state_config_t *out) {
  size_t n;
  const inference_ModelSequenceBatching_InitialState *const *list =
      inference_ModelSequenceBatching_State_initial_state(s, &n);
  char at[96];
  snprintf(at, sizeof at, "sequence_batching.state[%zu].initial_state", si);
  char q[SRV_QUOTE_SIZE];
  const char *in = srv_quote_str(q, out->input_name);
  if (n > 1)
    return bad(c,
               "'%s': initial_state field for state input '%s' must contain exactly one "
               "or zero element. Found '%zu' elements.",
               at, in, n);
  if (n == 0) return NULL;
  snprintf(at, sizeof at, "sequence_batching.state[%zu].initial_state[0]", si);
  const inference_ModelSequenceBatching_InitialState *is = list[0];
  if (api_datatype_from_config_value(
          inference_ModelSequenceBatching_InitialState_data_type(is)) != out->datatype)
    return bad(c,
               "'%s.data_type': the data type used for 'initial_state' field of state "
               "'%s' does not match the state data type",
               at, in);
  if (inference_ModelSequenceBatching_InitialState_name(is).size == 0)
    return bad(c,
               "'%s.name': field 'name' must be set when using initial_state for state "
               "input '%s'",
               at, in);
  size_t nd;
  const int64_t *dims = inference_ModelSequenceBatching_InitialState_dims(is, &nd);
  if (nd != out->dims_count)
    return bad(
        c,
        "'%s.dims': number of dimensions in 'initial_state' doesn't match the size "
        "of 'state' dimensions for state input '%s'. %zu != %u",
        at, in, nd, out->dims_count);
  for (size_t d = 0; d < nd; d++) {
    if (dims[d] == -1)
      return bad(c,
                 "'%s.dims': 'initial_state' field for state input name '%s' contains "
                 "variable dimensions",
                 at, in);
    if (out->dims[d] != -1 && dims[d] != out->dims[d])
      return bad(
          c,
          "'%s.dims': 'initial_state' dim for input name '%s' doesn't match 'state' "
          "dim description. %lld != %lld",
          at, in, (long long)dims[d], (long long)out->dims[d]);
    if (dims[d] < 1)
      return bad(c, "'%s.dims[%zu]' is %lld: dimensions must be integers >= 1", at, d,
                 (long long)dims[d]);
  }
  uint64_t count;
  if (!element_count(dims, nd, &count))
    return bad(c, "'%s.dims': the element count does not fit in 64 bits", at);
  out->has_initial = true;
  out->initial_dims = srv_arena_copy(c->arena, dims, nd * sizeof *dims);
  out->initial_dims_count = (uint32_t)nd;
  return initial_data_read(c, at, is, out, count);
}

static srv_status_t *state_read(ctx_t *c, size_t si,
                                const inference_ModelSequenceBatching_State *s,
                                srv_seq_state_config_t *out) {
  char at[96];
  memset(out, 0, sizeof *out);
  snprintf(at, sizeof at, "sequence_batching.state[%zu].input_name", si);
  srv_status_t *st = name_read(c, at, inference_ModelSequenceBatching_State_input_name(s),
                               &out->input_name);
  if (st != NULL) return st;
  snprintf(at, sizeof at, "sequence_batching.state[%zu].output_name", si);
  st = name_read(c, at, inference_ModelSequenceBatching_State_output_name(s),
                 &out->output_name);
  if (st != NULL) return st;
  out->datatype =
      api_datatype_from_config_value(inference_ModelSequenceBatching_State_data_type(s));
  if (out->datatype == TRITONSERVER_TYPE_INVALID)
    return bad(c, "'sequence_batching.state[%zu].data_type' must be set to a data type",
               si);
  size_t nd;
  const int64_t *dims = inference_ModelSequenceBatching_State_dims(s, &nd);
  for (size_t d = 0; d < nd; d++)
    if (dims[d] < 1 && dims[d] != -1)
      return bad(c,
                 "'sequence_batching.state[%zu].dims[%zu]' is %lld: dimension must be "
                 "integer >= 1, or -1 to indicate a variable-size dimension",
                 si, d, (long long)dims[d]);
  out->dims = srv_arena_copy(c->arena, dims, nd * sizeof *dims);
  out->dims_count = (uint32_t)nd;
  out->same_buffer =
      inference_ModelSequenceBatching_State_use_same_buffer_for_input_output(s);
  out->growable = inference_ModelSequenceBatching_State_use_growable_memory(s);
  return initial_read(c, si, s, out);
}

/* Every state, each input and output name used once (Triton refuses a
 * state input name given twice; an output given twice would feed two
 * states from one tensor). */
static srv_status_t *states_read(ctx_t *c, const inference_ModelSequenceBatching *sb,
                                 srv_seq_config_t *out) {
  size_t n;
  const inference_ModelSequenceBatching_State *const *s =
      inference_ModelSequenceBatching_state(sb, &n);
  if (n == 0) return NULL;
  out->states = srv_arena_alloc(c->arena, n * sizeof *out->states);
  for (size_t i = 0; i < n; i++) {
    srv_seq_state_config_t *st_out = &out->states[i];
    srv_status_t *st = state_read(c, i, s[i], st_out);
    if (st != NULL) return st;
    char q[SRV_QUOTE_SIZE];
    for (size_t k = 0; k < i; k++) {
      if (strcmp(out->states[k].input_name, st_out->input_name) == 0)
        return bad(c,
                   "'sequence_batching.state[%zu].input_name': state input name '%s' "
                   "specified more than once",
                   i, srv_quote_str(q, st_out->input_name));
      if (strcmp(out->states[k].output_name, st_out->output_name) == 0)
        return bad(c,
                   "'sequence_batching.state[%zu].output_name': state output name '%s' "
                   "specified more than once",
                   i, srv_quote_str(q, st_out->output_name));
    }
  }
  out->state_count = (uint32_t)n;
  return NULL;
}

/* ---- the API ---- */

srv_status_t *srv_seq_config_read(const inference_ModelConfig *config, const char *model,
                                  const char *source, const char *dir, upb_Arena *arena,
                                  srv_seq_config_t *out) {
  ctx_t c = {.model = model,
             .source = source,
             .dir = dir,
             .arena = arena,
             .max_batch_size = inference_ModelConfig_max_batch_size(config)};
  const inference_ModelSequenceBatching *sb =
      inference_ModelConfig_sequence_batching(config);
  if (sb == NULL) return bad(&c, "'sequence_batching' is not set");
  srv_seq_config_t r;
  memset(&r, 0, sizeof r);
  uint64_t idle = inference_ModelSequenceBatching_max_sequence_idle_microseconds(sb);
  r.idle_ns = idle == 0 ? 1000ull * 1000 * 1000 : us_to_ns(idle);
  srv_status_t *st = controls_read(&c, sb, &r);
  if (st == NULL)
    st = inference_ModelSequenceBatching_has_oldest(sb)
             ? oldest_read(&c, inference_ModelSequenceBatching_oldest(sb), &r)
             : direct_read(&c,
                           inference_ModelSequenceBatching_has_direct(sb)
                               ? inference_ModelSequenceBatching_direct(sb)
                               : NULL,
                           &r);
  if (st == NULL) st = slots_read(&c, config, sb, &r);
  if (st == NULL) st = states_read(&c, sb, &r);
  if (st != NULL) return st;
  *out = r;
  return NULL;
}

const srv_seq_control_t *srv_seq_config_control(const srv_seq_config_t *c,
                                                srv_seq_control_kind_t kind) {
  for (uint32_t i = 0; i < c->control_count; i++)
    if (c->controls[i].kind == kind) return &c->controls[i];
  return NULL;
}

const srv_seq_state_config_t *srv_seq_config_state_by_output(const srv_seq_config_t *c,
                                                             const char *name) {
  for (uint32_t i = 0; i < c->state_count; i++)
    if (strcmp(c->states[i].output_name, name) == 0) return &c->states[i];
  return NULL;
}
