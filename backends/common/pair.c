/* Two-input requests (see pair.h). */
#include "backends/common/pair.h"

#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/shape.h"

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
  char sa[96], sb[96];
  if (!bk_shape_equal(a->shape, a->dims_count, b->shape, b->dims_count)) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input '%s' shape %s and input '%s' shape %s differ", names[0],
                    bk_shape_format(a->shape, a->dims_count, sa, sizeof sa), names[1],
                    bk_shape_format(b->shape, b->dims_count, sb, sizeof sb));
  }
  char why[BK_ERROR_MAX - 32];
  const bk_tensor_config_t *t = bk_model_config_input(cfg, names[0]);
  if (!bk_model_config_check_shape(cfg, t, a->shape, a->dims_count, why, sizeof why)) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
  }
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
