/* ModelInferResponse encoding (see infer_response.h). */
#include "server/grpc/infer_response.h"

#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"

static void params_encode(inference_ModelInferResponse *resp,
                          const TRITONBACKEND_Response *r, upb_Arena *a) {
  for (uint32_t i = 0; i < r->param_count; i++) {
    const srv_response_param_t *p = &r->params[i];
    inference_InferParameter *v = inference_InferParameter_new(a);
    switch (p->type) {
      case TRITONSERVER_PARAMETER_STRING:
        inference_InferParameter_set_string_param(v,
                                                  upb_StringView_FromString(p->value.s));
        break;
      case TRITONSERVER_PARAMETER_INT:
        inference_InferParameter_set_int64_param(v, p->value.i);
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        inference_InferParameter_set_bool_param(v, p->value.b);
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        inference_InferParameter_set_double_param(v, p->value.d);
        break;
      default:
        continue;
    }
    inference_ModelInferResponse_parameters_set(resp, upb_StringView_FromString(p->name),
                                                v, a);
  }
}

static bool output_requested(const TRITONBACKEND_Request *req, const char *name) {
  for (uint32_t i = 0; i < req->output_count; i++)
    if (strcmp(req->outputs[i], name) == 0) return true;
  return false;
}

inference_ModelInferResponse *srv_infer_response_header(
    const srv_model_t *m, const TRITONBACKEND_Request *request, upb_Arena *a) {
  inference_ModelInferResponse *resp = inference_ModelInferResponse_new(a);
  if (resp == NULL) SRV_FATAL("out of memory");
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  inference_ModelInferResponse_set_model_name(resp, upb_StringView_FromString(d.name));
  inference_ModelInferResponse_set_model_version(
      resp, upb_StringView_FromString(d.version_string));
  inference_ModelInferResponse_set_id(resp, upb_StringView_FromString(request->id));
  return resp;
}

inference_ModelInferResponse *srv_infer_response_encode(
    const srv_model_t *m, const TRITONBACKEND_Request *request,
    const TRITONBACKEND_Response *r, upb_Arena *a) {
  inference_ModelInferResponse *resp = srv_infer_response_header(m, request, a);
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    if (!output_requested(request, o->name)) continue;
    inference_ModelInferResponse_InferOutputTensor *t =
        inference_ModelInferResponse_add_outputs(resp, a);
    if (t == NULL) SRV_FATAL("out of memory");
    inference_ModelInferResponse_InferOutputTensor_set_name(
        t, upb_StringView_FromString(o->name));
    const char *dt = api_datatype_protocol_name(o->datatype);
    inference_ModelInferResponse_InferOutputTensor_set_datatype(
        t, upb_StringView_FromString(dt ? dt : ""));
    for (uint32_t d = 0; d < o->dims_count; d++)
      inference_ModelInferResponse_InferOutputTensor_add_shape(t, o->shape[d], a);
    /* An output in the client's shared memory is there already (see
     * srv_response_shm_settle): its raw contents stay empty, as Triton
     * keeps them, so that the others keep their positions. */
    upb_StringView bytes = {.data = o->buffer ? o->buffer : "", .size = o->byte_size};
    if (r->state != NULL && srv_shm_uses_output(r->state->shm, o->name) != NULL)
      bytes = (upb_StringView){.data = "", .size = 0};
    inference_ModelInferResponse_add_raw_output_contents(resp, bytes, a);
  }
  params_encode(resp, r, a);
  return resp;
}
