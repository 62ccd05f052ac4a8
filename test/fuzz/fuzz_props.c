/* Properties shared by the fuzz targets (see fuzz_props.h). */
#include "test/fuzz/fuzz_props.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/model_config.h"
#include "server/core/core.h"
#include "server/model/model_bare.h"
#include "test/fuzz/fuzz.h"
#include "upb/json_decode.h"
#include "upb/reflection.h"

static volatile unsigned char sink;

void fuzz_touch(const void *p, size_t len) {
  unsigned char x = 0;
  for (size_t i = 0; i < len; i++) x ^= ((const unsigned char *)p)[i];
  sink = x;
}

void fuzz_status_check(srv_status_t *st, const char *name) {
  FUZZ_CHECK(st != NULL);
  FUZZ_CHECK(srv_status_code(st) != GRPC_STATUS_OK);
  const char *msg = srv_status_message(st);
  size_t len = strlen(msg);
  FUZZ_CHECK(len > 0 && len <= SRV_STATUS_MESSAGE_MAX);
  if (name != NULL && strstr(msg, name) == NULL)
    fprintf(stderr, "error '%s' does not name '%s'\n", msg, name);
  FUZZ_CHECK(name == NULL || strstr(msg, name) != NULL);
  srv_status_free(st);
}

static void tensors_check(const srv_tensor_spec_t *t, uint32_t n, bool batching) {
  for (uint32_t i = 0; i < n; i++) {
    FUZZ_CHECK(t[i].name != NULL && t[i].name[0] != '\0');
    FUZZ_CHECK(t[i].datatype != TRITONSERVER_TYPE_INVALID);
    FUZZ_CHECK(t[i].dims_count > 0 || batching);
    for (uint32_t d = 0; d < t[i].dims_count; d++)
      FUZZ_CHECK(t[i].dims[d] == -1 || t[i].dims[d] > 0);
    for (uint32_t j = 0; j < i; j++) FUZZ_CHECK(strcmp(t[i].name, t[j].name) != 0);
  }
}

static void groups_check(const inference_ModelConfig *c, bool ensemble) {
  size_t n;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(c, &n);
  FUZZ_CHECK(ensemble ? n == 0 : n > 0); /* an ensemble has none */
  for (size_t i = 0; i < n; i++) {
    FUZZ_CHECK(inference_ModelInstanceGroup_name(g[i]).size > 0);
    FUZZ_CHECK(inference_ModelInstanceGroup_count(g[i]) > 0);
    int32_t kind = inference_ModelInstanceGroup_kind(g[i]);
    FUZZ_CHECK(kind == inference_ModelInstanceGroup_KIND_CPU ||
               kind == inference_ModelInstanceGroup_KIND_MODEL);
  }
}

/* Backends parse the JSON (TRITONBACKEND_ModelConfig): it must be one JSON
 * text, without a NUL inside, of a ModelConfig named as the model. */
static void json_check(const char *name, const char *json, size_t len) {
  FUZZ_CHECK(json != NULL && strlen(json) == len);
  const upb_MessageDef *def = cfg_model_config_def();
  upb_Arena *a = upb_Arena_New();
  upb_Message *msg = upb_Message_New(def, a);
  upb_Status status;
  upb_Status_Clear(&status);
  bool ok = upb_JsonDecode(json, len, msg, def,
                           upb_FileDef_Pool(upb_MessageDef_File(def)), 0, a, &status);
  if (!ok)
    fprintf(stderr, "config JSON does not parse: %s\n%s\n",
            upb_Status_ErrorMessage(&status), json);
  FUZZ_CHECK(ok);
  upb_StringView got = inference_ModelConfig_name((const inference_ModelConfig *)msg);
  FUZZ_CHECK(got.size == strlen(name) && memcmp(got.data, name, got.size) == 0);
  upb_Arena_Free(a);
}

bool fuzz_model_config_check(const char *name, const inference_ModelConfig *config) {
  srv_model_t *m;
  srv_status_t *st = srv_model_bare_new(name, config, &m);
  if (st != NULL) {
    fuzz_status_check(st, name);
    return false;
  }
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  FUZZ_CHECK(d.max_batch_size >= 0);
  tensors_check(d.inputs, d.input_count, d.max_batch_size > 0);
  tensors_check(d.outputs, d.output_count, d.max_batch_size > 0);
  for (uint32_t i = 0; i < d.output_count; i++)
    FUZZ_CHECK(d.output_names[i] == d.outputs[i].name);
  groups_check(d.config, srv_model_bare_is_ensemble(m));
  size_t len;
  const char *json = srv_model_bare_config_json(m, &len);
  json_check(name, json, len);
  srv_model_bare_free(m);
  return true;
}

void fuzz_config_override_check(const char *name, const char *json, size_t len) {
  upb_Arena *a = upb_Arena_New();
  FUZZ_CHECK(a != NULL);
  inference_ModelConfig *c;
  srv_status_t *st = srv_load_override_config(name, json, len, a, &c);
  if (st != NULL) {
    FUZZ_CHECK(c == NULL);
    fuzz_status_check(st, name);
  } else {
    fuzz_model_config_check(name, c);
  }
  upb_Arena_Free(a);
}

/* A normalized relative path: components not empty, not "." nor "..",
 * within the depth and name limits. */
static void path_check(const char *path) {
  FUZZ_CHECK(path[0] != '\0' && path[0] != '/');
  size_t depth = 0;
  for (const char *c = path; *c != '\0';) {
    size_t len = strcspn(c, "/");
    FUZZ_CHECK(len > 0 && len <= SRV_LOAD_OVERRIDE_NAME_MAX);
    FUZZ_CHECK(!(len == 1 && c[0] == '.') && !(len == 2 && c[0] == '.' && c[1] == '.'));
    depth++;
    c += len;
    if (*c == '/') FUZZ_CHECK(*++c != '\0');
  }
  FUZZ_CHECK(depth <= SRV_LOAD_OVERRIDE_DEPTH_MAX);
}

void fuzz_load_override_check(const srv_load_override_t *o) {
  FUZZ_CHECK(o->file_count <= SRV_LOAD_OVERRIDE_FILES_MAX);
  FUZZ_CHECK(o->file_count == 0 || o->config_json != NULL);
  FUZZ_CHECK((o->files == NULL) == (o->file_count == 0));
  fuzz_touch(o->config_json, o->config_json_len);
  uint64_t bytes = 0;
  for (size_t i = 0; i < o->file_count; i++) {
    path_check(o->files[i].path);
    if (i > 0) FUZZ_CHECK(strcmp(o->files[i - 1].path, o->files[i].path) < 0);
    fuzz_touch(o->files[i].data, o->files[i].size);
    bytes += o->files[i].size;
  }
  FUZZ_CHECK(bytes <= SRV_LOAD_OVERRIDE_BYTES_MAX);
}

void fuzz_request_params_check(const TRITONBACKEND_Request *r,
                               const char *const *reserved, size_t reserved_count,
                               const char *triton_ok) {
  FUZZ_CHECK(r->param_count <= SRV_REQUEST_PARAMS_MAX);
  FUZZ_CHECK(r->param_count <= r->param_room);
  FUZZ_CHECK(r->param_count == 0 || r->params != NULL);
  for (uint32_t i = 0; i < r->param_count; i++) {
    const struct srv_request_param *p = &r->params[i];
    FUZZ_CHECK(p->key != NULL);
    size_t klen = strnlen(p->key, SRV_REQUEST_PARAM_KEY_MAX + 1);
    FUZZ_CHECK(klen <= SRV_REQUEST_PARAM_KEY_MAX);
    fuzz_touch(p->key, klen + 1);
    for (size_t k = 0; k < reserved_count; k++)
      FUZZ_CHECK(strcmp(p->key, reserved[k]) != 0);
    if (strncmp(p->key, "triton_", 7) == 0)
      FUZZ_CHECK(triton_ok != NULL && strcmp(p->key, triton_ok) == 0);
    switch (p->type) {
      case TRITONSERVER_PARAMETER_STRING: {
        FUZZ_CHECK(p->value.s != NULL);
        size_t slen = strnlen(p->value.s, SRV_REQUEST_PARAM_STRING_MAX + 1);
        FUZZ_CHECK(slen <= SRV_REQUEST_PARAM_STRING_MAX);
        fuzz_touch(p->value.s, slen + 1);
        break;
      }
      case TRITONSERVER_PARAMETER_INT:
      case TRITONSERVER_PARAMETER_BOOL:
      case TRITONSERVER_PARAMETER_DOUBLE:
        break;
      default:
        FUZZ_CHECK(!"a parameter type of the four");
    }
  }
}

void fuzz_registry_make(srv_server_t *srv, const char *const *configs, size_t n) {
  static srv_model_t *models[FUZZ_MODELS_MAX];
  static size_t made;
  FUZZ_CHECK(n <= FUZZ_MODELS_MAX - made);
  srv_registry_entry_t entries[FUZZ_MODELS_MAX];
  memset(entries, 0, sizeof entries);
  upb_Arena *a = upb_Arena_New();
  for (size_t i = 0; i < n; i++) {
    char err[256];
    inference_ModelConfig *c = cfg_model_config_parse(configs[i], strlen(configs[i]),
                                                      "model", a, err, sizeof err);
    if (c == NULL) fprintf(stderr, "%s\n", err);
    FUZZ_CHECK(c != NULL);
    upb_StringView name = inference_ModelConfig_name(c);
    entries[i].name = strndup(name.data, name.size);
    FUZZ_CHECK(srv_model_bare_new(entries[i].name, c, &models[made]) == NULL);
    entries[i].state = SRV_MODEL_STATE_READY;
    entries[i].versions = &models[made++];
    entries[i].version_count = 1;
  }
  upb_Arena_Free(a);
  srv->registry = srv_registry_new();
  srv_registry_publish(srv->registry, entries, n);
  for (size_t i = 0; i < n; i++) free(entries[i].name);
}
