/* The HTTP bodies of Triton's system and CUDA shared-memory endpoints (see
 * http_views.h): status as a JSON array, register bodies read with
 * Triton's texts, then the same calls into the region table (server/shm)
 * that the gRPC handlers make. Any thread. */
#include <stdint.h>
#include <string.h>

#include "server/common/log.h"
#include "server/views/http_body.h"
#include "server/views/http_views.h"
#include "server/views/json.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Sets *out from st (taken): the error, or 200 with no body. */
static void answer_empty(srv_http_answer_t *out, srv_status_t *st) {
  *out = (srv_http_answer_t){.code = srv_http_status_code(st), .status = st};
  if (st != NULL) out->body = srv_http_status_body(st, &out->len);
}

static void set_uint(json_t *o, const char *key, uint64_t v) {
  /* jansson's integers are int64: every size the table holds fits (a
   * mapping is smaller than 2^63 bytes). */
  if (json_object_set_new_nocheck(o, key, json_integer((json_int_t)v)) != 0)
    SRV_FATAL("out of memory");
}

static void region_add(void *ctx, const srv_shm_info_t *info) {
  json_t *o = json_object();
  if (o == NULL || json_array_append_new(ctx, o) != 0) SRV_FATAL("out of memory");
  json_t *name = srv_json_string(upb_StringView_FromString(info->name));
  if (json_object_set_new_nocheck(o, "name", name) != 0) SRV_FATAL("out of memory");
  if (info->key != NULL) { /* system */
    json_t *key = srv_json_string(upb_StringView_FromString(info->key));
    if (json_object_set_new_nocheck(o, "key", key) != 0) SRV_FATAL("out of memory");
    set_uint(o, "offset", info->offset);
  } else {
    set_uint(o, "device_id", (uint64_t)info->device_id);
  }
  set_uint(o, "byte_size", info->byte_size);
}

void srv_http_shm_status(srv_shm_t *shm, srv_shm_kind_t kind, upb_StringView name,
                         srv_http_answer_t *out) {
  json_t *regions = json_array();
  if (regions == NULL) SRV_FATAL("out of memory");
  srv_status_t *st = srv_shm_status(shm, kind, name.data, name.size, region_add, regions);
  *out = (srv_http_answer_t){.code = srv_http_status_code(st), .status = st};
  out->body = st != NULL ? srv_http_status_body(st, &out->len)
                         : srv_json_text(regions, &out->len);
  json_decref(regions);
}

/* Member `key` of o as an unsigned integer: *v untouched when absent and
 * `required` is NULL; else Triton's "has no" text, or TritonJson's text
 * for a value of another type (after the field's name). */
static srv_status_t *member_uint(const json_t *o, const char *key, const char *required,
                                 uint64_t *v) {
  const json_t *j = o != NULL ? json_object_get(o, key) : NULL;
  if (j == NULL && required == NULL) return NULL;
  if (j == NULL) return BAD("%s", required);
  if (!json_is_integer(j) || json_integer_value(j) < 0)
    return BAD(
        "Unable to parse '%s': attempt to access JSON non-unsigned-integer as "
        "unsigned-integer",
        key);
  *v = (uint64_t)json_integer_value(j);
  return NULL;
}

/* Member `key` of o as a string (view into o). */
static srv_status_t *member_string(const json_t *o, const char *key, const char *required,
                                   upb_StringView *v) {
  const json_t *j = o != NULL ? json_object_get(o, key) : NULL;
  if (j == NULL) return BAD("%s", required);
  if (!json_is_string(j))
    return BAD("Unable to parse '%s': attempt to access JSON non-string as string", key);
  *v = upb_StringView_FromDataAndSize(json_string_value(j), json_string_length(j));
  return NULL;
}

/* {"key": "/name", "offset": N, "byte_size": N}: offset optional. */
static srv_status_t *system_register(srv_shm_t *shm, upb_StringView name,
                                     const json_t *req) {
  upb_StringView key;
  uint64_t offset = 0, size = 0;
  srv_status_t *st = member_string(
      req, "key", "Shared memory register request has no 'key' field", &key);
  if (st == NULL) st = member_uint(req, "offset", NULL, &offset);
  if (st == NULL)
    st = member_uint(req, "byte_size",
                     "Shared memory register request has no 'byte_size' field", &size);
  if (st == NULL)
    st = srv_shm_register_system(shm, name.data, name.size, key.data, key.size, offset,
                                 size);
  return st;
}

/* {"raw_handle": {"b64": "<base64>"}, "device_id": N, "byte_size": N}. */
static srv_status_t *cuda_register(srv_shm_t *shm, upb_StringView name,
                                   const json_t *req) {
  const json_t *handle = req != NULL ? json_object_get(req, "raw_handle") : NULL;
  if (handle == NULL)
    return BAD("Shared memory register request has no 'raw_handle' field");
  if (!json_is_object(handle))
    return BAD(
        "Unable to parse 'raw_handle': attempt to access JSON non-object as object");
  upb_StringView b64;
  uint64_t size = 0, device = 0;
  srv_status_t *st =
      member_string(handle, "b64", "'raw_handle' has no 'b64' field", &b64);
  if (st == NULL)
    st = member_uint(req, "byte_size",
                     "Shared memory register request has no 'byte_size' field", &size);
  if (st == NULL)
    st = member_uint(req, "device_id",
                     "Shared memory register request has no 'device_id' field", &device);
  if (st != NULL) return st;
  if (device > INT64_MAX) return BAD("Unable to parse 'device_id': out of range");
  /* A cudaIpcMemHandle_t is 64 bytes (88 in base64): much longer text is
   * refused before it is decoded. */
  enum { B64_MAX = 256 };
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  upb_StringView raw;
  if (b64.size > B64_MAX || !srv_http_base64_decode(b64.data, b64.size, a, &raw))
    st = BAD("'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t");
  else
    st = srv_shm_register_cuda(shm, name.data, name.size, raw.data, raw.size,
                               (int64_t)device, size);
  upb_Arena_Free(a);
  return st;
}

void srv_http_shm_register(srv_shm_t *shm, srv_shm_kind_t kind, upb_StringView name,
                           const char *body, size_t len, srv_http_answer_t *out) {
  if (name.size == 0) { /* Triton's: the route names no region */
    answer_empty(out,
                 BAD("'region name' is necessary to register %s shared memory region",
                     kind == SRV_SHM_SYSTEM ? "system" : "cuda"));
    return;
  }
  json_t *req;
  srv_status_t *st = srv_http_body_parse(body, len, &req);
  if (st == NULL)
    st = kind == SRV_SHM_SYSTEM ? system_register(shm, name, req)
                                : cuda_register(shm, name, req);
  json_decref(req);
  answer_empty(out, st);
}

void srv_http_shm_unregister(srv_shm_t *shm, srv_shm_kind_t kind, upb_StringView name,
                             srv_http_answer_t *out) {
  answer_empty(out, srv_shm_unregister(shm, kind, name.data, name.size));
}
