/* OUTPUTn = INPUTn responses and their config check. Model load thread
 * (validate) and the instance's execute thread (respond). */
#include "backends/common/passthrough.h"

#include <stdio.h>
#include <string.h>

#include "backends/common/error.h"
#include "backends/common/input.h"
#include "backends/common/output.h"
#include "backends/common/shape.h"

#define IN_PREFIX "INPUT"
#define OUT_PREFIX "OUTPUT"
#define NAME_MAX_LEN 256

/* INPUT<x> for OUTPUT<x>; false when `output` does not follow the pattern
 * or the name does not fit. */
static bool input_name_for(const char *output, char *buf, size_t len) {
  if (strncmp(output, OUT_PREFIX, strlen(OUT_PREFIX)) != 0) return false;
  int n = snprintf(buf, len, IN_PREFIX "%s", output + strlen(OUT_PREFIX));
  return n > 0 && (size_t)n < len;
}

bool bk_passthrough_validate(const bk_model_config_t *cfg, char *err, size_t err_len) {
  if (cfg->output_count == 0 || cfg->input_count != cfg->output_count) {
    snprintf(err, err_len,
             "expected as many inputs as outputs (INPUT<x> -> OUTPUT<x>), "
             "got %zu inputs and %zu outputs",
             cfg->input_count, cfg->output_count);
    return false;
  }
  for (size_t i = 0; i < cfg->output_count; i++) {
    const bk_tensor_config_t *out = &cfg->outputs[i];
    char in_name[NAME_MAX_LEN];
    const bk_tensor_config_t *in = NULL;
    if (input_name_for(out->name, in_name, sizeof in_name)) {
      in = bk_model_config_input(cfg, in_name);
    }
    if (in == NULL) {
      snprintf(err, err_len, "output '%s' has no matching INPUT<x> input", out->name);
      return false;
    }
    if (in->datatype != out->datatype ||
        !bk_shape_equal(in->dims, in->dims_count, out->dims, out->dims_count)) {
      snprintf(err, err_len, "output '%s' must have the datatype and dims of input '%s'",
               out->name, in->name);
      return false;
    }
  }
  return true;
}

static TRITONSERVER_Error *copy_one(const bk_model_config_t *cfg,
                                    TRITONBACKEND_Request *request,
                                    TRITONBACKEND_Response *response,
                                    const char *output) {
  char in_name[NAME_MAX_LEN];
  const bk_tensor_config_t *in_cfg = NULL;
  if (input_name_for(output, in_name, sizeof in_name)) {
    in_cfg = bk_model_config_input(cfg, in_name);
  }
  if (in_cfg == NULL) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "output '%s' is not a model output",
                    output);
  }
  bk_input_t in;
  BK_RETURN_IF_ERROR(bk_input_read(request, in_name, &in));
  char why[BK_ERROR_MAX - 32];
  TRITONSERVER_Error *err = NULL;
  if (!bk_model_config_check_shape(cfg, in_cfg, in.shape, in.dims_count, why,
                                   sizeof why)) {
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
  }
  void *buf = NULL;
  if (err == NULL) {
    err = bk_output_new(response, output, in.datatype, in.shape, in.dims_count,
                        in.byte_size, &buf);
  }
  if (err == NULL && in.byte_size > 0) memcpy(buf, in.data, in.byte_size);
  bk_input_release(&in);
  return err;
}

TRITONSERVER_Error *bk_passthrough_respond(void *ctx, TRITONBACKEND_Request *request,
                                           TRITONBACKEND_Response *response,
                                           uint64_t *batch_size) {
  const bk_model_config_t *cfg = ctx;
  uint32_t count = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(request, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char *output = NULL;
    BK_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(request, i, &output));
    BK_RETURN_IF_ERROR(copy_one(cfg, request, response, output));
  }
  return bk_request_batch_size(request, cfg->max_batch_size, batch_size);
}
