/* Request building (see inputs.h): input shapes, random and zero data,
 * batching of entries, the upb encoding of each request, and with
 * --shared-memory system the tensors' places in their regions. */
#include "tools/perf/inputs_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"

size_t perf_shape_elements(const int64_t *shape, size_t ndims) {
  size_t n = 1;
  for (size_t d = 0; d < ndims; d++) n *= (size_t)shape[d];
  return n;
}

static void shape_format(char *buf, size_t cap, const int64_t *shape, size_t ndims) {
  size_t at = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < ndims && at < cap; d++)
    at +=
        (size_t)snprintf(buf + at, cap - at, "%s%lld", d ? "," : "", (long long)shape[d]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
}

bool perf_input_shape(const perf_options_t *o, const perf_input_t *in, int64_t *shape,
                      size_t *ndims, perf_err_t *err) {
  memcpy(shape, in->shape, in->ndims * sizeof *shape);
  *ndims = in->ndims;
  for (size_t s = 0; s < o->nshapes; s++) {
    if (strcmp(o->shapes[s].name, in->name) != 0) continue;
    memcpy(shape, o->shapes[s].dims, o->shapes[s].ndims * sizeof *shape);
    *ndims = o->shapes[s].ndims;
  }
  for (size_t d = 0; d < *ndims; d++) {
    if (shape[d] >= 0) continue;
    char buf[128];
    shape_format(buf, sizeof buf, in->shape, in->ndims);
    return perf_fail(err,
                     "input %s has the variable shape %s: give its dimensions with "
                     "--shape %s:d1,... (without the batch dimension)",
                     in->name, buf, in->name);
  }
  return true;
}

void perf_bytes_append(char **data, size_t *len, size_t *cap, const char *s, size_t n) {
  if (*len + 4 + n > *cap) {
    *cap = (*len + 4 + n) * 2;
    *data = perf_realloc(*data, *cap);
  }
  uint32_t l = (uint32_t)n;
  unsigned char *p = (unsigned char *)*data + *len;
  p[0] = (unsigned char)l, p[1] = (unsigned char)(l >> 8);
  p[2] = (unsigned char)(l >> 16), p[3] = (unsigned char)(l >> 24);
  memcpy(p + 4, s, n);
  *len += 4 + n;
}

uint16_t perf_bf16_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

uint16_t perf_fp16_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  int32_t exp = (int32_t)((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffff;
  if (((u >> 23) & 0xff) == 0xff)
    return sign | 0x7c00 | (mant ? 0x200 : 0); /* inf, nan */
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) { /* subnormal or zero */
    if (exp < -10) return sign;
    mant |= 0x800000;
    return sign | (uint16_t)((mant >> (14 - exp)) + ((mant >> (13 - exp)) & 1));
  }
  uint16_t h = sign | (uint16_t)(exp << 10) | (uint16_t)(mant >> 13);
  return h + ((mant >> 12) & 1); /* rounding may carry into the exponent: correct */
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

/* Random values: integers over their whole range, floats in [0, 1), BOOL
 * 0/1, BYTES `--string-data` or decimal digit strings. */
static void random_element(const perf_input_t *in, uint64_t *rng, char *out) {
  uint64_t r = rng_next(rng);
  float f = (float)(r >> 40) / (float)(1u << 24);
  switch (in->dtype) {
    case PERF_BOOL:
      out[0] = (char)(r & 1);
      break;
    case PERF_FP16: {
      uint16_t h = perf_fp16_from_float(f);
      memcpy(out, &h, 2);
    } break;
    case PERF_BF16: {
      uint16_t h = perf_bf16_from_float(f);
      memcpy(out, &h, 2);
    } break;
    case PERF_FP32:
      memcpy(out, &f, 4);
      break;
    case PERF_FP64: {
      double d = (double)(r >> 11) / (double)(1ull << 53);
      memcpy(out, &d, 8);
    } break;
    default:
      memcpy(out, &r, in->elem_size);
      break; /* little-endian integers */
  }
}

static void bytes_data(const perf_options_t *o, size_t count, bool zero, uint64_t *rng,
                       perf_tensor_t *t) {
  size_t cap = 0;
  char digits[256];
  size_t n = o->string_length < sizeof digits ? o->string_length : sizeof digits;
  for (size_t e = 0; e < count; e++) {
    if (o->string_data) {
      perf_bytes_append(&t->data, &t->len, &cap, o->string_data, strlen(o->string_data));
      continue;
    }
    for (size_t k = 0; k < n; k++)
      digits[k] = zero ? '0' : (char)('0' + rng_next(rng) % 10);
    perf_bytes_append(&t->data, &t->len, &cap, digits, n);
  }
  if (t->data == NULL) t->data = perf_malloc(1);
}

/* One entry of random (or zero) data for every input. */
static bool generated_entry(const perf_options_t *o, const perf_model_t *m, bool zero,
                            perf_entries_t *out, perf_err_t *err) {
  out->tensors = perf_calloc(m->ninputs, sizeof *out->tensors);
  out->n = 1;
  uint64_t rng = o->seed * 0x9E3779B97F4A7C15ull + 0x1234567ull;
  for (size_t i = 0; i < m->ninputs; i++) {
    const perf_input_t *in = &m->inputs[i];
    perf_tensor_t *t = &out->tensors[i];
    if (!perf_input_shape(o, in, t->shape, &t->ndims, err)) return false;
    size_t count = perf_shape_elements(t->shape, t->ndims);
    if (in->dtype == PERF_BYTES) {
      bytes_data(o, count, zero, &rng, t);
      continue;
    }
    t->len = count * in->elem_size;
    t->data = perf_calloc(1, t->len);
    for (size_t e = 0; !zero && e < count; e++)
      random_element(in, &rng, t->data + e * in->elem_size);
  }
  return true;
}

void perf_entries_free(perf_entries_t *e, size_t ninputs) {
  for (size_t k = 0; e->tensors && k < e->n * ninputs; k++) free(e->tensors[k].data);
  free(e->tensors);
  memset(e, 0, sizeof *e);
}

/* Input i of the request that batches entries first .. first+B-1 (mod n):
 * their data concatenated, every entry of the same shape. */
static bool batch_data(const perf_model_t *m, const perf_entries_t *es, size_t first,
                       unsigned batch, size_t i, upb_Arena *a, upb_StringView *out,
                       perf_err_t *err) {
  const perf_tensor_t *t0 = &es->tensors[first * m->ninputs + i];
  if (batch == 1) {
    *out = upb_StringView_FromDataAndSize(t0->data, t0->len);
    return true;
  }
  size_t len = 0;
  for (unsigned b = 0; b < batch; b++) {
    const perf_tensor_t *t = &es->tensors[((first + b) % es->n) * m->ninputs + i];
    if (t->ndims != t0->ndims || memcmp(t->shape, t0->shape, t->ndims * sizeof *t->shape))
      return perf_fail(err,
                       "input %s: entries %zu and %zu have different shapes, so they "
                       "cannot form one batch (--batch-size %u)",
                       m->inputs[i].name, first, (first + b) % es->n, batch);
    len += t->len;
  }
  char *buf = upb_Arena_Malloc(a, len ? len : 1);
  if (buf == NULL) PERF_FATAL("out of memory");
  len = 0;
  for (unsigned b = 0; b < batch; b++) {
    const perf_tensor_t *t = &es->tensors[((first + b) % es->n) * m->ninputs + i];
    memcpy(buf + len, t->data, t->len);
    len += t->len;
  }
  *out = upb_StringView_FromDataAndSize(buf, len);
  return true;
}

/* --shared-memory system: input i's region (holding its data for every
 * request, one after another) and where the next request's goes; each
 * output's region, which every request names (concurrent requests write
 * over one another there, as with perf_analyzer: the data is not read). */
typedef struct {
  perf_shm_region_t **inputs; /* m->ninputs */
  size_t *at;
  perf_shm_region_t **outputs; /* m->noutputs */
} shm_layout_t;

#define PARAM_SETTER(fn, type)                                                          \
  static void fn(type *t, const char *key, inference_InferParameter *p, upb_Arena *a) { \
    if (!type##_parameters_set(t, upb_StringView_FromString(key), p, a))                \
      PERF_FATAL("out of memory");                                                      \
  }
PARAM_SETTER(input_param_set, inference_ModelInferRequest_InferInputTensor)
PARAM_SETTER(output_param_set, inference_ModelInferRequest_InferRequestedOutputTensor)

static inference_InferParameter *param_new(upb_Arena *a) {
  inference_InferParameter *p = inference_InferParameter_new(a);
  if (p == NULL) PERF_FATAL("out of memory");
  return p;
}

static inference_InferParameter *string_param(upb_Arena *a, const char *s) {
  inference_InferParameter *p = param_new(a);
  inference_InferParameter_set_string_param(p, upb_StringView_FromString(s));
  return p;
}

static inference_InferParameter *int64_param(upb_Arena *a, uint64_t v) {
  inference_InferParameter *p = param_new(a);
  inference_InferParameter_set_int64_param(p, (int64_t)v);
  return p;
}

/* Input i's data goes to the next place of its region; the tensor says where. */
static void shm_input(shm_layout_t *l, size_t i, upb_StringView data,
                      inference_ModelInferRequest_InferInputTensor *in, upb_Arena *a) {
  perf_shm_region_t *r = l->inputs[i];
  if (l->at[i] + data.size > r->size) PERF_FATAL("input data past its region");
  memcpy(r->map + l->at[i], data.data, data.size);
  input_param_set(in, "shared_memory_region", string_param(a, r->name), a);
  input_param_set(in, "shared_memory_byte_size", int64_param(a, data.size), a);
  input_param_set(in, "shared_memory_offset", int64_param(a, l->at[i]), a);
  l->at[i] += data.size;
}

/* Every output, asked for into its own region. */
static void shm_outputs(const perf_model_t *m, const shm_layout_t *l,
                        inference_ModelInferRequest *req, upb_Arena *a) {
  for (size_t k = 0; k < m->noutputs; k++) {
    inference_ModelInferRequest_InferRequestedOutputTensor *out =
        inference_ModelInferRequest_add_outputs(req, a);
    if (out == NULL) PERF_FATAL("out of memory");
    inference_ModelInferRequest_InferRequestedOutputTensor_set_name(
        out, upb_StringView_FromString(m->outputs[k]));
    output_param_set(out, "shared_memory_region", string_param(a, l->outputs[k]->name),
                     a);
    output_param_set(out, "shared_memory_byte_size", int64_param(a, l->outputs[k]->size),
                     a);
  }
}

static bool encode_request(const perf_options_t *o, const perf_model_t *m,
                           const perf_entries_t *es, size_t first, shm_layout_t *shm,
                           grpc_slice *out, perf_err_t *err) {
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) PERF_FATAL("out of memory");
  inference_ModelInferRequest *req = inference_ModelInferRequest_new(a);
  if (req == NULL) PERF_FATAL("out of memory");
  inference_ModelInferRequest_set_model_name(req, upb_StringView_FromString(o->model));
  inference_ModelInferRequest_set_model_version(req,
                                                upb_StringView_FromString(o->version));
  if (o->mode == PERF_DECOUPLED) {
    inference_InferParameter *p = param_new(a);
    inference_InferParameter_set_bool_param(p, true);
    if (!inference_ModelInferRequest_parameters_set(
            req, upb_StringView_FromString("triton_enable_empty_final_response"), p, a))
      PERF_FATAL("out of memory");
  }
  bool ok = true;
  for (size_t i = 0; ok && i < m->ninputs; i++) {
    const perf_tensor_t *t = &es->tensors[first * m->ninputs + i];
    inference_ModelInferRequest_InferInputTensor *in =
        inference_ModelInferRequest_add_inputs(req, a);
    if (in == NULL) PERF_FATAL("out of memory");
    inference_ModelInferRequest_InferInputTensor_set_name(
        in, upb_StringView_FromString(m->inputs[i].name));
    inference_ModelInferRequest_InferInputTensor_set_datatype(
        in, upb_StringView_FromString(m->inputs[i].datatype));
    bool grown = true;
    if (m->max_batch_size > 0)
      grown =
          inference_ModelInferRequest_InferInputTensor_add_shape(in, o->batch_size, a);
    for (size_t d = 0; d < t->ndims; d++)
      grown = grown &&
              inference_ModelInferRequest_InferInputTensor_add_shape(in, t->shape[d], a);
    upb_StringView data;
    ok = batch_data(m, es, first, o->batch_size, i, a, &data, err);
    if (!grown) PERF_FATAL("out of memory");
    if (ok && shm != NULL)
      shm_input(shm, i, data, in, a);
    else if (ok && !inference_ModelInferRequest_add_raw_input_contents(req, data, a))
      PERF_FATAL("out of memory");
  }
  if (ok && shm != NULL) shm_outputs(m, shm, req, a);
  if (ok) {
    size_t len;
    char *bytes = inference_ModelInferRequest_serialize(req, a, &len);
    if (bytes == NULL) PERF_FATAL("out of memory");
    *out = grpc_slice_from_copied_buffer(bytes, len);
  }
  upb_Arena_Free(a);
  return ok;
}

/* The regions of a --shared-memory system run: input i's holds its data
 * for all es->n requests (each batching entries e .. e+B-1). */
static bool shm_layout_make(const perf_options_t *o, const perf_model_t *m,
                            const perf_entries_t *es, perf_shm_t *shm, shm_layout_t *l,
                            perf_err_t *err) {
  l->inputs = perf_calloc(m->ninputs, sizeof *l->inputs);
  l->at = perf_calloc(m->ninputs, sizeof *l->at);
  l->outputs = perf_calloc(m->noutputs ? m->noutputs : 1, sizeof *l->outputs);
  for (size_t i = 0; i < m->ninputs; i++) {
    size_t total = 0;
    for (size_t e = 0; e < es->n; e++)
      for (unsigned b = 0; b < o->batch_size; b++)
        total += es->tensors[((e + b) % es->n) * m->ninputs + i].len;
    if (!perf_shm_create(shm, "input", m->inputs[i].name, total, &l->inputs[i], err))
      return false;
  }
  for (size_t k = 0; k < m->noutputs; k++)
    if (!perf_shm_create(shm, "output", m->outputs[k], o->output_shm_size, &l->outputs[k],
                         err))
      return false;
  return true;
}

static void shm_layout_free(shm_layout_t *l) {
  free(l->inputs);
  free(l->at);
  free(l->outputs);
}

static char *summary(const perf_options_t *o, const perf_model_t *m,
                     const perf_entries_t *es) {
  size_t cap = 64 + m->ninputs * 160, at = 0;
  char *s = perf_malloc(cap);
  s[0] = '\0';
  for (size_t i = 0; i < m->ninputs && at < cap; i++) {
    const perf_tensor_t *t = &es->tensors[i];
    int64_t shape[PERF_MAX_DIMS + 1];
    size_t nd = 0;
    if (m->max_batch_size > 0) shape[nd++] = o->batch_size;
    for (size_t d = 0; d < t->ndims; d++) shape[nd++] = t->shape[d];
    char buf[128];
    shape_format(buf, sizeof buf, shape, nd);
    at += (size_t)snprintf(s + at, cap - at, "%s%.40s %s %s", i ? ", " : "",
                           m->inputs[i].name, m->inputs[i].datatype, buf);
  }
  return s;
}

static bool check_flags(const perf_options_t *o, const perf_model_t *m, perf_err_t *err) {
  if (m->max_batch_size == 0 && o->batch_size != 1)
    return perf_fail(err,
                     "model %s does not batch (max_batch_size 0): --batch-size must be 1",
                     o->model);
  if (m->max_batch_size > 0 && o->batch_size > (unsigned)m->max_batch_size)
    return perf_fail(err, "--batch-size %u is above model %s's max_batch_size %d",
                     o->batch_size, o->model, (int)m->max_batch_size);
  for (size_t s = 0; s < o->nshapes; s++) {
    size_t i = 0;
    while (i < m->ninputs && strcmp(m->inputs[i].name, o->shapes[s].name) != 0) i++;
    if (i == m->ninputs)
      return perf_fail(err, "--shape %s: model %s has no input of that name",
                       o->shapes[s].name, o->model);
  }
  return true;
}

bool perf_requests_build(const perf_options_t *o, const perf_model_t *m, perf_shm_t *shm,
                         perf_requests_t *out, perf_err_t *err) {
  memset(out, 0, sizeof *out);
  if (!check_flags(o, m, err)) return false;
  perf_entries_t es = {0};
  shm_layout_t layout = {0};
  bool ok;
  if (strcmp(o->input_data, "random") == 0 || strcmp(o->input_data, "zero") == 0)
    ok = generated_entry(o, m, strcmp(o->input_data, "zero") == 0, &es, err);
  else
    ok = perf_input_json_load(o, m, o->input_data, &es, err);
  if (ok && shm != NULL) ok = shm_layout_make(o, m, &es, shm, &layout, err);
  if (ok) {
    out->bodies = perf_calloc(es.n, sizeof *out->bodies);
    for (size_t e = 0; ok && e < es.n; e++) {
      ok = encode_request(o, m, &es, e, shm ? &layout : NULL, &out->bodies[e], err);
      if (ok) out->n++;
    }
    out->summary = summary(o, m, &es);
  }
  shm_layout_free(&layout);
  perf_entries_free(&es, m->ninputs);
  if (!ok) perf_requests_free(out);
  return ok;
}

void perf_requests_free(perf_requests_t *r) {
  for (size_t i = 0; i < r->n; i++) grpc_slice_unref(r->bodies[i]);
  free(r->bodies);
  free(r->summary);
  memset(r, 0, sizeof *r);
}
