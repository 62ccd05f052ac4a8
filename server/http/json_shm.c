/* Shared-memory tensor parameters of HTTP JSON requests (see json_shm.h).
 * Any thread. */
#include "server/http/json_shm.h"

#include <string.h>

#include "server/common/memory.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

bool srv_json_shm_named(const json_t *params) {
  return json_is_object(params) &&
         json_object_get(params, "shared_memory_region") != NULL;
}

/* An unsigned parameter that may be absent (then *v stays). */
static srv_status_t *uint_read(const json_t *params, const char *key, uint64_t *v) {
  const json_t *j = json_object_get(params, key);
  if (j == NULL) return NULL;
  if (!json_is_integer(j) || json_integer_value(j) < 0)
    return BAD("Unable to parse '%s'", key);
  *v = (uint64_t)json_integer_value(j);
  return NULL;
}

srv_status_t *srv_json_shm_bind(srv_json_shm_binds_t *b, const json_t *params,
                                const char *output, const srv_shm_ref_t **ref) {
  const json_t *region = json_object_get(params, "shared_memory_region");
  if (!json_is_string(region)) return BAD("Unable to parse 'shared_memory_region'");
  uint64_t offset = 0, size = 0;
  srv_status_t *st = uint_read(params, "shared_memory_offset", &offset);
  if (st == NULL) st = uint_read(params, "shared_memory_byte_size", &size);
  if (st != NULL) return st;
  if (b->shm == NULL)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "shared memory is not served on this endpoint");
  if (b->count == b->cap) { /* at most one per tensor: bounded by the body */
    uint32_t cap = b->cap ? 2 * b->cap : 4;
    srv_shm_ref_t *refs = srv_arena_alloc(b->arena, cap * sizeof *refs);
    if (b->count) memcpy(refs, b->refs, b->count * sizeof *refs);
    b->refs = refs;
    b->cap = cap;
  }
  srv_shm_ref_t *r = &b->refs[b->count];
  st = srv_shm_acquire(b->shm, json_string_value(region), json_string_length(region),
                       offset, size, r);
  if (st != NULL) return st;
  r->output = output;
  b->count++;
  *ref = r;
  return NULL;
}

void srv_json_shm_release(srv_json_shm_binds_t *b) {
  for (uint32_t i = 0; i < b->count; i++) srv_shm_release(&b->refs[i]);
  b->count = 0;
}
