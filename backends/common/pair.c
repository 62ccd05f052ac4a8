/* Two-input requests (see pair.h). */
#include "backends/common/pair.h"

#include "backends/common/error.h"

TRITONSERVER_Error *bk_pair_respond(const bk_model_config_t *cfg,
                                    TRITONBACKEND_Request *request,
                                    TRITONBACKEND_Response *response,
                                    const char *const names[2], bk_pair_check_fn *check,
                                    bk_pair_compute_fn *compute, uint64_t *batch_size) {
  bk_input_t a, b;
  BK_RETURN_IF_ERROR(bk_input_read(request, names[0], &a));
  TRITONSERVER_Error *err = bk_input_read(request, names[1], &b);
  if (err != NULL) {
    bk_input_release(&a);
    return err;
  }
  err = check(cfg, &a, &b);
  if (err == NULL) err = compute(request, response, &a, &b);
  if (err == NULL && cfg->max_batch_size > 0) *batch_size = (uint64_t)a.shape[0];
  bk_input_release(&a);
  bk_input_release(&b);
  return err;
}
