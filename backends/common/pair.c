/* Two-input requests (see pair.h). */
#include "backends/common/pair.h"

#include <stdio.h>

#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/shape.h"

/* The error texts, out of line: the passing check (every request's) keeps
 * no text buffer on its stack. */
#define COLD __attribute__((cold, noinline))

static COLD TRITONSERVER_Error *shapes_differ(const char *const names[2],
                                              const bk_input_t *a, const bk_input_t *b) {
  char sa[96], sb[96];
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                  "input '%s' shape %s and input '%s' shape %s differ", names[0],
                  bk_shape_format(a->shape, a->dims_count, sa, sizeof sa), names[1],
                  bk_shape_format(b->shape, b->dims_count, sb, sizeof sb));
}

static COLD TRITONSERVER_Error *shape_refused(const bk_model_config_t *cfg,
                                              const bk_tensor_config_t *t,
                                              const bk_input_t *a) {
  char why[BK_ERROR_MAX - 32];
  bk_model_config_check_shape(cfg, t, a->shape, a->dims_count, why, sizeof why);
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
}

/* Both inputs must have the model's input datatype and one shape that the
 * config allows. */
static TRITONSERVER_Error *pair_check(const bk_model_config_t *cfg,
                                      const char *const names[2], const bk_input_t *a,
                                      const bk_input_t *b) {
  TRITONSERVER_DataType want = cfg->inputs[0].datatype;
  const bk_input_t *in[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    if (in[i]->datatype != want) {
      return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                      "input '%s': datatype %s, expected %s", names[i],
                      bk_datatype_name(in[i]->datatype), bk_datatype_name(want));
    }
  }
  if (!bk_shape_equal(a->shape, a->dims_count, b->shape, b->dims_count))
    return shapes_differ(names, a, b);
  const bk_tensor_config_t *t = bk_model_config_input(cfg, names[0]);
  if (!bk_model_config_check_shape(cfg, t, a->shape, a->dims_count, NULL, 0))
    return shape_refused(cfg, t, a);
  return NULL;
}

TRITONSERVER_Error *bk_pair_respond(const bk_model_config_t *cfg,
                                    TRITONBACKEND_Request *request,
                                    TRITONBACKEND_Response *response,
                                    const char *const names[2],
                                    bk_pair_compute_fn *compute, uint64_t *batch_size) {
  bk_input_t a, b;
  BK_RETURN_IF_ERROR(bk_input_read(request, names[0], &a));
  TRITONSERVER_Error *err = bk_input_read(request, names[1], &b);
  if (err != NULL) {
    bk_input_release(&a);
    return err;
  }
  err = pair_check(cfg, names, &a, &b);
  if (err == NULL) err = compute(request, response, &a, &b);
  if (err == NULL && cfg->max_batch_size > 0) *batch_size = (uint64_t)a.shape[0];
  bk_input_release(&a);
  bk_input_release(&b);
  return err;
}

bool bk_pair_config_check(const bk_model_config_t *cfg, const char *const in[2],
                          const char *const out[2],
                          bool (*supports)(TRITONSERVER_DataType), const char *types,
                          char *err, size_t len) {
  if (cfg->input_count != 2 || cfg->output_count != 2) {
    snprintf(err, len, "expected inputs %s, %s and outputs %s, %s", in[0], in[1], out[0],
             out[1]);
    return false;
  }
  const bk_tensor_config_t *first = bk_model_config_input(cfg, in[0]);
  for (int i = 0; i < 4; i++) {
    const char *name = i < 2 ? in[i] : out[i - 2];
    const bk_tensor_config_t *t =
        i < 2 ? bk_model_config_input(cfg, name) : bk_model_config_output(cfg, name);
    if (t == NULL) {
      snprintf(err, len, "missing %s '%s'", i < 2 ? "input" : "output", name);
      return false;
    }
    if (!supports(t->datatype)) {
      snprintf(err, len, "tensor '%s': datatype %s is not %s", name,
               bk_datatype_name(t->datatype), types);
      return false;
    }
    if (t->datatype != first->datatype ||
        !bk_shape_equal(t->dims, t->dims_count, first->dims, first->dims_count)) {
      snprintf(err, len, "tensor '%s' must have the datatype and dims of %s", name,
               in[0]);
      return false;
    }
  }
  return true;
}
