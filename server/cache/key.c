/* The request key (key.h). The hash is xxHash's XXH3 with 128 bits out,
 * seeded per process (cache.c), so an outside client cannot aim at a
 * collision it has computed in advance. */
#include "server/cache/key.h"

#include <stdio.h>
#include <string.h>

/* Seeds of the input and output part hashes, apart from the whole's. */
static const uint64_t INPUT_SEED = 0xc2b2ae3d27d4eb4full, OUTPUT_SEED = 0x165667b19e3779f9ull;

void srv_cache_hasher_init(srv_cache_hasher_t *h, uint64_t seed) {
  XXH3_128bits_reset_withSeed(&h->state, seed);
}

void srv_cache_hasher_update(srv_cache_hasher_t *h, const void *data, size_t n) {
  XXH3_128bits_update(&h->state, data, n);
}

srv_cache_key_t srv_cache_hasher_final(const srv_cache_hasher_t *h) {
  XXH128_hash_t d = XXH3_128bits_digest(&h->state);
  return (srv_cache_key_t){.hi = d.high64, .lo = d.low64};
}

static void put_u64(srv_cache_hasher_t *h, uint64_t v) {
  srv_cache_hasher_update(h, &v, 8);
}

/* Length first, so that no two name sequences hash the same bytes. */
static void put_str(srv_cache_hasher_t *h, const char *s) {
  size_t n = strlen(s);
  put_u64(h, n);
  srv_cache_hasher_update(h, s, n);
}

/* One input's own hash; false when its data is not in host memory. */
static bool input_hash(uint64_t seed, const struct TRITONBACKEND_Input *in,
                       srv_cache_key_t *out) {
  srv_cache_hasher_t h;
  srv_cache_hasher_init(&h, seed ^ INPUT_SEED);
  put_str(&h, in->name);
  put_u64(&h, (uint64_t)in->datatype);
  put_u64(&h, in->dims_count);
  for (uint32_t d = 0; d < in->dims_count; d++) put_u64(&h, (uint64_t)in->shape[d]);
  put_u64(&h, in->byte_size);
  for (uint32_t i = 0; i < in->buffer_count; i++) {
    const srv_buffer_t *b = &in->buffers[i];
    if (b->memory_type == TRITONSERVER_MEMORY_GPU) return false;
    srv_cache_hasher_update(&h, b->base, b->size);
  }
  *out = srv_cache_hasher_final(&h);
  return true;
}

bool srv_cache_key_of(uint64_t seed, const char *model, int64_t version,
                      const TRITONBACKEND_Request *r, srv_cache_key_t *out) {
  /* Inputs and outputs are sets: their own hashes are added, so their
   * order in the request does not matter (names are unique in each). */
  uint64_t in_hi = 0, in_lo = 0, out_hi = 0, out_lo = 0;
  for (uint32_t i = 0; i < r->input_count; i++) {
    srv_cache_key_t k;
    if (!input_hash(seed, &r->inputs[i], &k)) return false;
    in_hi += k.hi;
    in_lo += k.lo;
  }
  for (uint32_t i = 0; i < r->output_count; i++) {
    srv_cache_hasher_t h;
    srv_cache_hasher_init(&h, seed ^ OUTPUT_SEED);
    put_str(&h, r->outputs[i]);
    srv_cache_key_t k = srv_cache_hasher_final(&h);
    out_hi += k.hi;
    out_lo += k.lo;
  }
  srv_cache_hasher_t h;
  srv_cache_hasher_init(&h, seed);
  put_str(&h, model);
  put_u64(&h, (uint64_t)version);
  put_u64(&h, r->input_count);
  put_u64(&h, in_hi);
  put_u64(&h, in_lo);
  put_u64(&h, r->output_count);
  put_u64(&h, out_hi);
  put_u64(&h, out_lo);
  *out = srv_cache_hasher_final(&h);
  return true;
}

/* Triton's keys are decimal 64-bit hashes; ours are 32 hex digits, so a
 * cache shared with Triton servers never mixes their entries. */
void srv_cache_key_text(const srv_cache_key_t *k, char text[33]) {
  snprintf(text, 33, "%016llx%016llx", (unsigned long long)k->hi,
           (unsigned long long)k->lo);
}
