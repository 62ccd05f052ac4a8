/* pyshape: reading a request and sending a response, with the calls and in
 * the order of python_be.cc (SaveRequestsToSharedMemory, GetInputTensor)
 * and infer_response.cc (InferResponse::Send). The instance's thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/backends/pyshape/pyshape.h"

static TRITONSERVER_Error *input_read(TRITONBACKEND_Request *r, uint32_t i,
                                      ps_request_t *out) {
  const char *name;
  TRITONBACKEND_Input *in;
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestInputName(r, i, &name));
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestInput(r, name, &in));
  const int64_t *shape;
  uint32_t dims, buffers;
  uint64_t size;
  TRITONSERVER_DataType type;
  PS_RETURN_IF_ERROR(TRITONBACKEND_InputPropertiesForHostPolicy(
      in, NULL, &name, &type, &shape, &dims, &size, &buffers));
  if (i != 0 || dims > 8) return NULL; /* the model reads its first input only */
  out->input_name = name;
  out->input_type = type;
  out->input_dims = dims;
  memcpy(out->input_shape, shape, dims * sizeof *shape);
  out->input = malloc(size > 0 ? size : 1);
  out->input_size = size;
  uint64_t at = 0;
  for (uint32_t b = 0; b < buffers; b++) {
    const void *base;
    uint64_t n;
    TRITONSERVER_MemoryType mt;
    int64_t mt_id;
    PS_RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(in, b, &base, &n, &mt, &mt_id));
    if (at + n > size)
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                   "pyshape: input buffers exceed the input's size");
    memcpy((char *)out->input + at, base, n);
    at += n;
  }
  return NULL;
}

/* One parameter as text: "key=T:value". */
static void param_text(char *buf, size_t len, const char *key,
                       TRITONSERVER_ParameterType type, const void *v) {
  switch (type) {
    case TRITONSERVER_PARAMETER_STRING:
      snprintf(buf, len, "%s=s:%s", key, (const char *)v);
      break;
    case TRITONSERVER_PARAMETER_INT:
      snprintf(buf, len, "%s=i:%" PRId64, key, *(const int64_t *)v);
      break;
    case TRITONSERVER_PARAMETER_BOOL:
      snprintf(buf, len, "%s=b:%d", key, *(const bool *)v ? 1 : 0);
      break;
    case TRITONSERVER_PARAMETER_DOUBLE:
      snprintf(buf, len, "%s=d:%g", key, *(const double *)v);
      break;
    default:
      snprintf(buf, len, "%s=?:%d", key, (int)type);
  }
}

static TRITONSERVER_Error *params_read(TRITONBACKEND_Request *r, ps_request_t *out) {
  uint32_t count;
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestParameterCount(r, &count));
  size_t used = 0;
  out->params[0] = '\0';
  for (uint32_t i = 0; i < count; i++) {
    const char *key;
    TRITONSERVER_ParameterType type;
    const void *v;
    PS_RETURN_IF_ERROR(TRITONBACKEND_RequestParameter(r, i, &key, &type, &v));
    if (type != TRITONSERVER_PARAMETER_INT && type != TRITONSERVER_PARAMETER_BOOL &&
        type != TRITONSERVER_PARAMETER_STRING && type != TRITONSERVER_PARAMETER_DOUBLE)
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                   "pyshape: unsupported parameter type");
    char one[PS_TEXT_MAX];
    param_text(one, sizeof one, key, type, v);
    int n = snprintf(out->params + used, sizeof out->params - used, "%s%s",
                     i ? "," : "", one);
    if (n < 0 || (size_t)n >= sizeof out->params - used) break;
    used += (size_t)n;
  }
  /* Past the last one: Triton's out-of-range answer, which a backend that
   * walks by index never sees; this one checks it is an error. */
  const char *key;
  TRITONSERVER_ParameterType type;
  const void *v;
  TRITONSERVER_Error *err = TRITONBACKEND_RequestParameter(r, count, &key, &type, &v);
  if (err == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                 "pyshape: a parameter past the last was given");
  TRITONSERVER_ErrorDelete(err);
  return NULL;
}

TRITONSERVER_Error *ps_request_read(TRITONBACKEND_Request *r, ps_request_t *out) {
  memset(out, 0, sizeof *out);
  out->request = r;
  uint32_t inputs, outputs;
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestInputCount(r, &inputs));
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(r, &outputs));
  for (uint32_t i = 0; i < inputs; i++) PS_RETURN_IF_ERROR(input_read(r, i, out));
  for (uint32_t i = 0; i < outputs; i++) {
    const char *name;
    PS_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(r, i, &name));
  }
  PS_RETURN_IF_ERROR(params_read(r, out));
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestId(r, &out->id));
  TRITONSERVER_Error *err = TRITONBACKEND_RequestCorrelationId(r, &out->correlation_id);
  if (err != NULL) { /* a string id, as python_be.cc then asks */
    TRITONSERVER_ErrorDelete(err);
    PS_RETURN_IF_ERROR(TRITONBACKEND_RequestCorrelationIdString(r, &out->correlation_id_string));
  }
  PS_RETURN_IF_ERROR(TRITONBACKEND_RequestFlags(r, &out->flags));
  err = TRITONBACKEND_RequestTrace(r, &out->trace); /* an error is no trace, as there */
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
    out->trace = NULL;
  }
  const char *context = NULL; /* handed to the stub, which reads it */
  if (out->trace != NULL) {
    err = TRITONSERVER_InferenceTraceContext(out->trace, &context);
    if (err != NULL) TRITONSERVER_ErrorDelete(err); /* logged there, not fatal */
  }
  PS_RETURN_IF_ERROR(TRITONBACKEND_InferenceRequestTimeoutMicroseconds(r, &out->timeout_us));
  return TRITONBACKEND_ResponseFactoryNew(&out->factory, r);
}

void ps_request_free(ps_request_t *req) {
  free(req->input);
  if (req->factory != NULL) {
    TRITONSERVER_Error *err = TRITONBACKEND_ResponseFactoryDelete(req->factory);
    if (err != NULL) TRITONSERVER_ErrorDelete(err);
  }
  memset(req, 0, sizeof *req);
}

void ps_params_text(const ps_request_t *req, char *buf, size_t len) {
  snprintf(buf, len, "%s;timeout=%" PRIu64, req->params, req->timeout_us);
}

/* One output: ResponseOutput, OutputBuffer, OutputBufferAttributes, copy. */
static TRITONSERVER_Error *output_put(TRITONBACKEND_Response *response, const char *name,
                                      TRITONSERVER_DataType type, const int64_t *shape,
                                      uint32_t dims, const void *data, uint64_t size) {
  TRITONBACKEND_Output *out;
  PS_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(response, &out, name, type, shape, dims));
  void *buffer;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t mt_id = 0;
  PS_RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(out, &buffer, size, &mt, &mt_id));
  TRITONSERVER_BufferAttributes *attrs;
  PS_RETURN_IF_ERROR(TRITONBACKEND_OutputBufferAttributes(out, &attrs));
  if (mt == TRITONSERVER_MEMORY_GPU)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED,
                                 "pyshape: output buffers in GPU memory");
  if (size > 0) memcpy(buffer, data, size);
  return NULL;
}

static TRITONSERVER_Error *outputs_put(TRITONBACKEND_Response *response,
                                       const int32_t *data, const int64_t *shape,
                                       uint32_t dims, const char *text) {
  if (data != NULL) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < dims; i++) n *= (uint64_t)shape[i];
    PS_RETURN_IF_ERROR(output_put(response, "OUTPUT0", TRITONSERVER_TYPE_INT32, shape,
                                  dims, data, n * sizeof *data));
  }
  uint32_t len = (uint32_t)strlen(text);
  char bytes[PS_TEXT_MAX + 8];
  memcpy(bytes, &len, 4); /* BYTES: little-endian length, then the bytes */
  memcpy(bytes + 4, text, len);
  const int64_t one = 1;
  return output_put(response, "PARAMS", TRITONSERVER_TYPE_BYTES, &one, 1, bytes, 4 + len);
}

/* The response's parameters, as InferResponse sets those a model gives:
 * one of each type the Python backend knows. */
static TRITONSERVER_Error *response_params_put(TRITONBACKEND_Response *response) {
  PS_RETURN_IF_ERROR(TRITONBACKEND_ResponseSetStringParameter(response, "from", "pyshape"));
  PS_RETURN_IF_ERROR(TRITONBACKEND_ResponseSetIntParameter(response, "n", 1));
  return TRITONBACKEND_ResponseSetBoolParameter(response, "ok", true);
}

TRITONSERVER_Error *ps_response_send(TRITONBACKEND_Response *response, uint32_t flags,
                                     TRITONSERVER_Error *error, const int32_t *data,
                                     const int64_t *shape, uint32_t dims,
                                     const char *text) {
  if (error == NULL) error = response_params_put(response);
  if (error == NULL) error = outputs_put(response, data, shape, dims, text);
  TRITONSERVER_Error *err = TRITONBACKEND_ResponseSend(response, flags, error);
  if (error != NULL) TRITONSERVER_ErrorDelete(error);
  return err;
}
