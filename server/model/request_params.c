/* Request parameters (see request_params.h): the bounds every way into the
 * server applies, the copy into the request's arena, and the backend API
 * that reads them. Building runs on the request builder's thread; the
 * accessors on the executing backend's. */
#include "server/model/request_params.h"

#include <string.h>

#include "server/api/error.h"
#include "server/common/memory.h"
#include "server/model/model_view.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

void srv_request_params_reserve(TRITONBACKEND_Request *r, upb_Arena *arena, size_t n) {
  if (n == 0) return;
  /* One more than the limit at most: the add past it says so. */
  uint32_t room = n > SRV_REQUEST_PARAMS_MAX ? SRV_REQUEST_PARAMS_MAX : (uint32_t)n;
  r->params = srv_arena_alloc(arena, room * sizeof *r->params);
  r->param_room = room;
  r->param_count = 0;
}

srv_status_t *srv_request_param_check(const char *model, const char *key, size_t key_len,
                                      TRITONSERVER_ParameterType type, const char *str,
                                      size_t str_len) {
  char q[SRV_QUOTE_SIZE];
  if (key_len > SRV_REQUEST_PARAM_KEY_MAX)
    return BAD("model '%s': a parameter key of %zu bytes is above the limit of %u", model,
               key_len, SRV_REQUEST_PARAM_KEY_MAX);
  if (key_len > 0 && memchr(key, '\0', key_len) != NULL)
    return BAD("model '%s': parameter key '%s' holds a NUL byte", model,
               srv_quote(q, key, key_len));
  if (type != TRITONSERVER_PARAMETER_STRING) return NULL;
  if (str_len > SRV_REQUEST_PARAM_STRING_MAX)
    return BAD("model '%s': parameter '%s' is a string of %zu bytes, above the limit of %u",
               model, srv_quote(q, key, key_len), str_len, SRV_REQUEST_PARAM_STRING_MAX);
  if (str_len > 0 && memchr(str, '\0', str_len) != NULL)
    return BAD("model '%s': parameter '%s' holds a NUL byte", model,
               srv_quote(q, key, key_len));
  return NULL;
}

srv_status_t *srv_request_param_add(TRITONBACKEND_Request *r, upb_Arena *arena,
                                    const char *key, size_t key_len,
                                    TRITONSERVER_ParameterType type, srv_param_value_t v,
                                    size_t str_len) {
  const char *model = srv_model_name(r->model);
  if (r->param_count == SRV_REQUEST_PARAMS_MAX)
    return BAD("model '%s': more than %u request parameters", model,
               SRV_REQUEST_PARAMS_MAX);
  if (r->param_count == r->param_room) /* a caller that reserved too little */
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "model '%s': no room reserved for request parameter %u", model,
                          r->param_count);
  srv_status_t *st = srv_request_param_check(model, key, key_len, type, v.s, str_len);
  if (st != NULL) return st;
  struct srv_request_param *p = &r->params[r->param_count++];
  p->key = srv_arena_strview(arena, (upb_StringView){key, key_len});
  p->type = type;
  p->value = v;
  if (type == TRITONSERVER_PARAMETER_STRING)
    p->value.s = srv_arena_strview(arena, (upb_StringView){v.s, str_len});
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestParameterCount(TRITONBACKEND_Request *request,
                                                        uint32_t *count) {
  *count = request->param_count;
  return NULL;
}

/* Triton's value pointers: the string itself for STRING, else the value's
 * address (int64_t, bool or double), valid while the request is. */
TRITONSERVER_Error *TRITONBACKEND_RequestParameter(TRITONBACKEND_Request *request,
                                                   const uint32_t index, const char **key,
                                                   TRITONSERVER_ParameterType *type,
                                                   const void **vvalue) {
  if (index >= request->param_count)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "out of bounds index %u: request has %u parameters", index,
                         request->param_count);
  const struct srv_request_param *p = &request->params[index];
  *key = p->key;
  *type = p->type;
  *vvalue = p->type == TRITONSERVER_PARAMETER_STRING ? (const void *)p->value.s
                                                     : (const void *)&p->value;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_InferenceRequestTimeoutMicroseconds(
    TRITONBACKEND_Request *request, uint64_t *timeout) {
  *timeout = request->timeout_us;
  return NULL;
}
