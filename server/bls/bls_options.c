/* What a TRITONSERVER_InferenceRequest carries besides its tensors: the
 * parameters its backend reads (TRITONBACKEND_RequestParameter*), and the
 * priority and queue timeout its model's scheduler applies, as to a
 * client's. Setters run on the user's thread while the user owns the
 * request (see bls.h); srv_bls_options_build copies them into the flight
 * at TRITONSERVER_ServerInferAsync. Parameters are checked when set,
 * against the bounds every frontend applies (request_params.h). */
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/error_status.h"
#include "server/bls/bls.h"
#include "server/common/log.h"
#include "server/common/memory.h"

static TRITONSERVER_Error *param_set(TRITONSERVER_InferenceRequest *u, const char *key,
                                     TRITONSERVER_ParameterType type, srv_param_value_t v) {
  if (u == NULL || key == NULL || (type == TRITONSERVER_PARAMETER_STRING && v.s == NULL))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "a request parameter needs a request, a key and a value");
  if (u->param_count == SRV_REQUEST_PARAMS_MAX)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "model '%s': more than %u request parameters", u->model->name,
                         SRV_REQUEST_PARAMS_MAX);
  size_t len = type == TRITONSERVER_PARAMETER_STRING ? strlen(v.s) : 0;
  srv_status_t *st = srv_request_param_check(u->model->name, key, strlen(key), type,
                                             v.s, len);
  if (st != NULL) return api_error_from_status(st);
  if (u->param_count == u->param_cap) {
    u->param_cap = u->param_cap ? 2 * u->param_cap : 4;
    u->params = realloc(u->params, u->param_cap * sizeof *u->params);
    if (u->params == NULL) SRV_FATAL("out of memory");
  }
  /* Appended, never replaced: Triton keeps every one, repeated keys too. */
  srv_bls_param_t *p = &u->params[u->param_count++];
  p->key = srv_strdup(key);
  p->type = type;
  p->value = v;
  if (type == TRITONSERVER_PARAMETER_STRING) p->value.s = srv_strdup(v.s);
  return NULL;
}

void srv_bls_params_free(TRITONSERVER_InferenceRequest *u) {
  for (uint32_t i = 0; i < u->param_count; i++) {
    free(u->params[i].key);
    if (u->params[i].type == TRITONSERVER_PARAMETER_STRING) free((char *)u->params[i].value.s);
  }
  free(u->params);
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetStringParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const char *value) {
  return param_set(request, key, TRITONSERVER_PARAMETER_STRING, (srv_param_value_t){.s = value});
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetIntParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const int64_t value) {
  return param_set(request, key, TRITONSERVER_PARAMETER_INT, (srv_param_value_t){.i = value});
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetBoolParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const _Bool value) {
  return param_set(request, key, TRITONSERVER_PARAMETER_BOOL, (srv_param_value_t){.b = value});
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetDoubleParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const double value) {
  return param_set(request, key, TRITONSERVER_PARAMETER_DOUBLE,
                   (srv_param_value_t){.d = value});
}

/* ---- priority and timeout: read by the callee's scheduler ---- */

/* NULL where Triton would crash: INVALID_ARG naming the call. */
static TRITONSERVER_Error *null_arg(const char *call) {
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: NULL request or result", call);
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestPriority(TRITONSERVER_InferenceRequest *u,
                                                          uint32_t *priority) {
  if (u == NULL || priority == NULL) return null_arg("TRITONSERVER_InferenceRequestPriority");
  /* Clamped, not cut: a level past the last is the default level either way. */
  *priority = u->priority > UINT32_MAX ? UINT32_MAX : (uint32_t)u->priority;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestPriorityUInt64(
    TRITONSERVER_InferenceRequest *u, uint64_t *priority) {
  if (u == NULL || priority == NULL)
    return null_arg("TRITONSERVER_InferenceRequestPriorityUInt64");
  *priority = u->priority;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetPriority(TRITONSERVER_InferenceRequest *u,
                                                             uint32_t priority) {
  if (u == NULL) return null_arg("TRITONSERVER_InferenceRequestSetPriority");
  u->priority = priority;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetPriorityUInt64(
    TRITONSERVER_InferenceRequest *u, uint64_t priority) {
  if (u == NULL) return null_arg("TRITONSERVER_InferenceRequestSetPriorityUInt64");
  u->priority = priority;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest *u, uint64_t *timeout_us) {
  if (u == NULL || timeout_us == NULL)
    return null_arg("TRITONSERVER_InferenceRequestTimeoutMicroseconds");
  *timeout_us = u->timeout_us;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest *u, uint64_t timeout_us) {
  if (u == NULL) return null_arg("TRITONSERVER_InferenceRequestSetTimeoutMicroseconds");
  u->timeout_us = timeout_us;
  return NULL;
}

srv_status_t *srv_bls_options_build(const TRITONSERVER_InferenceRequest *u,
                                    upb_Arena *arena, TRITONBACKEND_Request *r) {
  /* As a client's `priority` parameter: levels past UINT32_MAX do not exist. */
  r->priority = u->priority > UINT32_MAX ? UINT32_MAX : (uint32_t)u->priority;
  r->timeout_us = u->timeout_us;
  srv_request_params_reserve(r, arena, u->param_count);
  for (uint32_t i = 0; i < u->param_count; i++) {
    const srv_bls_param_t *p = &u->params[i];
    size_t len = p->type == TRITONSERVER_PARAMETER_STRING ? strlen(p->value.s) : 0;
    srv_status_t *st =
        srv_request_param_add(r, arena, p->key, strlen(p->key), p->type, p->value, len);
    if (st != NULL) return st;
  }
  return NULL;
}
