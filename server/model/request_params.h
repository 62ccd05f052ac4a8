/* A request's parameters as backends read them (TRITONBACKEND_RequestParameter):
 * key, type and value, built once into the request's arena by whoever made
 * the request (gRPC ModelInfer and streams, HTTP infer and generate, the
 * in-process API), with one set of bounds for all of them. A request that
 * carries no parameters costs nothing here: r->params stays NULL. Building
 * runs on the thread that builds the request; the result is read-only
 * afterwards, read by the executing backend's threads. */
#ifndef NEREID_SERVER_MODEL_REQUEST_PARAMS_H
#define NEREID_SERVER_MODEL_REQUEST_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/model/request.h"
#include "upb/upb.h"

/** Most parameters one request may carry (Triton has no bound). */
#define SRV_REQUEST_PARAMS_MAX 128u
/** Longest parameter key, in bytes. */
#define SRV_REQUEST_PARAM_KEY_MAX 256u
/** Longest string parameter value, in bytes. */
#define SRV_REQUEST_PARAM_STRING_MAX 65536u

/** A value as its type gives it: `s` for STRING, `i` for INT, `b` for BOOL,
 *  `d` for DOUBLE. */
typedef union {
  const char *s;
  int64_t i;
  bool b;
  double d;
} srv_param_value_t;

struct srv_request_param {
  const char *key;
  TRITONSERVER_ParameterType type;
  srv_param_value_t value;
};

/** Room in `arena` for the parameters of r: at most `n` (the count the
 *  wire gives, reserved keys included) and never more than the limit;
 *  r->param_count starts at 0. n == 0 leaves r as it is. */
void srv_request_params_reserve(TRITONBACKEND_Request *r, upb_Arena *arena, size_t n);

/** Checks one parameter against the bounds: key of `key_len` bytes within
 *  SRV_REQUEST_PARAM_KEY_MAX and without a NUL, a STRING value (`str_len`
 *  bytes) within SRV_REQUEST_PARAM_STRING_MAX and without a NUL (Triton
 *  would cut both at it). INVALID_ARGUMENT naming `model` and the key. */
srv_status_t *srv_request_param_check(const char *model, const char *key, size_t key_len,
                                      TRITONSERVER_ParameterType type, const char *str,
                                      size_t str_len);

/** Checks and appends one parameter to r (after srv_request_params_reserve),
 *  copying the key and a string value (`v.s`, `str_len` bytes) into
 *  `arena`; INVALID_ARGUMENT past SRV_REQUEST_PARAMS_MAX. Keys may repeat,
 *  as in Triton: each is its own entry. */
srv_status_t *srv_request_param_add(TRITONBACKEND_Request *r, upb_Arena *arena,
                                    const char *key, size_t key_len,
                                    TRITONSERVER_ParameterType type, srv_param_value_t v,
                                    size_t str_len);

#endif
