/* Request-level parameters of the JSON requests (see json_params.h). */
#include "server/http/json_params.h"

#include <string.h>

#include "server/common/memory.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* An integer id is its bits (jansson reads integers as int64, as the gRPC
 * frontend reads int64_param); a string one is bounded and copied. */
static srv_status_t *sequence_id_read(const srv_model_t *m, const json_t *v,
                                      upb_Arena *arena, TRITONBACKEND_Request *r) {
  if (json_is_integer(v)) {
    r->correlation_id = (uint64_t)json_integer_value(v);
    return NULL;
  }
  if (!json_is_string(v)) return BAD("Unable to parse 'sequence_id'");
  size_t len = json_string_length(v);
  srv_status_t *st = srv_check_sequence_id_string(m, json_string_value(v), len);
  if (st != NULL) return st;
  r->correlation_id_string =
      srv_arena_strview(arena, (upb_StringView){json_string_value(v), len});
  return NULL;
}

static srv_status_t *bool_read(const json_t *params, const char *key, bool *out,
                               bool *given) {
  const json_t *v = json_object_get(params, key);
  *given = v != NULL;
  if (v == NULL) return NULL;
  if (!json_is_boolean(v)) return BAD("Unable to parse '%s'", key);
  *out = json_is_true(v);
  return NULL;
}

/* A non-negative integer; *out untouched when the key is absent. */
static srv_status_t *uint_read(const srv_model_t *m, const json_t *params,
                               const char *key, uint64_t *out) {
  const json_t *v = json_object_get(params, key);
  if (v == NULL) return NULL;
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return srv_check_param_uint_error(m, key);
  *out = (uint64_t)json_integer_value(v);
  return NULL;
}

static srv_status_t *flags_read(const json_t *params, TRITONBACKEND_Request *r) {
  bool on = false, given;
  srv_status_t *st = bool_read(params, "sequence_start", &on, &given);
  if (st != NULL) return st;
  if (given && on) r->flags |= TRITONSERVER_REQUEST_FLAG_SEQUENCE_START;
  on = false;
  st = bool_read(params, "sequence_end", &on, &given);
  if (st != NULL) return st;
  if (given && on) r->flags |= TRITONSERVER_REQUEST_FLAG_SEQUENCE_END;
  return NULL;
}

/* The keys Triton's HTTP frontend reads itself and never hands on. */
static bool key_reserved(const char *k) {
  static const char *const keys[] = {"sequence_id", "sequence_start", "sequence_end",
                                     "priority",    "timeout",        "binary_data_output"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (strcmp(k, keys[i]) == 0) return true;
  return false;
}

/* One parameter for the backend, typed as Triton's HTTP frontend types it:
 * string, integer (int64), boolean, other numbers as double. */
static srv_status_t *param_forward(const char *key, const json_t *v, upb_Arena *arena,
                                   TRITONBACKEND_Request *r) {
  char q[SRV_QUOTE_SIZE];
  if (strncmp(key, "triton_", 7) == 0)
    return BAD("parameter keys starting with 'triton_' are reserved for Triton usage and "
               "should not be specified.");
  srv_param_value_t pv = {0};
  TRITONSERVER_ParameterType type;
  size_t len = 0;
  if (json_is_string(v)) {
    type = TRITONSERVER_PARAMETER_STRING;
    pv.s = json_string_value(v);
    len = json_string_length(v);
  } else if (json_is_integer(v)) {
    type = TRITONSERVER_PARAMETER_INT;
    pv.i = (int64_t)json_integer_value(v);
  } else if (json_is_boolean(v)) {
    type = TRITONSERVER_PARAMETER_BOOL;
    pv.b = json_is_true(v);
  } else if (json_is_real(v)) {
    type = TRITONSERVER_PARAMETER_DOUBLE;
    pv.d = json_real_value(v);
  } else {
    return BAD("parameter '%s' has invalid type. It should be either 'int', 'bool', or "
               "'string'.",
               srv_quote_str(q, key));
  }
  return srv_request_param_add(r, arena, key, strlen(key), type, pv, len);
}

/* Every key that is not the server's goes to the backend. */
static srv_status_t *params_forward(const json_t *params, upb_Arena *arena,
                                    TRITONBACKEND_Request *r) {
  srv_request_params_reserve(r, arena, json_object_size(params));
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)params, key, v) {
    if (key_reserved(key)) continue;
    srv_status_t *st = param_forward(key, v, arena, r);
    if (st != NULL) return st;
  }
  return NULL;
}

srv_status_t *srv_json_params_read(const srv_model_t *m, const json_t *params,
                                   upb_Arena *arena, TRITONBACKEND_Request *r,
                                   bool *binary_data_output) {
  if (params == NULL) return NULL;
  if (!json_is_object(params)) return BAD("Unable to parse 'parameters'");
  const json_t *id = json_object_get(params, "sequence_id");
  srv_status_t *st = id ? sequence_id_read(m, id, arena, r) : NULL;
  if (st == NULL) st = flags_read(params, r);
  uint64_t priority = r->priority, timeout = r->timeout_us;
  if (st == NULL) st = uint_read(m, params, "priority", &priority);
  if (st == NULL) st = uint_read(m, params, "timeout", &timeout);
  r->priority = priority > UINT32_MAX ? UINT32_MAX : (uint32_t)priority;
  r->timeout_us = timeout;
  bool bdo = false, given = false;
  if (st == NULL && binary_data_output != NULL)
    st = bool_read(params, "binary_data_output", &bdo, &given);
  if (st == NULL && given) *binary_data_output = bdo;
  if (st == NULL) st = params_forward(params, arena, r);
  return st;
}
