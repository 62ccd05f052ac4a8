/* Sequences by correlation ID (see sequence_map.h). */
#include "server/sched/sequence_map.h"

#include <ck_hs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

struct srv_seq_map {
  ck_hs_t hs;
  uint64_t count;
};

/* FNV-1a over the ID's bytes, mixed with ck's seed. */
static unsigned long id_hash(const srv_seq_t *s, unsigned long seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  const unsigned char *p = s->id_string != NULL ? (const unsigned char *)s->id_string
                                                : (const unsigned char *)&s->id;
  size_t n = s->id_string != NULL ? s->id_len : sizeof s->id;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return (unsigned long)(h ^ (s->id_string != NULL));
}

static unsigned long hs_hash(const void *object, unsigned long seed) {
  return id_hash(object, seed);
}

static bool hs_equal(const void *a, const void *b) {
  const srv_seq_t *x = a, *y = b;
  if ((x->id_string == NULL) != (y->id_string == NULL)) return false;
  if (x->id_string == NULL) return x->id == y->id;
  return x->id_len == y->id_len && memcmp(x->id_string, y->id_string, x->id_len) == 0;
}

static void *hs_malloc(size_t size) { return malloc(size); }
static void hs_free(void *p, size_t size, bool defer) {
  (void)size;
  (void)defer; /* one thread: nothing reads concurrently, free at once */
  free(p);
}
static struct ck_malloc hs_allocator = {.malloc = hs_malloc, .free = hs_free};

srv_seq_map_t *srv_seq_map_new(void) {
  srv_seq_map_t *map = calloc(1, sizeof *map);
  if (map == NULL) SRV_FATAL("out of memory");
  if (!ck_hs_init(&map->hs, CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC | CK_HS_MODE_DELETE,
                  hs_hash, hs_equal, &hs_allocator, 64, 0x6e657265u))
    SRV_FATAL("out of memory");
  return map;
}

void srv_seq_map_free(srv_seq_map_t *map) {
  if (map == NULL) return;
  ck_hs_iterator_t it = CK_HS_ITERATOR_INITIALIZER;
  void *object;
  while (ck_hs_next(&map->hs, &it, &object)) srv_seq_free_one(object);
  ck_hs_destroy(&map->hs);
  free(map);
}

void srv_seq_key_of(srv_seq_map_t *map, const TRITONBACKEND_Request *r, srv_seq_t *key) {
  memset(key, 0, sizeof *key);
  if (r->correlation_id_string != NULL) {
    key->id_string = (char *)r->correlation_id_string;
    key->id_len = (uint32_t)strlen(r->correlation_id_string);
  } else {
    key->id = r->correlation_id;
  }
  key->hash = CK_HS_HASH(&map->hs, hs_hash, key);
}

srv_seq_t *srv_seq_map_get(srv_seq_map_t *map, const srv_seq_t *key) {
  return ck_hs_get(&map->hs, key->hash, key);
}

srv_seq_t *srv_seq_map_add(srv_seq_map_t *map, const srv_seq_t *key) {
  srv_seq_t *s = calloc(1, sizeof *s);
  if (s == NULL) SRV_FATAL("out of memory");
  s->id = key->id;
  s->id_len = key->id_len;
  s->hash = key->hash;
  if (key->id_string != NULL) {
    s->id_string = malloc(key->id_len + 1u);
    if (s->id_string == NULL) SRV_FATAL("out of memory");
    memcpy(s->id_string, key->id_string, key->id_len);
    s->id_string[key->id_len] = '\0';
  }
  if (!ck_hs_put(&map->hs, s->hash, s)) SRV_FATAL("out of memory");
  s->mapped = true;
  map->count++;
  return s;
}

void srv_seq_map_remove(srv_seq_map_t *map, srv_seq_t *s) {
  if (!s->mapped) return;
  ck_hs_remove(&map->hs, s->hash, s);
  s->mapped = false;
  map->count--;
}

void srv_seq_free_one(srv_seq_t *s) {
  free(s->id_string);
  free(s);
}

uint64_t srv_seq_map_count(const srv_seq_map_t *map) { return map->count; }

void srv_seq_id_print(const srv_seq_t *s, char *buf, size_t size) {
  if (s->id_string != NULL)
    snprintf(buf, size, "%.*s", (int)s->id_len, s->id_string);
  else
    snprintf(buf, size, "%llu", (unsigned long long)s->id);
}
