/* ModelInferRequest -> TRITONBACKEND_Request (see infer_request.h). */
#include "server/grpc/infer_request.h"

#include <stdio.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/core.h"
#include "server/grpc/infer_aggregate.h"
#include "server/grpc/infer_contents.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

typedef inference_ModelInferRequest_InferInputTensor input_msg_t;
typedef inference_ModelInferRequest_InferRequestedOutputTensor output_msg_t;

/* The shared-memory references a request takes while it is built, in its
 * arena; released if the build fails, else moved to the request's state. */
typedef struct {
  srv_shm_t *shm;
  srv_shm_ref_t *refs;
  uint32_t count, cap;
} shm_binds_t;

/* A tensor's shared-memory parameters (Triton's shared-memory extension). */
typedef struct {
  const inference_InferParameter *region, *offset, *byte_size;
} shm_params_t;

#define SHM_REGION "shared_memory_region"
#define SHM_OFFSET "shared_memory_offset"
#define SHM_BYTE_SIZE "shared_memory_byte_size"

/* A non-negative integer parameter, given as int64 or uint64 (clients
 * differ; Triton takes int64_param). False for any other type. */
static bool param_uint_read(const inference_InferParameter *p, uint64_t *out) {
  switch (inference_InferParameter_parameter_choice_case(p)) {
    case inference_InferParameter_parameter_choice_int64_param: {
      int64_t v = inference_InferParameter_int64_param(p);
      if (v < 0) return false;
      *out = (uint64_t)v;
      return true;
    }
    case inference_InferParameter_parameter_choice_uint64_param:
      *out = inference_InferParameter_uint64_param(p);
      return true;
    default:
      return false;
  }
}

/* A shared-memory offset or size, with Triton's text for a wrong type. */
static srv_status_t *shm_uint(const inference_InferParameter *p, const char *key,
                              const char *tensor, uint64_t *out) {
  if (param_uint_read(p, out)) return NULL;
  return BAD("invalid value type for '%s' parameter for tensor '%s', expected int64_param.",
             key, tensor);
}

/* No shared-memory parameter at all: the common case, which needs neither
 * the checks below nor the tensor's name quoted for their error texts. */
static bool shm_params_none(const shm_params_t *p) {
  return p->region == NULL && p->offset == NULL && p->byte_size == NULL;
}

/* Triton's checks of the three parameters (its ParseSharedMemoryParams);
 * *offset and *size get their values when a region is named. */
static srv_status_t *shm_params_check(const shm_params_t *p, const char *tensor,
                                      uint64_t *offset, uint64_t *size) {
  *offset = 0;
  *size = 0;
  if (p->region == NULL) {
    if (p->byte_size != NULL || p->offset != NULL)
      return BAD("'%s' can not be specified without '" SHM_REGION
                 "' parameter for tensor '%s'",
                 p->byte_size != NULL ? SHM_BYTE_SIZE : SHM_OFFSET, tensor);
    return NULL;
  }
  if (inference_InferParameter_parameter_choice_case(p->region) !=
      inference_InferParameter_parameter_choice_string_param)
    return BAD("invalid value type for '" SHM_REGION
               "' parameter for tensor '%s', expected string_param.",
               tensor);
  if (p->byte_size == NULL)
    return BAD("'" SHM_BYTE_SIZE "' must be specified along with '" SHM_REGION
               "' parameter for tensor '%s'",
               tensor);
  srv_status_t *st = p->offset != NULL ? shm_uint(p->offset, SHM_OFFSET, tensor, offset) : NULL;
  if (st == NULL) st = shm_uint(p->byte_size, SHM_BYTE_SIZE, tensor, size);
  return st;
}

/* Whether the tensor names a region, with Triton's checks of the three
 * parameters; then takes the reference into `binds`, for `output` (the
 * model's name for it) or for an input when NULL. */
static srv_status_t *shm_bind(shm_binds_t *binds, const shm_params_t *p, const char *tensor,
                              const char *output, upb_Arena *arena, bool *bound) {
  *bound = false;
  uint64_t offset, size;
  srv_status_t *st = shm_params_check(p, tensor, &offset, &size);
  if (st != NULL || p->region == NULL) return st;
  if (binds->count == binds->cap) {
    uint32_t cap = binds->cap ? 2 * binds->cap : 4;
    srv_shm_ref_t *refs = srv_arena_alloc(arena, cap * sizeof *refs);
    if (binds->count) memcpy(refs, binds->refs, binds->count * sizeof *refs);
    binds->refs = refs;
    binds->cap = cap;
  }
  upb_StringView region = inference_InferParameter_string_param(p->region);
  srv_shm_ref_t *ref = &binds->refs[binds->count];
  st = srv_shm_acquire(binds->shm, region.data, region.size, offset, size, ref);
  if (st != NULL) return st;
  ref->output = output;
  binds->count++;
  *bound = true;
  return NULL;
}

static void shm_binds_release(shm_binds_t *binds) {
  for (uint32_t i = 0; i < binds->count; i++) srv_shm_release(&binds->refs[i]);
  binds->count = 0;
}

static shm_params_t input_shm_params(const input_msg_t *in) {
  shm_params_t p = {0};
  inference_InferParameter *v;
  if (inference_ModelInferRequest_InferInputTensor_parameters_size(in) == 0) return p;
  if (inference_ModelInferRequest_InferInputTensor_parameters_get(
          in, upb_StringView_FromString(SHM_REGION), &v))
    p.region = v;
  if (inference_ModelInferRequest_InferInputTensor_parameters_get(
          in, upb_StringView_FromString(SHM_OFFSET), &v))
    p.offset = v;
  if (inference_ModelInferRequest_InferInputTensor_parameters_get(
          in, upb_StringView_FromString(SHM_BYTE_SIZE), &v))
    p.byte_size = v;
  return p;
}

static uint64_t element_count(const int64_t *shape, size_t n) {
  uint64_t count = 1;
  for (size_t i = 0; i < n; i++) count *= (uint64_t)shape[i];
  return count;
}

/* An input's data in shared memory or in its typed contents, into `buf`,
 * between its shape check and its data check. */
static srv_status_t *input_data_bind(const srv_model_desc_t *d,
                                     const srv_tensor_spec_t *spec, const input_msg_t *in,
                                     const int64_t *shape, size_t n, shm_binds_t *binds,
                                     upb_Arena *arena, srv_buffer_t *buf) {
  shm_params_t sp = input_shm_params(in);
  bool in_shm = false;
  if (!shm_params_none(&sp)) { /* not even the call without parameters */
    srv_status_t *st = shm_bind(binds, &sp, spec->name, NULL, arena, &in_shm);
    if (st != NULL) return st;
  }
  if (!in_shm)
    return srv_infer_contents_to_buffer(
        d->name, spec, inference_ModelInferRequest_InferInputTensor_contents(in),
        element_count(shape, n), arena, buf);
  const srv_shm_ref_t *ref = &binds->refs[binds->count - 1];
  buf->base = ref->addr;
  buf->size = ref->byte_size;
  buf->memory_type = ref->memory_type;
  buf->memory_type_id = ref->memory_type_id;
  return NULL;
}

/* Input `index` of the request, with its raw_input_contents or NULL. `buf`
 * is its buffer record, uninitialised: every path below sets all its
 * fields. */
static srv_status_t *input_build(const srv_model_t *m, const srv_model_desc_t *d,
                                 size_t index, const input_msg_t *in,
                                 const upb_StringView *raw,
                                 shm_binds_t *binds, upb_Arena *arena, srv_buffer_t *buf,
                                 struct TRITONBACKEND_Input *out) {
  upb_StringView name = inference_ModelInferRequest_InferInputTensor_name(in);
  const srv_tensor_spec_t *spec;
  srv_status_t *st = srv_check_input_spec_from(m, index, name.data, name.size, &spec);
  if (st != NULL) return st;
  upb_StringView dt = inference_ModelInferRequest_InferInputTensor_datatype(in);
  TRITONSERVER_DataType type = api_datatype_from_protocol(dt.data, dt.size);
  if (type != spec->datatype) /* the check's own test, inline: no call when it passes */
    return srv_check_input_datatype(m, spec, type, dt.data, dt.size);
  size_t n;
  const int64_t *shape = inference_ModelInferRequest_InferInputTensor_shape(in, &n);
  out->name = spec->name;
  out->datatype = type;
  out->shape = shape;
  out->dims_count = (uint32_t)n;
  out->buffers = buf;
  out->buffer_count = 1;
  *buf = (srv_buffer_t){0}; /* host memory unless in a CUDA region */
  if (raw != NULL) {
    /* The common case: raw data, not in shared memory (inputs_data_check
     * checked its parameters), so nothing can fail between the shape
     * check and the data check, which are then made as one. */
    buf->base = raw->data;
    buf->size = raw->size;
    return srv_check_input_shape_data(m, spec, shape, n, buf, 1, &out->byte_size);
  }
  st = srv_check_input_shape(m, spec, shape, n);
  if (st == NULL) st = input_data_bind(d, spec, in, shape, n, binds, arena, buf);
  if (st == NULL) st = srv_check_input_data(m, spec, type, shape, n, buf, 1, &out->byte_size);
  return st;
}

/* Whether an input names a region: it then takes no raw_input_contents. */
static bool input_in_shm(const input_msg_t *in) {
  inference_InferParameter *v;
  return inference_ModelInferRequest_InferInputTensor_parameters_size(in) != 0 &&
         inference_ModelInferRequest_InferInputTensor_parameters_get(
             in, upb_StringView_FromString(SHM_REGION), &v);
}

/* Whether the `len` bytes at `s` are input j's name as sent. */
static bool input_named(const input_msg_t *in, const char *s, size_t len) {
  upb_StringView name = inference_ModelInferRequest_InferInputTensor_name(in);
  /* An empty name's data may be NULL: memcmp may not be given it. */
  return name.size == len && (len == 0 || memcmp(name.data, s, len) == 0);
}

/* Triton's gRPC frontend looks at where each input's data is, in order,
 * before the core checks anything: contents beside shared memory or beside
 * raw_input_contents, and an input left without data, are refused first,
 * naming the input as the request does. *dup is set to the first input
 * named as one before it (n: none), for inputs_count_check: the same loop
 * finds it, its error comes after every data error. */
static srv_status_t *inputs_data_check(const srv_model_desc_t *d,
                                       const input_msg_t *const *in, size_t n,
                                       size_t nraw, size_t *dup) {
  size_t next_raw = 0;
  *dup = n;
  for (size_t i = 0; i < n; i++) {
    char q[SRV_QUOTE_SIZE];
    upb_StringView name = inference_ModelInferRequest_InferInputTensor_name(in[i]);
    bool contents = inference_ModelInferRequest_InferInputTensor_has_contents(in[i]);
    shm_params_t sp = input_shm_params(in[i]);
    if (!shm_params_none(&sp)) {
      uint64_t offset, size;
      srv_status_t *st =
          shm_params_check(&sp, srv_quote(q, name.data, name.size), &offset, &size);
      if (st != NULL) return st;
    }
    if (sp.region != NULL) { /* in shared memory (input_in_shm) */
      if (contents)
        return BAD(
            "unexpected 'content' provided when using shared memory for input tensor "
            "'%s' for model '%s'",
            srv_quote(q, name.data, name.size), d->name);
    } else if (contents && nraw != 0) {
      return BAD(
          "contents field must not be specified when using raw_input_contents for '%s' "
          "for model '%s'",
          srv_quote(q, name.data, name.size), d->name);
    } else if (!contents && next_raw++ >= nraw) {
      return BAD("unable to find data for input tensor '%s' for model '%s' in request.",
                 srv_quote(q, name.data, name.size), d->name);
    }
    for (size_t j = 0; *dup == n && j < i; j++)
      if (input_named(in[j], name.data, name.size)) *dup = i;
  }
  if (nraw > next_raw)
    return BAD("model '%s': %zu raw_input_contents given for %zu inputs", d->name, nraw,
               next_raw);
  return NULL;
}

/* Triton's first checks of the inputs' names as sent: each once (its
 * frontend adds them one by one; `dup` from inputs_data_check), then their
 * count. The names are gathered only for the count's error text. */
static srv_status_t *inputs_count_check(const srv_model_t *m,
                                        const input_msg_t *const *in, size_t n,
                                        size_t dup, upb_Arena *arena) {
  if (dup < n) {
    char q[SRV_QUOTE_SIZE];
    upb_StringView name = inference_ModelInferRequest_InferInputTensor_name(in[dup]);
    return BAD("input '%s' already exists in request for model '%s'",
               srv_quote(q, name.data, name.size), srv_model_name(m));
  }
  if (srv_check_input_count_ok(m, n)) return NULL;
  srv_input_name_t *names = srv_arena_alloc(arena, (n ? n : 1) * sizeof *names);
  for (size_t i = 0; i < n; i++) {
    upb_StringView name = inference_ModelInferRequest_InferInputTensor_name(in[i]);
    names[i] = (srv_input_name_t){name.data, name.size};
  }
  return srv_check_input_count(m, names, n);
}

static srv_status_t *inputs_build(const srv_model_t *m, const srv_model_desc_t *d,
                                  const inference_ModelInferRequest *req,
                                  shm_binds_t *binds, upb_Arena *arena,
                                  TRITONBACKEND_Request *r) {
  size_t n, nraw;
  const input_msg_t *const *in = inference_ModelInferRequest_inputs(req, &n);
  const upb_StringView *raw = inference_ModelInferRequest_raw_input_contents(req, &nraw);
  size_t dup;
  srv_status_t *st = inputs_data_check(d, in, n, nraw, &dup);
  if (st == NULL) st = inputs_count_check(m, in, n, dup, arena);
  if (st != NULL) return st;
  /* The inputs, then their buffers, in one block (one arena call). */
  _Static_assert(sizeof(struct TRITONBACKEND_Input) % _Alignof(srv_buffer_t) == 0,
                 "the buffers after the inputs are aligned");
  struct TRITONBACKEND_Input *inputs =
      srv_arena_alloc(arena, (n ? n : 1) * (sizeof *inputs + sizeof(srv_buffer_t)));
  srv_buffer_t *bufs = (srv_buffer_t *)(inputs + (n ? n : 1));
  r->inputs = inputs;
  /* raw_input_contents go, in order, to the inputs not in shared memory. */
  size_t next_raw = 0;
  for (size_t i = 0; i < n; i++) {
    const upb_StringView *mine = NULL;
    if (nraw != 0 && !input_in_shm(in[i])) mine = &raw[next_raw++];
    memset(&r->inputs[i], 0, sizeof r->inputs[i]);
    st = input_build(m, d, i, in[i], mine, binds, arena, &bufs[i], &r->inputs[i]);
    if (st != NULL) return st;
  }
  r->input_count = (uint32_t)n;
  /* The names were found distinct, and each is a model input's: n of them
   * are all of the model's inputs, the required ones among them. */
  if (n == d->input_count) return NULL;
  return srv_check_required_inputs(m, r);
}

static shm_params_t output_shm_params(const output_msg_t *out) {
  shm_params_t p = {0};
  inference_InferParameter *v;
  if (inference_ModelInferRequest_InferRequestedOutputTensor_parameters_get(
          out, upb_StringView_FromString(SHM_REGION), &v))
    p.region = v;
  if (inference_ModelInferRequest_InferRequestedOutputTensor_parameters_get(
          out, upb_StringView_FromString(SHM_OFFSET), &v))
    p.offset = v;
  if (inference_ModelInferRequest_InferRequestedOutputTensor_parameters_get(
          out, upb_StringView_FromString(SHM_BYTE_SIZE), &v))
    p.byte_size = v;
  return p;
}

static srv_status_t *outputs_build(const srv_model_t *m, const srv_model_desc_t *d,
                                   const inference_ModelInferRequest *req,
                                   shm_binds_t *binds, upb_Arena *arena,
                                   TRITONBACKEND_Request *r) {
  size_t n;
  const output_msg_t *const *out = inference_ModelInferRequest_outputs(req, &n);
  if (n == 0) { /* all of the model's outputs */
    r->outputs = (const char **)d->output_names;
    r->output_count = d->output_count;
    return NULL;
  }
  r->outputs = srv_arena_alloc(arena, n * sizeof *r->outputs);
  for (size_t i = 0; i < n; i++) {
    upb_StringView name =
        inference_ModelInferRequest_InferRequestedOutputTensor_name(out[i]);
    const char *found;
    srv_status_t *st = srv_check_output_name(m, name.data, name.size, &found);
    if (st != NULL) return st;
    r->outputs[i] = found;
    if (inference_ModelInferRequest_InferRequestedOutputTensor_parameters_size(out[i]) == 0)
      continue;
    shm_params_t sp = output_shm_params(out[i]);
    inference_InferParameter *cls;
    if (inference_ModelInferRequest_InferRequestedOutputTensor_parameters_get(
            out[i], upb_StringView_FromString("classification"), &cls)) {
      if (sp.region != NULL)
        return BAD("output can't set both '" SHM_REGION "' and 'classification'");
      return BAD("output '%s' of model '%s': the classification parameter is not supported "
                 "over gRPC yet",
                 found, d->name);
    }
    bool bound;
    st = shm_bind(binds, &sp, found, found, arena, &bound);
    if (st != NULL) return st;
  }
  r->output_count = (uint32_t)n;
  return NULL;
}

/* An integer parameter the server reads (priority, timeout). */
static srv_status_t *param_uint(const srv_model_t *m, const inference_InferParameter *p,
                                const char *key, uint64_t *out) {
  if (param_uint_read(p, out)) return NULL;
  return srv_check_param_uint_error(m, key);
}

/* `sequence_id` as Triton's gRPC frontend takes it: int64_param (its bits
 * as the uint64 id, as Triton passes it on) or string_param; uint64_param
 * too, which Triton refuses and some clients send. A string id is copied
 * into the arena, NUL-terminated, so it lives as long as the request; it
 * is bounded, and one with a NUL inside is refused (Triton would cut it
 * there, making two ids one). The empty string, like 0, means "no
 * sequence": the scheduler decides what that is worth. */
static srv_status_t *sequence_id_read(const srv_model_desc_t *d,
                                      const inference_InferParameter *p, upb_Arena *arena,
                                      TRITONBACKEND_Request *r) {
  switch (inference_InferParameter_parameter_choice_case(p)) {
    case inference_InferParameter_parameter_choice_int64_param:
      r->correlation_id = (uint64_t)inference_InferParameter_int64_param(p);
      return NULL;
    case inference_InferParameter_parameter_choice_uint64_param:
      r->correlation_id = inference_InferParameter_uint64_param(p);
      return NULL;
    case inference_InferParameter_parameter_choice_string_param: {
      upb_StringView v = inference_InferParameter_string_param(p);
      srv_status_t *st = srv_check_sequence_id_string(r->model, v.data, v.size);
      if (st != NULL) return st;
      r->correlation_id_string = srv_arena_strview(arena, v);
      return NULL;
    }
    default:
      return BAD(
          "model '%s': invalid value type for 'sequence_id' parameter, expected "
          "int64_param or string_param.",
          d->name);
  }
}

/* `sequence_start` and `sequence_end`: bool_param only, as in Triton. */
static srv_status_t *sequence_flag_read(const srv_model_desc_t *d,
                                        const inference_ModelInferRequest *req,
                                        const char *key, uint32_t flag,
                                        TRITONBACKEND_Request *r) {
  inference_InferParameter *p;
  if (!inference_ModelInferRequest_parameters_get(req, upb_StringView_FromString(key),
                                                  &p))
    return NULL;
  if (inference_InferParameter_parameter_choice_case(p) !=
      inference_InferParameter_parameter_choice_bool_param)
    return BAD("model '%s': invalid value type for '%s' parameter, expected bool_param.",
               d->name, key);
  if (inference_InferParameter_bool_param(p)) r->flags |= flag;
  return NULL;
}

/* The correlation ID and the sequence flags (Triton's sequence extension).
 * A parameter of the wrong type gets Triton's text after the model's name,
 * which every error of this file starts with. */
static srv_status_t *sequence_read(const srv_model_desc_t *d,
                                   const inference_ModelInferRequest *req,
                                   upb_Arena *arena, TRITONBACKEND_Request *r) {
  inference_InferParameter *p;
  if (inference_ModelInferRequest_parameters_get(
          req, upb_StringView_FromString("sequence_id"), &p)) {
    srv_status_t *st = sequence_id_read(d, p, arena, r);
    if (st != NULL) return st;
  }
  srv_status_t *st = sequence_flag_read(d, req, "sequence_start",
                                        TRITONSERVER_REQUEST_FLAG_SEQUENCE_START, r);
  if (st == NULL)
    st = sequence_flag_read(d, req, "sequence_end",
                            TRITONSERVER_REQUEST_FLAG_SEQUENCE_END, r);
  return st;
}

#define EMPTY_FINAL "triton_enable_empty_final_response"

static bool key_is(upb_StringView k, const char *s) {
  return k.size == strlen(s) && memcmp(k.data, s, k.size) == 0;
}

/* The keys Triton's gRPC frontend reads itself and never hands on, and
 * Nereid's own (infer_aggregate.h). */
static bool key_reserved(upb_StringView k) {
  return key_is(k, "sequence_id") || key_is(k, "sequence_start") ||
         key_is(k, "sequence_end") || key_is(k, "priority") || key_is(k, "timeout") ||
         key_is(k, SRV_AGGREGATE_PARAMETER);
}

/* One parameter for the backend, typed as Triton's gRPC frontend types it:
 * int64, bool, string and double only. Keys starting with `triton_` are
 * Triton's: only EMPTY_FINAL (the stream's own) is allowed, and kept. */
static srv_status_t *param_forward(const srv_model_desc_t *d, upb_StringView key,
                                   const inference_InferParameter *p, upb_Arena *arena,
                                   TRITONBACKEND_Request *r) {
  int choice = p != NULL ? (int)inference_InferParameter_parameter_choice_case(p) : 0;
  char q[SRV_QUOTE_SIZE];
  if (key.size >= 7 && memcmp(key.data, "triton_", 7) == 0) {
    if (!key_is(key, EMPTY_FINAL))
      return BAD("model '%s': parameter keys starting with 'triton_' are reserved for "
                 "Triton usage. Only the following keys starting with 'triton_' are "
                 "allowed: " EMPTY_FINAL,
                 d->name);
    if (choice != inference_InferParameter_parameter_choice_bool_param)
      return BAD("model '%s': invalid value type for '" EMPTY_FINAL
                 "' parameter, expected bool_param.",
                 d->name);
    return NULL;
  }
  srv_param_value_t v = {0};
  TRITONSERVER_ParameterType type;
  size_t len = 0;
  switch (choice) {
    case inference_InferParameter_parameter_choice_int64_param:
      type = TRITONSERVER_PARAMETER_INT;
      v.i = inference_InferParameter_int64_param(p);
      break;
    case inference_InferParameter_parameter_choice_bool_param:
      type = TRITONSERVER_PARAMETER_BOOL;
      v.b = inference_InferParameter_bool_param(p);
      break;
    case inference_InferParameter_parameter_choice_string_param: {
      upb_StringView sv = inference_InferParameter_string_param(p);
      type = TRITONSERVER_PARAMETER_STRING;
      v.s = sv.data;
      len = sv.size;
      break;
    }
    case inference_InferParameter_parameter_choice_double_param:
      type = TRITONSERVER_PARAMETER_DOUBLE;
      v.d = inference_InferParameter_double_param(p);
      break;
    default:
      return BAD("model '%s': invalid value type for '%s' parameter, expected "
                 "int64_param, bool_param, or string_param.",
                 d->name, srv_quote(q, key.data, key.size));
  }
  return srv_request_param_add(r, arena, key.data, key.size, type, v, len);
}

/* The parameters the server itself reads: `priority` and `timeout` (queue
 * timeout in microseconds), as Triton's gRPC frontend does, and the
 * sequence ones; every other one goes to the backend. A request without
 * parameters costs one size check. */
static srv_status_t *params_read(const srv_model_desc_t *d,
                                 const inference_ModelInferRequest *req, upb_Arena *arena,
                                 TRITONBACKEND_Request *r) {
  size_t n = inference_ModelInferRequest_parameters_size(req);
  if (n == 0) return NULL;
  inference_InferParameter *p;
  uint64_t v = 0;
  if (inference_ModelInferRequest_parameters_get(
          req, upb_StringView_FromString("priority"), &p)) {
    srv_status_t *st = param_uint(r->model, p, "priority", &v);
    if (st != NULL) return st;
    r->priority = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
  }
  if (inference_ModelInferRequest_parameters_get(
          req, upb_StringView_FromString("timeout"), &p)) {
    srv_status_t *st = param_uint(r->model, p, "timeout", &v);
    if (st != NULL) return st;
    r->timeout_us = v;
  }
  srv_status_t *st = sequence_read(d, req, arena, r);
  if (st != NULL) return st;
  srv_request_params_reserve(r, arena, n);
  size_t iter = kUpb_Map_Begin;
  const inference_ModelInferRequest_ParametersEntry *e;
  while ((e = inference_ModelInferRequest_parameters_next(req, &iter)) != NULL) {
    upb_StringView key = inference_ModelInferRequest_ParametersEntry_key(e);
    if (key_reserved(key)) continue;
    st = param_forward(d, key, inference_ModelInferRequest_ParametersEntry_value(e), arena,
                       r);
    if (st != NULL) return st;
  }
  return NULL;
}

srv_status_t *srv_infer_request_build(srv_model_t *m, const srv_model_desc_t *d,
                                      const inference_ModelInferRequest *req,
                                      srv_shm_t *shm, upb_Arena *arena,
                                      TRITONBACKEND_Request **out, srv_shm_uses_t **uses) {
  TRITONBACKEND_Request *r = srv_arena_zalloc(arena, sizeof *r);
  r->model = m;
  upb_StringView id = inference_ModelInferRequest_id(req);
  r->id = id.size != 0 ? srv_arena_strview(arena, id) : ""; /* never written to */
  shm_binds_t binds = {.shm = shm};
  srv_status_t *st = params_read(d, req, arena, r);
  if (st == NULL) st = inputs_build(m, d, req, &binds, arena, r);
  if (st == NULL) st = srv_check_batch(m, r);
  if (st == NULL) st = outputs_build(m, d, req, &binds, arena, r);
  if (st != NULL) {
    shm_binds_release(&binds);
    return st;
  }
  *uses = srv_shm_uses_new(binds.refs, binds.count);
  *out = r;
  return NULL;
}
