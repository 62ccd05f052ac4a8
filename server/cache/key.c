/* The request key (key.h). The hash is a small keyed multiply-rotate
 * design with a strong final mix on each lane; it need not be
 * cryptographic: the seed is drawn per process (cache.c), so an outside
 * client cannot aim at a collision it has computed in advance, and two
 * lanes make accidental collisions negligible (2^-128 per pair, where
 * Triton's single 64-bit hash gives 2^-64). */
#include "server/cache/key.h"

#include <stdio.h>
#include <string.h>

static const uint64_t K1 = 0x9e3779b97f4a7c15ull, K2 = 0xc2b2ae3d27d4eb4full,
                      K3 = 0x165667b19e3779f9ull, K4 = 0xd6e8feb86659fd93ull;

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* A bijective avalanche step: every input bit flips about half the output. */
static inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static inline void absorb(srv_cache_hasher_t *h, uint64_t w) {
  h->a = rotl(h->a ^ (w * K1), 31) * K2;
  h->b = rotl(h->b + (w ^ K3), 27) * K4 + h->a;
}

void srv_cache_hasher_init(srv_cache_hasher_t *h, uint64_t seed) {
  *h = (srv_cache_hasher_t){.a = mix(seed ^ K1), .b = mix(seed + K4)};
}

void srv_cache_hasher_update(srv_cache_hasher_t *h, const void *data, size_t n) {
  const unsigned char *p = data;
  h->len += n;
  while (n > 0 && h->tail_len != 0) { /* finish the word a previous call began */
    h->tail |= (uint64_t)*p++ << (8 * h->tail_len);
    n--;
    if (++h->tail_len == 8) {
      absorb(h, h->tail);
      h->tail = 0;
      h->tail_len = 0;
    }
  }
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8); /* the host's order: keys never leave the process */
    absorb(h, w);
  }
  for (; n > 0; n--) h->tail |= (uint64_t)*p++ << (8 * h->tail_len++);
}

srv_cache_key_t srv_cache_hasher_final(const srv_cache_hasher_t *h) {
  srv_cache_hasher_t x = *h;
  /* The tail, then the length: "ab" and "ab\0" differ by the length. */
  absorb(&x, x.tail);
  absorb(&x, x.len);
  uint64_t a = mix(x.a ^ rotl(x.b, 17)), b = mix(x.b + a);
  return (srv_cache_key_t){.hi = a, .lo = b};
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
  srv_cache_hasher_init(&h, seed ^ K2);
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
    srv_cache_hasher_init(&h, seed ^ K3);
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
