/* TRITONBACKEND_Response -> KServe v2 REST reply, error bodies and HTTP
 * statuses (see infer_json.h). Runs on the actor that owns the request.
 * The JSON tree is jansson's (heap), dumped into the arena and freed. */
#include "server/http/infer_json.h"
#include "server/views/http_views.h"

#include <jansson.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/http/classify.h"
#include "server/http/json_reply.h"
#include "server/http/json_tensor.h"

/* What the encoder collects while it walks the outputs. */
typedef struct {
  srv_buffer_t *parts;
  uint32_t part_count;
  uint64_t parts_size;
} parts_t;

static const srv_http_output_opt_t *opt_of(const TRITONBACKEND_Request *req,
                                           const srv_http_infer_opts_t *opts,
                                           const char *name) {
  for (uint32_t i = 0; i < req->output_count && i < opts->output_count; i++)
    if (strcmp(req->outputs[i], name) == 0) return &opts->outputs[i];
  return NULL;
}

static json_t *shape_json(const int64_t *shape, uint32_t n) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < n; i++) json_array_append_new(a, json_integer(shape[i]));
  return a;
}

/* An output's name, datatype and shape as sent. */
static void tensor_head(json_t *t, const char *name, TRITONSERVER_DataType type,
                        const int64_t *shape, uint32_t dims) {
  const char *dt = api_datatype_protocol_name(type);
  json_object_set_new(t, "name", json_string(name));
  json_object_set_new(t, "datatype", json_string(dt ? dt : ""));
  json_object_set_new(t, "shape", shape_json(shape, dims));
}

/* The tensor (name, datatype, shape) as sent, its data as JSON or a part. */
static srv_status_t *tensor_put(json_t *t, const char *name, TRITONSERVER_DataType type,
                                const int64_t *shape, uint32_t dims, const void *base,
                                uint64_t size, bool binary, parts_t *parts) {
  tensor_head(t, name, type, shape, dims);
  if (binary) {
    json_t *p = json_object();
    json_object_set_new(p, "binary_data_size", json_integer((json_int_t)size));
    json_object_set_new(t, "parameters", p);
    parts->parts[parts->part_count++] = (srv_buffer_t){.base = base, .size = size};
    parts->parts_size += size;
    return NULL;
  }
  json_t *data = json_array();
  json_object_set_new(t, "data", data);
  return srv_json_tensor_write(name, type, base, size, srv_json_tensor_count(shape, dims),
                               data);
}

static srv_status_t *output_put(const srv_model_desc_t *d,
                                const struct TRITONBACKEND_Output *o,
                                const srv_http_output_opt_t *opt, upb_Arena *a, json_t *t,
                                parts_t *parts) {
  const void *base = o->buffer ? o->buffer : "";
  if (opt->shm) { /* in the client's region already (srv_response_shm_settle) */
    tensor_head(t, o->name, o->datatype, o->shape, o->dims_count);
    return NULL;
  }
  if (opt->class_count == 0)
    return tensor_put(t, o->name, o->datatype, o->shape, o->dims_count, base,
                      o->byte_size, opt->binary, parts);
  srv_classes_t c;
  /* The config's output of that name: its labels, if any (Triton's
   * "score:index:label"). */
  const srv_tensor_spec_t *spec = NULL;
  for (uint32_t i = 0; i < d->output_count && spec == NULL; i++)
    if (strcmp(d->outputs[i].name, o->name) == 0) spec = &d->outputs[i];
  srv_status_t *st =
      srv_classify(o, d->max_batch_size > 0, opt->class_count, spec, a, &c);
  if (st != NULL) return st;
  return tensor_put(t, o->name, TRITONSERVER_TYPE_BYTES, c.shape, c.dims_count,
                    c.bytes.base, c.bytes.size, opt->binary, parts);
}

static srv_status_t *outputs_put(const srv_model_desc_t *d,
                                 const TRITONBACKEND_Request *req,
                                 const srv_http_infer_opts_t *opts,
                                 const TRITONBACKEND_Response *r, upb_Arena *a,
                                 json_t *root, parts_t *parts) {
  json_t *outputs = json_array();
  json_object_set_new(root, "outputs", outputs);
  parts->parts =
      srv_arena_alloc(a, (r->output_count ? r->output_count : 1) * sizeof *parts->parts);
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    const srv_http_output_opt_t *opt = opt_of(req, opts, o->name);
    if (opt == NULL) continue; /* not requested */
    json_t *t = json_object();
    json_array_append_new(outputs, t);
    srv_status_t *st = output_put(d, o, opt, a, t, parts);
    if (st != NULL) return st;
  }
  return NULL;
}

srv_status_t *srv_http_infer_encode(const srv_model_desc_t *d,
                                    const TRITONBACKEND_Request *request,
                                    const srv_http_infer_opts_t *opts,
                                    const TRITONBACKEND_Response *r, upb_Arena *a,
                                    srv_http_infer_reply_t *out) {
  json_t *root = srv_json_reply_header(d, request->id, r);
  parts_t parts = {0};
  srv_status_t *st = outputs_put(d, request, opts, r, a, root, &parts);
  if (st == NULL) st = srv_json_reply_dump(root, a, &out->json, &out->json_len);
  json_decref(root);
  if (st != NULL) return st;
  out->parts = parts.parts;
  out->part_count = parts.part_count;
  out->parts_size = parts.parts_size;
  return NULL;
}

int srv_http_status_of(TRITONSERVER_Error_Code code) {
  switch (code) {
    case TRITONSERVER_ERROR_INTERNAL:
      return 500;
    case TRITONSERVER_ERROR_NOT_FOUND:
      return 404;
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return 503;
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return 501;
    default:
      return 400; /* UNKNOWN, INVALID_ARG, ALREADY_EXISTS, CANCELLED */
  }
}

const char *srv_http_error_body(const char *message, upb_Arena *a, size_t *len) {
  char *text = srv_http_message_body(message, len);
  char *copy = upb_Arena_Malloc(a, *len + 1);
  if (copy == NULL) SRV_FATAL("out of memory");
  memcpy(copy, text, *len + 1);
  free(text);
  return copy;
}
