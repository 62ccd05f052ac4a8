/* ModelInferRequest -> TRITONBACKEND_Request (see infer_request.h). */
#include "server/infer_request.h"

#include <stdio.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/infer_contents.h"
#include "server/log.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

typedef inference_ModelInferRequest_InferInputTensor input_msg_t;

static void *arena_alloc(upb_Arena *a, size_t size) {
  void *p = upb_Arena_Malloc(a, size ? size : 1);
  if (p == NULL) SRV_FATAL("out of memory");
  return p;
}

static const char *arena_str(upb_Arena *a, upb_StringView v) {
  char *s = arena_alloc(a, v.size + 1);
  if (v.size > 0) memcpy(s, v.data, v.size); /* empty views may be NULL */
  s[v.size] = '\0';
  return s;
}

static void shape_print(char *buf, size_t len, const int64_t *dims, size_t n) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (size_t i = 0; i < n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
                             (long long)dims[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

static const srv_tensor_spec_t *spec_find(const srv_model_t *m, upb_StringView name) {
  for (uint32_t i = 0; i < m->input_count; i++)
    if (strlen(m->inputs[i].name) == name.size &&
        memcmp(m->inputs[i].name, name.data, name.size) == 0)
      return &m->inputs[i];
  return NULL;
}

/* The shape must be the config's dims (-1 matches anything), preceded by
 * the batch dimension when the model batches. */
static srv_status_t *shape_check(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                 const int64_t *shape, size_t n) {
  size_t skip = m->max_batch_size > 0 ? 1 : 0;
  bool ok = n == spec->dims_count + skip;
  for (size_t i = 0; ok && i < spec->dims_count; i++)
    ok = spec->dims[i] == -1 ? shape[i + skip] >= 0 : shape[i + skip] == spec->dims[i];
  for (size_t i = 0; ok && i < n; i++) ok = shape[i] >= 0;
  if (ok) return NULL;
  char want[256], got[256];
  int64_t full[65];
  size_t k = 0;
  if (skip) full[k++] = -1;
  for (size_t i = 0; i < spec->dims_count && k < 65; i++) full[k++] = spec->dims[i];
  shape_print(want, sizeof want, full, k);
  shape_print(got, sizeof got, shape, n);
  return BAD("unexpected shape for input '%s' for model '%s'. Expected %s, got %s",
             spec->name, m->name, want, got);
}

static uint64_t element_count(const int64_t *shape, size_t n) {
  uint64_t count = 1;
  for (size_t i = 0; i < n; i++) count *= (uint64_t)shape[i];
  return count;
}

/* BYTES data is 4-byte little-endian lengths each followed by that many
 * bytes; it must hold exactly `count` elements. */
static bool bytes_elements_ok(const char *p, size_t len, uint64_t count) {
  size_t off = 0;
  for (uint64_t i = 0; i < count; i++) {
    if (len - off < 4) return false;
    uint32_t n = (uint32_t)(unsigned char)p[off] |
                 (uint32_t)(unsigned char)p[off + 1] << 8 |
                 (uint32_t)(unsigned char)p[off + 2] << 16 |
                 (uint32_t)(unsigned char)p[off + 3] << 24;
    off += 4;
    if (len - off < n) return false;
    off += n;
  }
  return off == len;
}

static srv_status_t *input_build(const srv_model_t *m, const input_msg_t *in,
                                 const upb_StringView *raw, upb_Arena *arena,
                                 struct TRITONBACKEND_Input *out) {
  upb_StringView name = inference_ModelInferRequest_InferInputTensor_name(in);
  const srv_tensor_spec_t *spec = spec_find(m, name);
  if (spec == NULL)
    return BAD("unexpected inference input '%.*s' for model '%s'", (int)name.size,
               name.data, m->name);
  upb_StringView dt = inference_ModelInferRequest_InferInputTensor_datatype(in);
  TRITONSERVER_DataType type = api_datatype_from_protocol(dt.data, dt.size);
  if (type != spec->datatype)
    return BAD("inference input '%s' data-type is '%.*s', but model '%s' expects '%s'",
               spec->name, (int)dt.size, dt.data, m->name,
               api_datatype_protocol_name(spec->datatype));
  size_t n;
  const int64_t *shape = inference_ModelInferRequest_InferInputTensor_shape(in, &n);
  srv_status_t *st = shape_check(m, spec, shape, n);
  if (st != NULL) return st;
  out->name = spec->name;
  out->datatype = type;
  out->shape = shape;
  out->dims_count = (uint32_t)n;
  uint64_t count = element_count(shape, n);
  srv_buffer_t *buf = arena_alloc(arena, sizeof *buf);
  const inference_InferTensorContents *contents =
      inference_ModelInferRequest_InferInputTensor_contents(in);
  if (raw != NULL && contents != NULL)
    return BAD(
        "contents field must not be specified when using raw_input_contents for '%s' "
        "for model '%s'",
        spec->name, m->name);
  if (raw != NULL) {
    buf->base = raw->data;
    buf->size = raw->size;
  } else {
    st = srv_infer_contents_to_buffer(m, spec, contents, count, arena, buf);
    if (st != NULL) return st;
  }
  if (type == TRITONSERVER_TYPE_BYTES) {
    if (!bytes_elements_ok(buf->base, buf->size, count))
      return BAD(
          "input '%s' for model '%s': BYTES data does not hold exactly %llu "
          "length-prefixed elements",
          spec->name, m->name, (unsigned long long)count);
  } else if (buf->size != count * api_datatype_byte_size(type)) {
    return BAD(
        "input byte size mismatch for input '%s' for model '%s'. Expected %llu, got "
        "%llu",
        spec->name, m->name, (unsigned long long)(count * api_datatype_byte_size(type)),
        (unsigned long long)buf->size);
  }
  out->byte_size = buf->size;
  out->buffers = buf;
  out->buffer_count = 1;
  return NULL;
}

static srv_status_t *inputs_build(const srv_model_t *m,
                                  const inference_ModelInferRequest *req,
                                  upb_Arena *arena, TRITONBACKEND_Request *r) {
  size_t n, nraw;
  const input_msg_t *const *in = inference_ModelInferRequest_inputs(req, &n);
  const upb_StringView *raw = inference_ModelInferRequest_raw_input_contents(req, &nraw);
  if (nraw != 0 && nraw != n)
    return BAD("model '%s': %zu raw_input_contents given for %zu inputs", m->name, nraw,
               n);
  r->inputs = arena_alloc(arena, n * sizeof *r->inputs);
  for (size_t i = 0; i < n; i++) {
    srv_status_t *st = input_build(m, in[i], nraw ? &raw[i] : NULL, arena, &r->inputs[i]);
    if (st != NULL) return st;
    for (size_t j = 0; j < i; j++)
      if (r->inputs[j].name == r->inputs[i].name)
        return BAD("input '%s' given twice for model '%s'", r->inputs[i].name, m->name);
  }
  r->input_count = (uint32_t)n;
  uint32_t required = 0;
  for (uint32_t i = 0; i < m->input_count; i++) required += !m->inputs[i].optional;
  for (uint32_t i = 0; i < m->input_count; i++) {
    if (m->inputs[i].optional) continue;
    bool given = false;
    for (uint32_t j = 0; j < r->input_count && !given; j++)
      given = r->inputs[j].name == m->inputs[i].name;
    if (!given)
      return BAD(
          "expected %u inputs but got %u inputs for model '%s'; missing required "
          "input '%s'",
          required, r->input_count, m->name, m->inputs[i].name);
  }
  return NULL;
}

/* Every input must agree on the batch size, within max_batch_size. */
static srv_status_t *batch_check(const srv_model_t *m, TRITONBACKEND_Request *r) {
  r->batch_size = 1;
  if (m->max_batch_size == 0 || r->input_count == 0) return NULL;
  int64_t batch = r->inputs[0].shape[0];
  for (uint32_t i = 1; i < r->input_count; i++)
    if (r->inputs[i].shape[0] != batch)
      return BAD(
          "inputs of model '%s' disagree on the batch size (%lld for '%s', %lld for "
          "'%s')",
          m->name, (long long)batch, r->inputs[0].name, (long long)r->inputs[i].shape[0],
          r->inputs[i].name);
  if (batch < 1 || batch > m->max_batch_size)
    return BAD("inference request batch-size must be <= %d for '%s'",
               (int)m->max_batch_size, m->name);
  r->batch_size = (uint32_t)batch;
  return NULL;
}

static srv_status_t *outputs_build(const srv_model_t *m,
                                   const inference_ModelInferRequest *req,
                                   upb_Arena *arena, TRITONBACKEND_Request *r) {
  size_t n;
  const inference_ModelInferRequest_InferRequestedOutputTensor *const *out =
      inference_ModelInferRequest_outputs(req, &n);
  if (n == 0) { /* all of the model's outputs */
    r->outputs = m->output_names;
    r->output_count = m->output_count;
    return NULL;
  }
  r->outputs = arena_alloc(arena, n * sizeof *r->outputs);
  for (size_t i = 0; i < n; i++) {
    upb_StringView name =
        inference_ModelInferRequest_InferRequestedOutputTensor_name(out[i]);
    const char *found = NULL;
    for (uint32_t k = 0; k < m->output_count && found == NULL; k++)
      if (strlen(m->output_names[k]) == name.size &&
          memcmp(m->output_names[k], name.data, name.size) == 0)
        found = m->output_names[k];
    if (found == NULL)
      return BAD("unexpected inference output '%.*s' for model '%s'", (int)name.size,
                 name.data, m->name);
    if (inference_ModelInferRequest_InferRequestedOutputTensor_parameters_size(out[i]) >
        0)
      return BAD(
          "output '%s' of model '%s': output parameters (classification, shared "
          "memory) are not supported yet",
          found, m->name);
    r->outputs[i] = found;
  }
  r->output_count = (uint32_t)n;
  return NULL;
}

srv_status_t *srv_infer_request_build(srv_model_t *m,
                                      const inference_ModelInferRequest *req,
                                      upb_Arena *arena, TRITONBACKEND_Request **out) {
  TRITONBACKEND_Request *r = arena_alloc(arena, sizeof *r);
  memset(r, 0, sizeof *r);
  r->model = m;
  r->id = arena_str(arena, inference_ModelInferRequest_id(req));
  srv_status_t *st = inputs_build(m, req, arena, r);
  if (st == NULL) st = batch_check(m, r);
  if (st == NULL) st = outputs_build(m, req, arena, r);
  if (st != NULL) return st;
  *out = r;
  return NULL;
}
