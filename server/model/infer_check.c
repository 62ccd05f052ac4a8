/* Request checks against a model's configuration (see infer_check.h). Any
 * thread: they only read the model. The texts are Triton's where Triton has
 * one; test/e2e/infer_test.py pins the gRPC side of them. */
#include "server/model/infer_check.h"
#include "server/model/model.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static void shape_print(char *buf, size_t len, const int64_t *dims, size_t n) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (size_t i = 0; i < n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
                             (long long)dims[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

/* Whether the NUL-terminated `name` is the `len` bytes at `s` (which may
 * hold a NUL). Byte by byte, stopping at name's end: tensor names are
 * short, and strlen and memcmp calls cost twice as much per compare
 * (issue 21). */
static bool name_is(const char *name, const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (name[i] != s[i] || name[i] == '\0') return false;
  return name[len] == '\0';
}

/* The error texts, out of line: the checks that pass (every request's)
 * then keep no text buffer on their stack, so they set up no frame and no
 * stack-protector canary (docs/perf.md, issue 21). */
#define COLD __attribute__((cold, noinline))

static COLD srv_status_t *unexpected_input(const srv_model_t *m, const char *name,
                                           size_t len) {
  char q[SRV_QUOTE_SIZE];
  return BAD("unexpected inference input '%s' for model '%s'", srv_quote(q, name, len),
             m->name);
}

srv_status_t *srv_check_input_spec_from(const srv_model_t *m, size_t first,
                                        const char *name, size_t len,
                                        const srv_tensor_spec_t **spec) {
  uint32_t count = m->input_count;
  size_t i = first < count ? first : 0;
  for (uint32_t k = 0; k < count; k++) {
    if (name_is(m->inputs[i].name, name, len)) {
      *spec = &m->inputs[i];
      return NULL;
    }
    if (++i == count) i = 0;
  }
  return unexpected_input(m, name, len);
}

srv_status_t *srv_check_input_spec(const srv_model_t *m, const char *name, size_t len,
                                   const srv_tensor_spec_t **spec) {
  return srv_check_input_spec_from(m, 0, name, len, spec);
}

static COLD srv_status_t *datatype_error(const srv_model_t *m,
                                         const srv_tensor_spec_t *spec, const char *given,
                                         size_t given_len) {
  char q[SRV_QUOTE_SIZE];
  return BAD("inference input '%s' data-type is '%s', but model '%s' expects '%s'",
             spec->name, srv_quote(q, given, given_len), m->name,
             api_datatype_protocol_name(spec->datatype));
}

srv_status_t *srv_check_input_datatype(const srv_model_t *m,
                                       const srv_tensor_spec_t *spec,
                                       TRITONSERVER_DataType type, const char *given,
                                       size_t given_len) {
  if (type == spec->datatype) return NULL;
  return datatype_error(m, spec, given, given_len);
}

/* Whether the shape's data, in bytes (BYTES: its length prefixes alone),
 * fits in 64 bits; past that, element counts and sizes computed from the
 * shape wrap, and a huge shape would pass with little or no data. `size`
 * is the datatype's (api_datatype_byte_size); *bytes gets the data's: the
 * element count times size (times 4 for BYTES). */
static bool shape_fits(uint32_t size, const int64_t *shape, size_t n, uint64_t *bytes) {
  uint64_t b = size > 0 ? size : 4;
  for (size_t i = 0; i < n; i++)
    if (__builtin_mul_overflow(b, (uint64_t)shape[i], &b)) return false;
  *bytes = b;
  return true;
}

/* Triton's advice after a shape mismatch of a batching model. */
#define BATCH_NOTE                                                                  \
  "NOTE: Setting a non-zero max_batch_size in the model config requires a batch "   \
  "dimension to be prepended to each input shape. If you want to specify the full " \
  "shape including the batch dim in your input dims config, try setting "           \
  "max_batch_size to zero. See the model configuration docs for more info on "      \
  "max_batch_size."

static COLD srv_status_t *shape_unspecified(const srv_model_t *m,
                                            const srv_tensor_spec_t *spec,
                                            const int64_t *shape, size_t n) {
  char got[256];
  shape_print(got, sizeof got, shape, n);
  return BAD(
      "All input dimensions should be specified for input '%s' for model "
      "'%s', got %s",
      spec->name, m->name, got);
}

/* `ok`: the shape matched and only its size failed. */
static COLD srv_status_t *shape_error(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                      const int64_t *shape, size_t n, size_t skip,
                                      bool ok) {
  char want[256], got[256];
  shape_print(got, sizeof got, shape, n);
  if (ok)
    return BAD(
        "input '%s' for model '%s': shape %s is too large: its data would not fit "
        "in 2^64 bytes",
        spec->name, m->name, got);
  int64_t full[65] = {0};
  size_t k = 0;
  if (skip) full[k++] = -1;
  for (size_t i = 0; i < spec->dims_count && k < 65; i++) full[k++] = spec->dims[i];
  shape_print(want, sizeof want, full, k);
  return BAD("unexpected shape for input '%s' for model '%s'. Expected %s, got %s. %s",
             spec->name, m->name, want, got, skip ? BATCH_NOTE : "");
}

/* srv_check_input_shape; `size` and *bytes as for shape_fits. */
static inline srv_status_t *shape_check(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                        const int64_t *shape, size_t n, uint32_t size,
                                        uint64_t *bytes) {
  size_t skip = m->max_batch_size > 0 ? 1 : 0;
  /* The shape is printed only for an error text: snprintf per dimension
   * was 4% of a ModelInfer's instructions (docs/perf.md, issue 21). */
  if (skip && n == 0)
    return BAD("input '%s' has no shape but model requires batch dimension for '%s'",
               spec->name, m->name);
  bool ok = n == spec->dims_count + skip;
  for (size_t i = 0; ok && i < spec->dims_count; i++) {
    if (shape[i + skip] == -1) return shape_unspecified(m, spec, shape, n);
    ok = spec->dims[i] == -1 ? shape[i + skip] >= 0 : shape[i + skip] == spec->dims[i];
  }
  for (size_t i = 0; ok && i < n; i++) ok = shape[i] >= 0;
  if (ok && shape_fits(size, shape, n, bytes)) return NULL;
  return shape_error(m, spec, shape, n, skip, ok);
}

srv_status_t *srv_check_input_shape(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                    const int64_t *shape, size_t n) {
  uint64_t bytes = 0;
  return shape_check(m, spec, shape, n, api_datatype_byte_size(spec->datatype), &bytes);
}

static uint64_t element_count(const int64_t *shape, size_t n) {
  uint64_t count = 1;
  for (size_t i = 0; i < n; i++) count *= (uint64_t)shape[i];
  return count;
}

/* A read position over a list of buffers, for BYTES data that the client
 * may have split anywhere (even inside a length prefix). */
typedef struct {
  const srv_buffer_t *b;
  uint32_t count, i;
  uint64_t off; /* within b[i] */
} cursor_t;

/* Advances by len bytes, copying them to dst unless dst is NULL; false when
 * fewer than len bytes remain. */
static bool cursor_take(cursor_t *c, unsigned char *dst, uint64_t len) {
  while (len > 0) {
    if (c->i == c->count) return false;
    uint64_t here = c->b[c->i].size - c->off;
    uint64_t n = here < len ? here : len;
    if (dst != NULL && n > 0) {
      memcpy(dst, (const char *)c->b[c->i].base + c->off, n);
      dst += n;
    }
    c->off += n;
    len -= n;
    if (c->off == c->b[c->i].size) {
      c->i++;
      c->off = 0;
    }
  }
  return true;
}

/* BYTES data is 4-byte little-endian lengths each followed by that many
 * bytes; it must hold exactly `count` elements and nothing after them. */
/* Out of line: its buffer stays off srv_check_input_data's stack for the
 * other types. */
static __attribute__((noinline)) bool bytes_elements_ok(const srv_buffer_t *b,
                                                        uint32_t nbuf, uint64_t count) {
  cursor_t c = {.b = b, .count = nbuf, .i = 0, .off = 0};
  while (c.i < c.count && c.b[c.i].size == 0) c.i++;
  for (uint64_t i = 0; i < count; i++) {
    unsigned char p[4];
    if (!cursor_take(&c, p, 4)) return false;
    uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                 (uint32_t)p[3] << 24;
    if (!cursor_take(&c, NULL, n)) return false;
  }
  while (c.i < c.count && c.b[c.i].size == c.off) {
    c.i++;
    c.off = 0;
  }
  return c.i == c.count;
}

/* srv_check_input_data with the shape's element count and, unless the
 * type is BYTES, its data's size in bytes (`want`) known. */
static inline srv_status_t *data_check(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                       TRITONSERVER_DataType type, uint64_t elements,
                                       uint64_t want, const srv_buffer_t *buffers,
                                       uint32_t count, uint64_t *byte_size) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++) total += buffers[i].size;
  bool on_gpu = false; /* the server reads no GPU memory to check it */
  for (uint32_t i = 0; i < count; i++)
    on_gpu |= buffers[i].memory_type == TRITONSERVER_MEMORY_GPU;
  if (type == TRITONSERVER_TYPE_BYTES) {
    if (!on_gpu && !bytes_elements_ok(buffers, count, elements))
      return BAD(
          "input '%s' for model '%s': BYTES data does not hold exactly %llu "
          "length-prefixed elements",
          spec->name, m->name, (unsigned long long)elements);
  } else if (total != want) {
    return BAD(
        "input byte size mismatch for input '%s' for model '%s'. Expected %llu, got "
        "%llu",
        spec->name, m->name, (unsigned long long)want, (unsigned long long)total);
  }
  *byte_size = total;
  return NULL;
}

srv_status_t *srv_check_input_data(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                   TRITONSERVER_DataType type, const int64_t *shape,
                                   size_t n, const srv_buffer_t *buffers, uint32_t count,
                                   uint64_t *byte_size) {
  uint64_t elements = element_count(shape, n);
  return data_check(m, spec, type, elements, elements * api_datatype_byte_size(type),
                    buffers, count, byte_size);
}

srv_status_t *srv_check_input_shape_data(const srv_model_t *m,
                                         const srv_tensor_spec_t *spec,
                                         const int64_t *shape, size_t n,
                                         const srv_buffer_t *buffers, uint32_t count,
                                         uint64_t *byte_size) {
  uint32_t size = api_datatype_byte_size(spec->datatype);
  uint64_t bytes = 0;
  srv_status_t *st = shape_check(m, spec, shape, n, size, &bytes);
  if (st != NULL) return st;
  /* bytes is the element count times size, times 4 for BYTES (shape_fits);
   * only BYTES reads the element count. */
  bool strings = spec->datatype == TRITONSERVER_TYPE_BYTES;
  return data_check(m, spec, spec->datatype, strings ? bytes / 4 : 0,
                    size > 0 ? bytes : 0, buffers, count, byte_size);
}

/* Appends "'name'," to the list in buf (of cap bytes) unless it would not
 * fit; once one did not, "..." ends the list. */
static void list_add(char *buf, size_t cap, const char *name, size_t len) {
  size_t used = strlen(buf);
  if (used >= 3 && strcmp(buf + used - 3, "...") == 0) return;
  char q[SRV_QUOTE_SIZE];
  srv_quote(q, name, len);
  if (used + strlen(q) + 8 > cap) {
    snprintf(buf + used, cap - used, "...");
    return;
  }
  snprintf(buf + used, cap - used, "'%s',", q);
}

/* "[...]" from a list that list_add built. */
static void list_close(char *buf, size_t cap) {
  size_t used = strlen(buf);
  if (used > 1 && buf[used - 1] == ',') buf[--used] = '\0';
  snprintf(buf + used, cap - used, "]");
}

static bool given_has(const srv_input_name_t *given, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (name_is(name, given[i].s, given[i].len)) return true;
  return false;
}

static COLD srv_status_t *count_error(const srv_model_t *m, const srv_input_name_t *given,
                                      size_t n, uint32_t required) {
  char got[768] = "[", missing[768] = "[";
  for (size_t i = 0; i < n; i++) list_add(got, sizeof got, given[i].s, given[i].len);
  for (uint32_t i = 0; i < m->input_count; i++)
    if (!m->inputs[i].optional && !given_has(given, n, m->inputs[i].name))
      list_add(missing, sizeof missing, m->inputs[i].name, strlen(m->inputs[i].name));
  list_close(got, sizeof got);
  list_close(missing, sizeof missing);
  if (required == m->input_count)
    return BAD(
        "expected %u inputs but got %zu inputs for model '%s'. Got inputs %s, but "
        "missing required inputs %s. Please provide all required inputs.",
        m->input_count, n, m->name, got, missing);
  return BAD(
      "expected number of inputs between %u and %u but got %zu inputs for model '%s'. "
      "Got inputs %s, but missing required inputs %s. Please provide all required "
      "inputs.",
      required, m->input_count, n, m->name, got, missing);
}

static uint32_t required_count(const srv_model_t *m) {
  uint32_t required = 0;
  for (uint32_t i = 0; i < m->input_count; i++) required += !m->inputs[i].optional;
  return required;
}

bool srv_check_input_count_ok(const srv_model_t *m, size_t n) {
  if (n == m->input_count) return true; /* the common case: nothing to count */
  return n < m->input_count && n >= required_count(m);
}

srv_status_t *srv_check_input_count(const srv_model_t *m, const srv_input_name_t *given,
                                    size_t n) {
  if (srv_check_input_count_ok(m, n)) return NULL;
  return count_error(m, given, n, required_count(m));
}

srv_status_t *srv_check_required_inputs(const srv_model_t *m,
                                        const TRITONBACKEND_Request *r) {
  for (uint32_t i = 0; i < m->input_count; i++) {
    if (m->inputs[i].optional) continue;
    bool given = false;
    for (uint32_t j = 0; j < r->input_count && !given; j++)
      given = r->inputs[j].name == m->inputs[i].name;
    if (given) continue;
    uint32_t n = r->input_count;
    srv_input_name_t *names = malloc((n ? n : 1) * sizeof *names);
    if (names == NULL) SRV_FATAL("out of memory");
    for (uint32_t j = 0; j < n; j++)
      names[j] = (srv_input_name_t){r->inputs[j].name, strlen(r->inputs[j].name)};
    srv_status_t *st = count_error(m, names, n, required_count(m));
    free(names);
    return st;
  }
  return NULL;
}

srv_status_t *srv_check_batch(const srv_model_t *m, TRITONBACKEND_Request *r) {
  r->batch_size = 1;
  if (m->max_batch_size == 0 || r->input_count == 0) return NULL;
  int64_t batch = r->inputs[0].shape[0];
  for (uint32_t i = 1; i < r->input_count; i++)
    if (r->inputs[i].shape[0] != batch)
      return BAD("input '%s' batch size does not match other inputs for '%s'",
                 r->inputs[i].name, m->name);
  if (batch < 1 || batch > m->max_batch_size)
    return BAD("inference request batch-size must be <= %d for '%s'",
               (int)m->max_batch_size, m->name);
  r->batch_size = (uint32_t)batch;
  return NULL;
}

srv_status_t *srv_check_output_name(const srv_model_t *m, const char *name, size_t len,
                                    const char **found) {
  for (uint32_t k = 0; k < m->output_count; k++) {
    if (name_is(m->output_names[k], name, len)) {
      *found = m->output_names[k];
      return NULL;
    }
  }
  char q[SRV_QUOTE_SIZE];
  return BAD("unexpected inference output '%s' for model '%s'", srv_quote(q, name, len),
             m->name);
}

srv_status_t *srv_check_sequence_id_string(const srv_model_t *m, const char *s,
                                           size_t len) {
  if (len > SRV_SEQUENCE_ID_MAX)
    return BAD(
        "model '%s': parameter 'sequence_id' is a string of %zu bytes, above "
        "the limit of %u",
        srv_model_name(m), len, SRV_SEQUENCE_ID_MAX);
  if (len > 0 && memchr(s, '\0', len) != NULL)
    return BAD("model '%s': parameter 'sequence_id' holds a NUL byte", srv_model_name(m));
  return NULL;
}

srv_status_t *srv_check_param_uint_error(const srv_model_t *m, const char *key) {
  return BAD("model '%s': parameter '%s' must be a non-negative integer",
             srv_model_name(m), key);
}
