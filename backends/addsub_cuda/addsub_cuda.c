/* The addsub_cuda backend: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 -
 * INPUT1, elementwise on the GPU, for INT32 and FP32 (Triton's `simple` on
 * a GPU). Model and instance initialize run on the server's loading
 * threads, execute on each instance's own thread with the instance's GPU
 * current. See README.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/addsub_cuda/addsub_device.h"
#include "backends/common/config_fetch.h"
#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/execute.h"
#include "backends/common/export.h"
#include "backends/common/output.h"
#include "backends/common/pair.h"
#include "backends/common/shape.h"
#include "backends/common/simple_backend.h" /* bk_check_api_version */

static const char *const kInputs[2] = {"INPUT0", "INPUT1"};
static const char *const kOutputs[2] = {"OUTPUT0", "OUTPUT1"};

typedef struct {
  bk_model_config_t cfg;
} model_t;

/* Device scratch, grown as requests need: inputs that arrive in host
 * memory (or in several buffers) are gathered here, and outputs that the
 * server placed in host memory are computed here first. */
typedef struct {
  void *ptr;
  size_t size;
} scratch_t;

typedef struct {
  model_t *model; /* outlives the instance: models finalize last */
  int32_t device;
  scratch_t in[2], out;
} instance_t;

static TRITONSERVER_Error *cuda_error(const char *what, const char *why) {
  return bk_error(TRITONSERVER_ERROR_INTERNAL, "addsub_cuda: %s: %s", what, why);
}

static TRITONSERVER_Error *scratch_reserve(scratch_t *s, size_t n) {
  if (s->size >= n && s->ptr != NULL) return NULL;
  const char *why = "";
  acu_free(s->ptr);
  s->ptr = NULL;
  s->size = 0;
  if (!acu_malloc(&s->ptr, n, &why)) return cuda_error("cudaMalloc", why);
  s->size = n;
  return NULL;
}

static bool supports(TRITONSERVER_DataType datatype) {
  return datatype == TRITONSERVER_TYPE_INT32 || datatype == TRITONSERVER_TYPE_FP32;
}

/* All four tensors exist with one datatype (INT32 or FP32) and one shape. */
static bool validate(const bk_model_config_t *cfg, char *err, size_t len) {
  return bk_pair_config_check(cfg, kInputs, kOutputs, supports, "INT32 or FP32", err,
                              len);
}

/* One input, its properties checked against the model's, as one block of
 * device memory: the server's buffer when it is a single one on our GPU,
 * else gathered into `scratch`. */
static TRITONSERVER_Error *input_to_device(instance_t *inst,
                                           TRITONBACKEND_Request *request, int i,
                                           const int64_t **shape, uint32_t *dims,
                                           uint64_t *byte_size, const void **data) {
  const bk_model_config_t *cfg = &inst->model->cfg;
  TRITONBACKEND_Input *input = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, kInputs[i], &input));
  TRITONSERVER_DataType datatype;
  uint32_t buffers = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(input, NULL, &datatype, shape, dims,
                                                   byte_size, &buffers));
  const bk_tensor_config_t *t = bk_model_config_input(cfg, kInputs[i]);
  if (datatype != t->datatype)
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input '%s': datatype %s, expected %s", kInputs[i],
                    bk_datatype_name(datatype), bk_datatype_name(t->datatype));
  char why[BK_ERROR_MAX - 32];
  if (!bk_model_config_check_shape(cfg, t, *shape, *dims, why, sizeof why))
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
  uint64_t elements = 0;
  if (!bk_shape_elements(*shape, *dims, &elements) || elements > UINT64_MAX / 4 ||
      elements * 4 != *byte_size)
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input '%s': %" PRIu64 " bytes do not fit its shape", kInputs[i],
                    *byte_size);
  uint64_t copied = 0;
  for (uint32_t b = 0; b < buffers; b++) {
    const void *buf = NULL;
    uint64_t size = 0;
    /* Asked for in our GPU's memory; the server may give host memory. */
    TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
    int64_t type_id = inst->device;
    BK_RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(input, b, &buf, &size, &type, &type_id));
    if (size > *byte_size - copied)
      return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                      "input '%s': buffers hold more than its byte size %" PRIu64,
                      kInputs[i], *byte_size);
    if (buffers == 1 && type == TRITONSERVER_MEMORY_GPU && type_id == inst->device) {
      *data = buf;
      return NULL;
    }
    BK_RETURN_IF_ERROR(scratch_reserve(&inst->in[i], (size_t)*byte_size));
    const char *err = "";
    if (!acu_copy((char *)inst->in[i].ptr + copied, buf, (size_t)size, &err))
      return cuda_error("copying an input to the GPU", err);
    copied += size;
  }
  if (copied != *byte_size)
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input '%s': buffers do not add up to its byte size %" PRIu64,
                    kInputs[i], *byte_size);
  *data = inst->in[i].ptr;
  return NULL;
}

/* One output: computed straight into the server's buffer when that is on
 * our GPU, else on the GPU's scratch and copied out. */
static TRITONSERVER_Error *output_compute(instance_t *inst,
                                          TRITONBACKEND_Response *response, int i,
                                          const int64_t *shape, uint32_t dims,
                                          uint64_t byte_size, const void *a,
                                          const void *b) {
  TRITONSERVER_DataType datatype = inst->model->cfg.inputs[0].datatype;
  TRITONBACKEND_Output *output = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(response, &output, kOutputs[i],
                                                  datatype, shape, dims));
  void *buf = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
  int64_t type_id = inst->device;
  BK_RETURN_IF_ERROR(
      TRITONBACKEND_OutputBuffer(output, &buf, byte_size, &type, &type_id));
  bool direct = type == TRITONSERVER_MEMORY_GPU && type_id == inst->device;
  if (!direct) BK_RETURN_IF_ERROR(scratch_reserve(&inst->out, (size_t)byte_size));
  void *dst = direct ? buf : inst->out.ptr;
  const char *why = "";
  if (!acu_addsub(datatype == TRITONSERVER_TYPE_FP32, i == 1, a, b, dst,
                  (size_t)(byte_size / 4), &why))
    return cuda_error("the add/sub kernel", why);
  if (!direct && !acu_copy(buf, dst, (size_t)byte_size, &why))
    return cuda_error("copying an output from the GPU", why);
  return NULL;
}

static TRITONSERVER_Error *respond(void *ctx, TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response,
                                   uint64_t *batch_size) {
  instance_t *inst = ctx;
  const int64_t *shape[2];
  uint32_t dims[2];
  uint64_t bytes[2];
  const void *data[2];
  for (int i = 0; i < 2; i++)
    BK_RETURN_IF_ERROR(
        input_to_device(inst, request, i, &shape[i], &dims[i], &bytes[i], &data[i]));
  char sa[96], sb[96];
  if (!bk_shape_equal(shape[0], dims[0], shape[1], dims[1]))
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input 'INPUT0' shape %s and input 'INPUT1' shape %s differ",
                    bk_shape_format(shape[0], dims[0], sa, sizeof sa),
                    bk_shape_format(shape[1], dims[1], sb, sizeof sb));
  for (int i = 0; i < 2; i++) {
    bool wanted = false;
    BK_RETURN_IF_ERROR(bk_output_requested(request, kOutputs[i], &wanted));
    if (wanted)
      BK_RETURN_IF_ERROR(output_compute(inst, response, i, shape[0], dims[0], bytes[0],
                                        data[0], data[1]));
  }
  if (inst->model->cfg.max_batch_size > 0) *batch_size = (uint64_t)shape[0][0];
  return NULL;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  (void)backend;
  return bk_check_api_version("addsub_cuda");
}

/* A model without instance_group runs on every GPU. */
BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes) {
  (void)backend;
  return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
      attributes, TRITONSERVER_INSTANCEGROUPKIND_GPU, 0, NULL, 0);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
  const char *name = "";
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  const char *why = "";
  if (acu_device_count(&why) == 0)
    return bk_error(TRITONSERVER_ERROR_UNAVAILABLE,
                    "model '%s' (backend 'addsub_cuda') needs a GPU: %s", name, why);
  model_t *state = calloc(1, sizeof *state);
  if (state == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  TRITONSERVER_Error *err = bk_model_config_fetch(model, &state->cfg);
  char msg[BK_ERROR_MAX - 64];
  if (err == NULL && !validate(&state->cfg, msg, sizeof msg))
    err = bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                   "model '%s' (backend 'addsub_cuda'): %s", name, msg);
  if (err == NULL) err = TRITONBACKEND_ModelSetState(model, state);
  if (err != NULL) {
    bk_model_config_free(&state->cfg);
    free(state);
  }
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
  void *state = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &state));
  if (state != NULL) bk_model_config_free(&((model_t *)state)->cfg);
  free(state);
  return NULL;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance) {
  const char *name = "";
  TRITONSERVER_InstanceGroupKind kind;
  int32_t device = 0;
  TRITONBACKEND_Model *model = NULL;
  void *vmodel = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceDeviceId(instance, &device));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vmodel));
  if (kind != TRITONSERVER_INSTANCEGROUPKIND_GPU)
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "instance '%s' is %s; addsub_cuda runs only KIND_GPU instances", name,
                    TRITONSERVER_InstanceGroupKindString(kind));
  const char *why = "";
  if (!acu_set_device(device, &why)) return cuda_error("cudaSetDevice", why);
  instance_t *state = calloc(1, sizeof *state);
  if (state == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  state->model = vmodel;
  state->device = device;
  BK_LOG(TRITONSERVER_LOG_INFO, "addsub_cuda instance '%s' on GPU %d", name, (int)device);
  TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceSetState(instance, state);
  if (err != NULL) free(state);
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance) {
  void *vstate = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vstate));
  instance_t *state = vstate;
  if (state == NULL) return NULL;
  const char *why = "";
  acu_set_device(state->device, &why);
  for (int i = 0; i < 2; i++) acu_free(state->in[i].ptr);
  acu_free(state->out.ptr);
  free(state);
  return NULL;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  void *vstate = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vstate));
  instance_t *state = vstate;
  if (state == NULL)
    return bk_error(TRITONSERVER_ERROR_INTERNAL, "instance has no state");
  /* The server made the device current on this thread through its own
   * runtime; this backend carries its own (static) runtime, so it says so
   * too. Cheap when the device is already current. */
  const char *why = "";
  if (!acu_set_device(state->device, &why)) return cuda_error("cudaSetDevice", why);
  bk_execute_each(instance, requests, request_count, respond, state);
  return NULL;
}
