/* Shared parts of the JSON replies (see json_reply.h). */
#include "server/http/json_reply.h"

#include <string.h>

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

/* json_dump_callback's sink: the text grows in the arena, doubling (the
 * arena frees it with the request; at most twice the final size). */
typedef struct {
  upb_Arena *arena;
  char *buf;
  size_t len, cap;
} dump_sink_t;

static int dump_append(const char *chunk, size_t size, void *data) {
  dump_sink_t *s = data;
  if (s->len + size + 1 > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 512;
    while (cap < s->len + size + 1) cap *= 2;
    char *grown = srv_arena_alloc(s->arena, cap);
    if (s->len != 0) memcpy(grown, s->buf, s->len);
    s->buf = grown;
    s->cap = cap;
  }
  memcpy(s->buf + s->len, chunk, size);
  s->len += size;
  return 0;
}

/* One pass: json_dumpb would walk the tree twice (once for the size), and
 * the walk is most of what an answer's header costs (issue 18's bench). */
srv_status_t *srv_json_reply_dump(const json_t *root, upb_Arena *a, const char **text,
                                  size_t *len) {
  dump_sink_t s = {.arena = a};
  if (json_dump_callback(root, dump_append, &s, JSON_COMPACT) != 0 || s.len == 0)
    return srv_status_new(GRPC_STATUS_INTERNAL, "cannot write the reply as JSON");
  s.buf[s.len] = '\0';
  *text = s.buf;
  *len = s.len;
  return NULL;
}
