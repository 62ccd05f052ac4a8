/* The response cache's key of a request: a 128-bit hash of the model's
 * name and version, every input (name, datatype, shape, byte size,
 * contents) and the outputs the request names. Pure function of its
 * arguments: any thread. */
#ifndef NEREID_SERVER_CACHE_KEY_H
#define NEREID_SERVER_CACHE_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/model/request.h"

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

typedef struct {
  uint64_t hi, lo;
} srv_cache_key_t;

static inline bool srv_cache_key_eq(const srv_cache_key_t *a, const srv_cache_key_t *b) {
  return a->hi == b->hi && a->lo == b->lo;
}

/** The key as text, 32 hex digits: how libraries and logs see it. */
void srv_cache_key_text(const srv_cache_key_t *k, char text[33]);

/** A streaming 128-bit hash keyed by a seed, so that colliding inputs
 *  cannot be worked out ahead of time: xxHash's XXH3 (libxxhash). */
typedef struct {
  XXH3_state_t state;
} srv_cache_hasher_t;

void srv_cache_hasher_init(srv_cache_hasher_t *h, uint64_t seed);
void srv_cache_hasher_update(srv_cache_hasher_t *h, const void *data, size_t n);
srv_cache_key_t srv_cache_hasher_final(const srv_cache_hasher_t *h);

/** The key of r for model `model` version `version`, or false when r
 *  cannot use the cache: an input has data outside host memory (Triton
 *  hashes host memory only). Inputs count in any order; requested outputs
 *  too. Request parameters do not take part, as in Triton. */
bool srv_cache_key_of(uint64_t seed, const char *model, int64_t version,
                      const TRITONBACKEND_Request *r, srv_cache_key_t *out);

#endif
