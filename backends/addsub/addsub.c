/* The addsub backend: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1,
 * elementwise, for Triton's `simple` (INT32) and `simple_int8` (INT8)
 * models and any other integer or float type. Entry points run on the
 * server's loading threads (initialize/finalize) and on each instance's
 * execute thread; all state is read-only after model load. */
#include <stdio.h>
#include <string.h>

#include "backends/addsub/addsub_kernel.h"
#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/input.h"
#include "backends/common/output.h"
#include "backends/common/pair.h"
#include "backends/common/shape.h"
#include "backends/common/simple_backend.h"

static const char *const kInputs[2] = {"INPUT0", "INPUT1"};

/* Each output and whether it subtracts. */
static const struct {
  const char *name;
  bool subtract;
} kOutputs[2] = {{"OUTPUT0", false}, {"OUTPUT1", true}};

static const char *const kOutputNames[2] = {"OUTPUT0", "OUTPUT1"};

/* All four tensors must exist with one datatype and the same dims. */
static bool validate(const bk_model_config_t *cfg, char *err, size_t len) {
  return bk_pair_config_check(cfg, kInputs, kOutputNames, addsub_kernel_supports,
                              "an integer or float type", err, len);
}

/* Creates only the outputs the client asked for. */
static TRITONSERVER_Error *compute(TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response, const bk_input_t *a,
                                   const bk_input_t *b) {
  const char *wanted[2] = {NULL, NULL}; /* the request's strings */
  BK_RETURN_IF_ERROR(bk_outputs_requested(request, kOutputNames, 2, wanted));
  for (int i = 0; i < 2; i++) {
    if (wanted[i] == NULL) continue;
    void *out = NULL;
    BK_RETURN_IF_ERROR(bk_output_new(response, wanted[i], a->datatype, a->shape,
                                     a->dims_count, a->byte_size, &out));
    if (a->element_count > 0) {
      addsub_kernel_run(a->datatype, kOutputs[i].subtract, a->data, b->data, out,
                        (size_t)a->element_count);
    }
  }
  return NULL;
}

static TRITONSERVER_Error *respond(void *ctx, TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response,
                                   uint64_t *batch_size) {
  return bk_pair_respond(ctx, request, response, kInputs, compute, batch_size);
}

static const bk_simple_backend_t kBackend = {"addsub", validate, respond, false};

BK_DEFINE_SIMPLE_BACKEND(kBackend)
