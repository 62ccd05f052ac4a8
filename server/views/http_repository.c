/* The JSON bodies of the repository endpoints (see http_views.h and
 * http_body.h). A load body becomes the RepositoryModelLoadRequest that
 * the gRPC frontend receives, so that srv_load_override_parse checks both
 * the same way, with the same texts. Any thread. */
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/views/http_body.h"
#include "server/views/http_views.h"

#define FILE_PREFIX "file:"

/* "parameters" of a body (NULL when absent); an error when it is not an
 * object. `action` is "load" or "unload", for the text. */
static srv_status_t *parameters_of(json_t *req, const char *model, const char *action,
                                   json_t **out) {
  *out = req != NULL ? json_object_get(req, "parameters") : NULL;
  if (*out == NULL || json_is_object(*out)) return NULL;
  *out = NULL;
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "failed to %s '%s': 'parameters' must be a JSON object", action,
                        model);
}

/* The body, within SRV_HTTP_REPOSITORY_BODY_MAX (checked before a byte is
 * read), and its "parameters"; *j (to drop) and *params may be NULL. */
static srv_status_t *body_parameters(const char *body, size_t len, const char *model,
                                     const char *action, json_t **j, json_t **params) {
  *j = *params = NULL;
  if (len > SRV_HTTP_REPOSITORY_BODY_MAX)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to %s '%s': the request body has %zu bytes, more than "
                          "the %llu allowed",
                          action, model, len,
                          (unsigned long long)SRV_HTTP_REPOSITORY_BODY_MAX);
  srv_status_t *st = srv_http_body_parse(body, len, j);
  return st != NULL ? st : parameters_of(*j, model, action, params);
}

/* One parameter into req's map: "file:" values decoded, the rest (config,
 * or a name that srv_load_override_parse refuses) as strings. */
static srv_status_t *param_add(inference_RepositoryModelLoadRequest *req, const char *qm,
                               const char *key, json_t *value, uint64_t *bytes,
                               upb_Arena *a) {
  char qk[SRV_QUOTE_SIZE];
  srv_quote_str(qk, key);
  if (!json_is_string(value))
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "failed to load '%s': load parameter '%s' must be a JSON string", qm, qk);
  inference_ModelRepositoryParameter *p = inference_ModelRepositoryParameter_new(a);
  if (p == NULL) SRV_FATAL("out of memory");
  const char *s = json_string_value(value);
  size_t n = json_string_length(value);
  if (strncmp(key, FILE_PREFIX, strlen(FILE_PREFIX)) == 0) {
    /* Within the bound of srv_load_override_parse before decoding: the
     * text says at most how much it decodes to. */
    *bytes += n / 4 * 3;
    if (*bytes > SRV_LOAD_OVERRIDE_BYTES_MAX)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "failed to load '%s': the files of the load parameters hold "
                            "more than %llu bytes, the most one load may write",
                            qm, (unsigned long long)SRV_LOAD_OVERRIDE_BYTES_MAX);
    upb_StringView file;
    if (!srv_http_base64_decode(s, n, a, &file))
      return srv_status_new(
          GRPC_STATUS_INVALID_ARGUMENT,
          "failed to load '%s': the value of load parameter '%s' is not "
          "valid base64",
          qm, qk);
    inference_ModelRepositoryParameter_set_bytes_param(p, file);
  } else {
    inference_ModelRepositoryParameter_set_string_param(
        p, upb_StringView_FromDataAndSize(srv_arena_copy(a, s, n), n));
  }
  size_t kn = strlen(key);
  if (!inference_RepositoryModelLoadRequest_parameters_set(
          req, upb_StringView_FromDataAndSize(srv_arena_copy(a, key, kn), kn), p, a))
    SRV_FATAL("out of memory");
  return NULL;
}

static srv_status_t *load_read(upb_StringView model, const char *qm, const char *body,
                               size_t len, upb_Arena *a, srv_load_override_t *out) {
  json_t *j, *params;
  srv_status_t *st = body_parameters(body, len, qm, "load", &j, &params);
  if (st == NULL && params != NULL &&
      json_object_size(params) > SRV_LOAD_OVERRIDE_FILES_MAX + 1)
    st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "failed to load '%s': the load parameters give more than %d "
                        "files, the most one load may have",
                        qm, SRV_LOAD_OVERRIDE_FILES_MAX);
  inference_RepositoryModelLoadRequest *req = inference_RepositoryModelLoadRequest_new(a);
  if (req == NULL) SRV_FATAL("out of memory");
  inference_RepositoryModelLoadRequest_set_model_name(req, model);
  uint64_t bytes = 0; /* of the files, decoded */
  void *it = st == NULL && params != NULL ? json_object_iter(params) : NULL;
  for (; st == NULL && it != NULL; it = json_object_iter_next(params, it))
    st = param_add(req, qm, json_object_iter_key(it), json_object_iter_value(it), &bytes,
                   a);
  json_decref(j);
  if (st == NULL) st = srv_load_override_parse(req, a, out);
  return st;
}

srv_status_t *srv_http_load_parse(upb_StringView model, const char *body, size_t len,
                                  upb_Arena *arena, srv_load_override_t *out,
                                  int *http_code) {
  *out = (srv_load_override_t){0};
  char qm[SRV_QUOTE_SIZE];
  srv_quote(qm, model.data, model.size);
  srv_status_t *st = load_read(model, qm, body, len, arena, out);
  if (st != NULL) *out = (srv_load_override_t){0};
  *http_code = srv_http_status_code(st);
  return st;
}

static srv_status_t *unload_read(const char *qm, const char *body, size_t len,
                                 bool *unload_dependents) {
  json_t *j, *params;
  srv_status_t *st = body_parameters(body, len, qm, "unload", &j, &params);
  json_t *ud =
      st == NULL && params != NULL ? json_object_get(params, "unload_dependents") : NULL;
  if (ud != NULL && !json_is_boolean(ud))
    st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "Unable to parse 'unload_dependents': attempt to access JSON "
                        "non-boolean as boolean");
  else if (ud != NULL)
    *unload_dependents = json_is_true(ud);
  json_decref(j);
  return st;
}

srv_status_t *srv_http_unload_parse(upb_StringView model, const char *body, size_t len,
                                    bool *unload_dependents, int *http_code) {
  *unload_dependents = false;
  char qm[SRV_QUOTE_SIZE];
  srv_quote(qm, model.data, model.size);
  srv_status_t *st = unload_read(qm, body, len, unload_dependents);
  if (st != NULL) *unload_dependents = false;
  *http_code = srv_http_status_code(st);
  return st;
}
