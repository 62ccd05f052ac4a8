/* Triton's generate extension codec (see generate_json.h). */
#include "server/http/generate_json.h"

#include <jansson.h>
#include <string.h>

#include "server/common/memory.h"
#include "server/http/json_params.h"
#include "server/http/json_reply.h"
#include "server/http/json_tensor.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* The shape that `n` elements take for `spec` (see generate_json.h); false
 * when they cannot fill its fixed dimensions. shape has room for
 * dims_count + 1 entries. */
static bool shape_make(const srv_model_desc_t *d, const srv_tensor_spec_t *spec,
                       uint64_t n, int64_t *shape, uint32_t *dims) {
  uint32_t k = 0;
  if (d->max_batch_size > 0) shape[k++] = 1;
  uint64_t fixed = 1;
  int variable = -1;
  for (uint32_t i = 0; i < spec->dims_count; i++) {
    if (spec->dims[i] >= 0) fixed *= (uint64_t)spec->dims[i];
    if (spec->dims[i] < 0 && variable < 0) variable = (int)i;
  }
  for (uint32_t i = 0; i < spec->dims_count; i++)
    shape[k + i] = spec->dims[i] >= 0 ? spec->dims[i] : 1;
  if (variable >= 0 && fixed > 0 && n % fixed == 0) {
    shape[k + (uint32_t)variable] = (int64_t)(n / fixed);
    fixed = n;
  }
  *dims = k + spec->dims_count;
  return fixed == n;
}

static srv_status_t *input_read(srv_model_t *m, const srv_model_desc_t *d,
                                const srv_tensor_spec_t *spec, const json_t *v,
                                upb_Arena *arena, struct TRITONBACKEND_Input *out) {
  json_t *data = json_is_array(v) ? json_incref((json_t *)v) : json_array();
  if (!json_is_array(v)) json_array_append(data, (json_t *)v);
  uint64_t n = json_array_size(data);
  int64_t *shape = srv_arena_alloc(arena, (spec->dims_count + 1) * sizeof *shape);
  uint32_t dims = 0;
  srv_status_t *st = NULL;
  if (!srv_json_tensor_fits(data, &(int64_t){(int64_t)n}, 1, n) ||
      !shape_make(d, spec, n, shape, &dims))
    st = BAD(SRV_JSON_SHAPE_TEXT);
  if (st == NULL) st = srv_check_input_shape(m, spec, shape, dims);
  srv_buffer_t *buf = srv_arena_zalloc(arena, sizeof *buf);
  if (st == NULL)
    st = srv_json_tensor_read(data, spec->datatype, n, spec->name, arena, buf);
  json_decref(data);
  if (st == NULL)
    st = srv_check_input_data(m, spec, spec->datatype, shape, dims, buf, 1,
                              &out->byte_size);
  if (st != NULL) return st;
  srv_json_input_set(out, spec, spec->datatype, shape, dims, buf);
  return NULL;
}

static srv_status_t *inputs_read(srv_model_t *m, const srv_model_desc_t *d,
                                 const json_t *root, upb_Arena *arena,
                                 TRITONBACKEND_Request *r) {
  size_t n = d->input_count ? d->input_count : 1;
  /* Zeroed: fields the parse does not set start empty (see infer_json.c). */
  r->inputs = srv_arena_zalloc(arena, n * sizeof *r->inputs);
  for (uint32_t i = 0; i < d->input_count; i++) {
    const json_t *v = json_object_get(root, d->inputs[i].name);
    if (v == NULL) continue;
    srv_status_t *st =
        input_read(m, d, &d->inputs[i], v, arena, &r->inputs[r->input_count]);
    if (st != NULL) return st;
    r->input_count++;
  }
  return srv_check_required_inputs(m, r);
}

srv_status_t *srv_http_generate_parse(srv_model_t *m, const srv_model_desc_t *d,
                                      const char *body, size_t len, upb_Arena *arena,
                                      TRITONBACKEND_Request **out) {
  json_error_t err;
  json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
  if (root == NULL)
    return BAD("failed to parse the request JSON buffer: %s at %d", err.text,
               err.position);
  TRITONBACKEND_Request *r = srv_arena_zalloc(arena, sizeof *r);
  r->model = m;
  r->id = "";
  srv_status_t *st =
      json_is_object(root)
          ? NULL
          : BAD("failed to parse the request JSON buffer: not a JSON object");
  if (st == NULL)
    st = srv_json_params_read(m, json_object_get(root, "parameters"), arena, r, NULL);
  if (st == NULL) st = inputs_read(m, d, root, arena, r);
  if (st == NULL) st = srv_check_batch(m, r);
  json_decref(root);
  if (st != NULL) return st;
  r->outputs = (const char **)d->output_names;
  r->output_count = d->output_count;
  *out = r;
  return NULL;
}

static bool requested(const TRITONBACKEND_Request *req, const char *name) {
  for (uint32_t i = 0; i < req->output_count; i++)
    if (strcmp(req->outputs[i], name) == 0) return true;
  return false;
}

static srv_status_t *output_put(const struct TRITONBACKEND_Output *o, json_t *root) {
  json_t *data = json_array();
  uint64_t n = srv_json_tensor_count(o->shape, o->dims_count);
  srv_status_t *st = srv_json_tensor_write(
      o->name, o->datatype, o->buffer ? o->buffer : "", o->byte_size, n, data);
  if (st != NULL) {
    json_decref(data);
    return st;
  }
  if (json_array_size(data) == 1) {
    json_object_set(root, o->name, json_array_get(data, 0));
    json_decref(data);
  } else {
    json_object_set_new(root, o->name, data);
  }
  return NULL;
}

srv_status_t *srv_http_generate_encode(const srv_model_desc_t *d,
                                       const TRITONBACKEND_Request *request,
                                       const TRITONBACKEND_Response *r, upb_Arena *a,
                                       const char **json, size_t *len) {
  json_t *root = srv_json_reply_header(d, NULL, NULL);
  srv_status_t *st = NULL;
  for (uint32_t i = 0; i < r->output_count && st == NULL; i++)
    if (requested(request, r->outputs[i].name)) st = output_put(&r->outputs[i], root);
  if (st == NULL) st = srv_json_reply_dump(root, a, json, len);
  json_decref(root);
  return st;
}

const char *srv_http_sse_event(const char *json, size_t len, upb_Arena *a,
                               size_t *out_len) {
  static const char kHead[] = "data: ";
  char *ev = srv_arena_alloc(a, sizeof kHead - 1 + len + 3);
  memcpy(ev, kHead, sizeof kHead - 1);
  memcpy(ev + sizeof kHead - 1, json, len);
  memcpy(ev + sizeof kHead - 1 + len, "\n\n", 3);
  *out_len = sizeof kHead - 1 + len + 2;
  return ev;
}
