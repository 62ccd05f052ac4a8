/* The addsub_string backend (Triton's `simple_string`): INPUT0 and INPUT1
 * are BYTES tensors of decimal int32 strings; OUTPUT0 holds the decimal
 * sums and OUTPUT1 the differences, wrapping in int32 like the TensorFlow
 * model it replaces. Entry points: server loading threads and each
 * instance's execute thread; state is read-only after model load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/bytes.h"
#include "backends/common/datatype.h"
#include "backends/common/decimal.h"
#include "backends/common/error.h"
#include "backends/common/input.h"
#include "backends/common/output.h"
#include "backends/common/pair.h"
#include "backends/common/shape.h"
#include "backends/common/simple_backend.h"

static const char *const kInputs[2] = {"INPUT0", "INPUT1"};
static const char *const kOutputs[2] = {"OUTPUT0", "OUTPUT1"}; /* sum, difference */

/* Elements shown in error messages are cut to this many bytes. */
#define SHOWN_MAX 32

static bool validate(const bk_model_config_t *cfg, char *err, size_t len) {
  if (cfg->input_count != 2 || cfg->output_count != 2) {
    snprintf(err, len, "expected inputs INPUT0, INPUT1 and outputs OUTPUT0, OUTPUT1");
    return false;
  }
  const bk_tensor_config_t *first = bk_model_config_input(cfg, kInputs[0]);
  for (int i = 0; i < 4; i++) {
    const char *name = i < 2 ? kInputs[i] : kOutputs[i - 2];
    const bk_tensor_config_t *t =
        i < 2 ? bk_model_config_input(cfg, name) : bk_model_config_output(cfg, name);
    if (t == NULL || t->datatype != TRITONSERVER_TYPE_BYTES) {
      snprintf(err, len, "%s '%s' must exist with data_type TYPE_STRING",
               i < 2 ? "input" : "output", name);
      return false;
    }
    if (!bk_shape_equal(t->dims, t->dims_count, first->dims, first->dims_count)) {
      snprintf(err, len, "tensor '%s' must have the dims of INPUT0", name);
      return false;
    }
  }
  return true;
}

/* Copies up to SHOWN_MAX bytes of an element for a message, replacing what
 * would not print. */
static const char *shown(const char *s, uint32_t len, char *buf) {
  uint32_t n = len < SHOWN_MAX ? len : SHOWN_MAX;
  for (uint32_t i = 0; i < n; i++) buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  strcpy(buf + n, len > SHOWN_MAX ? "..." : "");
  return buf;
}

/* Parses every element of a BYTES input into vals (element_count entries).
 * bk_input_read already checked that the elements match the shape. */
static TRITONSERVER_Error *parse_all(const bk_input_t *in, int32_t *vals) {
  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, in->data, in->byte_size);
  for (uint64_t i = 0; i < in->element_count; i++) {
    const char *elem = NULL;
    uint32_t len = 0;
    if (bk_bytes_next(&r, &elem, &len) != BK_BYTES_ELEMENT) {
      return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s': malformed BYTES data",
                      in->name);
    }
    if (!bk_decimal_parse_int32(elem, len, &vals[i])) {
      char buf[SHOWN_MAX + 4];
      return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                      "input '%s': element %llu ('%s') is not a decimal int32", in->name,
                      (unsigned long long)i, shown(elem, len, buf));
    }
  }
  return NULL;
}

/* Writes one output: sizes every decimal first, then fills the buffer. */
static TRITONSERVER_Error *write_output(TRITONBACKEND_Response *response,
                                        const char *name, const bk_input_t *shape_of,
                                        const int32_t *vals) {
  uint64_t n = shape_of->element_count, size = 0;
  char digits[BK_DECIMAL_INT32_MAX_LEN];
  for (uint64_t i = 0; i < n; i++) {
    size += BK_BYTES_HEADER + bk_decimal_format_int32(vals[i], digits);
  }
  void *buf = NULL;
  BK_RETURN_IF_ERROR(bk_output_new(response, name, TRITONSERVER_TYPE_BYTES,
                                   shape_of->shape, shape_of->dims_count, size, &buf));
  uint8_t *p = buf;
  for (uint64_t i = 0; i < n; i++) {
    size_t len = bk_decimal_format_int32(vals[i], digits);
    p = bk_bytes_put(p, digits, (uint32_t)len);
  }
  return NULL;
}

/* Parses both inputs into one allocation: a, b, and a scratch row for the
 * results. Wrapping is done in uint32, whose bits are the int32 result. */
static TRITONSERVER_Error *compute(TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response, const bk_input_t *a,
                                   const bk_input_t *b) {
  size_t n = (size_t)a->element_count;
  int32_t *vals = malloc(3 * (n ? n : 1) * sizeof *vals);
  if (vals == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  int32_t *va = vals, *vb = vals + n, *vr = vals + 2 * n;
  TRITONSERVER_Error *err = parse_all(a, va);
  if (err == NULL) err = parse_all(b, vb);
  for (int o = 0; o < 2 && err == NULL; o++) {
    bool wanted = false;
    err = bk_output_requested(request, kOutputs[o], &wanted);
    if (err != NULL || !wanted) continue;
    for (size_t i = 0; i < n; i++) {
      uint32_t x = (uint32_t)va[i], y = (uint32_t)vb[i];
      vr[i] = (int32_t)(o == 0 ? x + y : x - y);
    }
    err = write_output(response, kOutputs[o], a, vr);
  }
  free(vals);
  return err;
}

static TRITONSERVER_Error *respond(void *ctx, TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response,
                                   uint64_t *batch_size) {
  return bk_pair_respond(ctx, request, response, kInputs, compute, batch_size);
}

static const bk_simple_backend_t kBackend = {"addsub_string", validate, respond, false};

BK_DEFINE_SIMPLE_BACKEND(kBackend)
