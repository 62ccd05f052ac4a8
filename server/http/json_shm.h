/* Triton's shared-memory tensor parameters in the HTTP frontend's JSON
 * requests: `shared_memory_region` (string), `shared_memory_offset` and
 * `shared_memory_byte_size` (unsigned integers) of an input or a requested
 * output, and the region references a request takes while it is parsed.
 * Pure functions over the region table: any thread. */
#ifndef NEREID_SERVER_HTTP_JSON_SHM_H
#define NEREID_SERVER_HTTP_JSON_SHM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** The references one request takes while it is parsed, in its arena
 *  (grown as tensors name regions, so a request that names none allocates
 *  nothing); released if the parse fails, else moved into the request's
 *  state (srv_shm_uses_new). */
typedef struct {
  srv_shm_t *shm; /* NULL: the caller serves no shared memory */
  upb_Arena *arena;
  srv_shm_ref_t *refs;
  uint32_t count, cap;
} srv_json_shm_binds_t;

/** Whether `params` (a tensor's `parameters` object, or NULL) names a
 *  region. */
bool srv_json_shm_named(const json_t *params);

/** Reads the three parameters of `params` (which names a region) with
 *  Triton's texts (offset and byte size default to 0, as Triton's HTTP
 *  frontend has them) and takes the reference on the region
 *  (srv_shm_acquire's checks and texts) into b; `output` is the model's
 *  name of the output it is for, NULL for an input. The new reference is
 *  *ref. */
srv_status_t *srv_json_shm_bind(srv_json_shm_binds_t *b, const json_t *params,
                                const char *output, const srv_shm_ref_t **ref);

/** Drops every reference b holds. */
void srv_json_shm_release(srv_json_shm_binds_t *b);

#endif
