/* --input-data files in perf_analyzer's JSON format (see inputs.h):
 *   {"data": [ {"INPUT0": [1, 2, ...], "INPUT1": {"content": [...], "shape": [2, 8]},
 *               "RAW": {"b64": "...", "shape": [4]}}, ... ]}
 * Each entry gives every input; nested arrays are flattened; BYTES elements
 * are strings. A flat array of an input with one variable dimension (and
 * no --shape) fills that dimension. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/perf/inputs_internal.h"
#include "tools/perf/json.h"

typedef struct {
  const perf_json_t **items;
  size_t n, cap;
} leaves_t;

static void flatten(const perf_json_t *v, leaves_t *out) {
  if (v->type == PERF_JSON_ARRAY) {
    for (size_t i = 0; i < v->n; i++) flatten(&v->items[i], out);
    return;
  }
  if (out->n == out->cap) {
    out->cap = out->cap ? out->cap * 2 : 64;
    out->items = perf_realloc(out->items, out->cap * sizeof *out->items);
  }
  out->items[out->n++] = v;
}

static bool int_element(const perf_input_t *in, const perf_json_t *v, char *out) {
  static const struct {
    perf_dtype_t t;
    long long lo;
    unsigned long long hi;
  } ranges[] = {
      {PERF_INT8, -128, 127},
      {PERF_INT16, -32768, 32767},
      {PERF_INT32, -2147483648ll, 2147483647},
      {PERF_INT64, INT64_MIN, INT64_MAX},
      {PERF_UINT8, 0, 255},
      {PERF_UINT16, 0, 65535},
      {PERF_UINT32, 0, 4294967295ull},
      {PERF_UINT64, 0, UINT64_MAX},
  };
  char buf[64];
  if (v->type == PERF_JSON_BOOL)
    snprintf(buf, sizeof buf, "%d", v->boolean);
  else if (v->type != PERF_JSON_NUMBER || v->num_len >= sizeof buf)
    return false;
  else
    memcpy(buf, v->num, v->num_len), buf[v->num_len] = '\0';
  char *end;
  errno = 0;
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
    if (ranges[r].t != in->dtype) continue;
    uint64_t bits;
    if (ranges[r].lo < 0) {
      long long x = strtoll(buf, &end, 10);
      if (errno || *end || x < ranges[r].lo || x > (long long)ranges[r].hi) return false;
      bits = (uint64_t)x;
    } else {
      if (buf[0] == '-') return false;
      unsigned long long x = strtoull(buf, &end, 10);
      if (errno || *end || x > ranges[r].hi) return false;
      bits = x;
    }
    memcpy(out, &bits, in->elem_size); /* little-endian */
    return true;
  }
  return false;
}

static bool number_element(const perf_input_t *in, const perf_json_t *v, char *out) {
  if (in->dtype == PERF_BOOL) {
    if (v->type == PERF_JSON_BOOL) return out[0] = v->boolean, true;
    if (v->type != PERF_JSON_NUMBER) return false;
    return out[0] = !(v->num_len == 1 && v->num[0] == '0'), true;
  }
  if (in->dtype != PERF_FP16 && in->dtype != PERF_FP32 && in->dtype != PERF_FP64 &&
      in->dtype != PERF_BF16)
    return int_element(in, v, out);
  char buf[64], *end;
  if (v->type != PERF_JSON_NUMBER || v->num_len >= sizeof buf) return false;
  memcpy(buf, v->num, v->num_len);
  buf[v->num_len] = '\0';
  double d = strtod(buf, &end);
  if (*end) return false;
  float f = (float)d;
  uint16_t h;
  switch (in->dtype) {
    case PERF_FP64:
      memcpy(out, &d, 8);
      break;
    case PERF_FP32:
      memcpy(out, &f, 4);
      break;
    case PERF_FP16:
      h = perf_fp16_from_float(f), memcpy(out, &h, 2);
      break;
    default:
      h = perf_bf16_from_float(f), memcpy(out, &h, 2);
      break;
  }
  return true;
}

static bool elements(const perf_input_t *in, const leaves_t *l, perf_tensor_t *t,
                     size_t entry, perf_err_t *err) {
  size_t cap = 0;
  if (in->dtype != PERF_BYTES) t->data = perf_malloc(l->n * in->elem_size + 1);
  for (size_t e = 0; e < l->n; e++) {
    const perf_json_t *v = l->items[e];
    bool ok;
    if (in->dtype == PERF_BYTES) {
      ok = v->type == PERF_JSON_STRING || v->type == PERF_JSON_NUMBER;
      if (ok && v->type == PERF_JSON_STRING)
        perf_bytes_append(&t->data, &t->len, &cap, v->str, v->str_len);
      else if (ok)
        perf_bytes_append(&t->data, &t->len, &cap, v->num, v->num_len);
    } else {
      ok = number_element(in, v, t->data + e * in->elem_size);
    }
    if (!ok)
      return perf_fail(err, "entry %zu, input %s: element %zu is not a valid %s value",
                       entry, in->name, e, in->datatype);
  }
  if (in->dtype != PERF_BYTES) t->len = l->n * in->elem_size;
  if (t->data == NULL) t->data = perf_malloc(1);
  return true;
}

static bool json_shape(const perf_json_t *v, perf_tensor_t *t) {
  if (v->type != PERF_JSON_ARRAY || v->n > PERF_MAX_DIMS) return false;
  t->ndims = v->n;
  for (size_t d = 0; d < v->n; d++) {
    const perf_json_t *x = &v->items[d];
    char buf[32], *end;
    if (x->type != PERF_JSON_NUMBER || x->num_len >= sizeof buf) return false;
    memcpy(buf, x->num, x->num_len);
    buf[x->num_len] = '\0';
    errno = 0;
    long long n = strtoll(buf, &end, 10);
    if (errno || *end || n < 0) return false;
    t->shape[d] = n;
  }
  return true;
}

/* The shape of a value given without "shape": the input's (with --shape);
 * one variable dimension left is filled from the element count. */
static bool implied_shape(const perf_options_t *o, const perf_input_t *in, size_t count,
                          perf_tensor_t *t, size_t entry, perf_err_t *err) {
  int64_t *s = t->shape;
  memcpy(s, in->shape, in->ndims * sizeof *s);
  t->ndims = in->ndims;
  for (size_t k = 0; k < o->nshapes; k++) {
    if (strcmp(o->shapes[k].name, in->name) != 0) continue;
    memcpy(s, o->shapes[k].dims, o->shapes[k].ndims * sizeof *s);
    t->ndims = o->shapes[k].ndims;
  }
  size_t variable = t->ndims, known = 1;
  for (size_t d = 0; d < t->ndims; d++) {
    if (s[d] >= 0) {
      known *= (size_t)s[d];
    } else if (variable == t->ndims) {
      variable = d;
    } else {
      return perf_fail(err,
                       "entry %zu, input %s: more than one variable dimension: give "
                       "\"shape\" in the file or --shape",
                       entry, in->name);
    }
  }
  if (variable < t->ndims) {
    if (known == 0 || count % known)
      return perf_fail(err, "entry %zu, input %s: %zu elements do not fit its shape",
                       entry, in->name, count);
    s[variable] = (int64_t)(count / known);
  }
  return true;
}

static int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

static bool b64_decode(const char *s, size_t n, perf_tensor_t *t) {
  t->data = perf_malloc(n / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '=' || s[i] == '\n' || s[i] == '\r') continue;
    int v = b64_value(s[i]);
    if (v < 0) return false;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      t->data[t->len++] = (char)(acc >> bits);
    }
  }
  return true;
}

static bool tensor_from_json(const perf_options_t *o, const perf_input_t *in,
                             const perf_json_t *v, perf_tensor_t *t, size_t entry,
                             perf_err_t *err) {
  const perf_json_t *content = v, *shape = NULL, *b64 = NULL;
  if (v->type == PERF_JSON_OBJECT) {
    content = perf_json_get(v, "content");
    shape = perf_json_get(v, "shape");
    b64 = perf_json_get(v, "b64");
    if ((content == NULL) == (b64 == NULL))
      return perf_fail(err, "entry %zu, input %s: give \"content\" or \"b64\"", entry,
                       in->name);
  }
  if (shape != NULL && !json_shape(shape, t))
    return perf_fail(err,
                     "entry %zu, input %s: \"shape\" is not a list of up to %d sizes",
                     entry, in->name, PERF_MAX_DIMS);
  if (b64 != NULL) {
    if (b64->type != PERF_JSON_STRING || !b64_decode(b64->str, b64->str_len, t))
      return perf_fail(err, "entry %zu, input %s: \"b64\" is not base64", entry,
                       in->name);
    if (shape == NULL &&
        !implied_shape(o, in, in->elem_size ? t->len / in->elem_size : 1, t, entry, err))
      return false;
    return true; /* the server checks the byte size against the shape */
  }
  leaves_t l = {0};
  flatten(content, &l);
  bool ok = (shape != NULL || implied_shape(o, in, l.n, t, entry, err)) &&
            elements(in, &l, t, entry, err);
  if (ok && perf_shape_elements(t->shape, t->ndims) != l.n)
    ok = perf_fail(err, "entry %zu, input %s: %zu elements, but the shape holds %zu",
                   entry, in->name, l.n, perf_shape_elements(t->shape, t->ndims));
  free(l.items);
  return ok;
}

static bool entry_load(const perf_options_t *o, const perf_model_t *m,
                       const perf_json_t *entry, size_t e, perf_tensor_t *ts,
                       perf_err_t *err) {
  if (entry->type != PERF_JSON_OBJECT)
    return perf_fail(err,
                     "entry %zu of \"data\" is not an object (sequences of steps are "
                     "not supported)",
                     e);
  for (size_t k = 0; k < entry->n; k++) {
    size_t i = 0;
    while (i < m->ninputs && strcmp(m->inputs[i].name, entry->keys[k]) != 0) i++;
    if (i == m->ninputs)
      return perf_fail(err, "entry %zu: model %s has no input '%s'", e, o->model,
                       entry->keys[k]);
  }
  for (size_t i = 0; i < m->ninputs; i++) {
    const perf_json_t *v = perf_json_get(entry, m->inputs[i].name);
    if (v == NULL)
      return perf_fail(err, "entry %zu: no value for input %s", e, m->inputs[i].name);
    if (!tensor_from_json(o, &m->inputs[i], v, &ts[i], e, err)) return false;
  }
  return true;
}

static char *file_read(const char *path, size_t *len, perf_err_t *err) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return perf_fail(err, "--input-data %s: %s", path, strerror(errno)), NULL;
  size_t cap = 1 << 16;
  char *buf = perf_malloc(cap);
  *len = 0;
  size_t got;
  while ((got = fread(buf + *len, 1, cap - *len, f)) > 0) {
    *len += got;
    if (*len == cap) buf = perf_realloc(buf, cap *= 2);
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return perf_fail(err, "--input-data %s: read error", path), NULL;
  }
  return buf;
}

bool perf_input_json_load(const perf_options_t *o, const perf_model_t *m,
                          const char *path, perf_entries_t *out, perf_err_t *err) {
  memset(out, 0, sizeof *out);
  size_t len;
  char *text = file_read(path, &len, err);
  if (text == NULL) return false;
  perf_json_t root;
  perf_err_t jerr;
  bool ok = perf_json_parse(text, len, &root, &jerr);
  if (!ok) {
    perf_fail(err, "--input-data %s: %s", path, jerr.msg);
    free(text);
    return false;
  }
  const perf_json_t *data = perf_json_get(&root, "data");
  if (data == NULL || data->type != PERF_JSON_ARRAY || data->n == 0) {
    ok = perf_fail(err, "--input-data %s: no non-empty \"data\" list at the top", path);
  } else {
    out->tensors = perf_calloc(data->n * m->ninputs, sizeof *out->tensors);
    out->n = data->n;
    for (size_t e = 0; ok && e < data->n; e++) {
      ok = entry_load(o, m, &data->items[e], e, &out->tensors[e * m->ninputs], err);
      if (!ok) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        perf_fail(err, "--input-data %s: %s", path, msg);
      }
    }
  }
  perf_json_free(&root);
  free(text);
  if (!ok) perf_entries_free(out, m->ninputs);
  return ok;
}
