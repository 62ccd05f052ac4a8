/* Shared parts of the JSON replies (see json_reply.h). */
#include "server/http/json_reply.h"

#include "server/common/log.h"
#include "server/common/memory.h"

static json_t *param_json(const srv_response_param_t *p) {
  switch (p->type) {
    case TRITONSERVER_PARAMETER_STRING:
      return json_string(p->value.s);
    case TRITONSERVER_PARAMETER_INT:
      return json_integer(p->value.i);
    case TRITONSERVER_PARAMETER_BOOL:
      return json_boolean(p->value.b);
    case TRITONSERVER_PARAMETER_DOUBLE:
      return json_real(p->value.d);
    default:
      return NULL;
  }
}

json_t *srv_json_reply_header(const srv_model_desc_t *d, const char *id,
                              const TRITONBACKEND_Response *r) {
  json_t *root = json_object();
  if (root == NULL) SRV_FATAL("out of memory");
  json_object_set_new(root, "model_name", json_string(d->name));
  json_object_set_new(root, "model_version", json_string(d->version_string));
  if (id != NULL && id[0] != '\0') json_object_set_new(root, "id", json_string(id));
  if (r == NULL || r->param_count == 0) return root;
  json_t *params = json_object();
  for (uint32_t i = 0; i < r->param_count; i++) {
    json_t *v = param_json(&r->params[i]); /* NULL (not UTF-8, NaN): left out */
    if (v != NULL) json_object_set_new(params, r->params[i].name, v);
  }
  json_object_set_new(root, "parameters", params);
  return root;
}

srv_status_t *srv_json_reply_dump(const json_t *root, upb_Arena *a, const char **text,
                                  size_t *len) {
  size_t need = json_dumpb(root, NULL, 0, JSON_COMPACT);
  if (need == 0)
    return srv_status_new(GRPC_STATUS_INTERNAL, "cannot write the reply as JSON");
  char *buf = srv_arena_alloc(a, need + 1);
  json_dumpb(root, buf, need, JSON_COMPACT);
  buf[need] = '\0';
  *text = buf;
  *len = need;
  return NULL;
}
