/* Open-addressing hash map from correlation ID to accumulator (see
 * seq_corrid_map.h). Linear probing over a table at least twice the
 * capacity, so probes stay short; deletion shifts later entries back
 * instead of leaving tombstones. The owning instance's thread only. */
#include "backends/sequence/seq_corrid_map.h"

#include <stdlib.h>

typedef struct {
  uint64_t key;
  uint64_t stepped; /* value of the map's clock at the last put */
  int32_t acc;
  bool used;
} entry_t;

struct seq_corrid_map {
  entry_t *table;
  uint32_t mask; /* table size - 1; the size is a power of two */
  uint32_t capacity, count;
  uint64_t clock; /* counts puts: the order in which sequences were stepped */
};

/* splitmix64's finalizer: IDs are often consecutive numbers, which would
 * otherwise fill neighbouring slots. */
static uint32_t home(const seq_corrid_map_t *m, uint64_t key) {
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9u;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebu;
  key ^= key >> 31;
  return (uint32_t)key & m->mask;
}

seq_corrid_map_t *seq_corrid_map_new(uint32_t capacity) {
  if (capacity < 1) capacity = 1;
  if (capacity > SEQ_CORRID_MAP_MAX) capacity = SEQ_CORRID_MAP_MAX;
  uint32_t size = 2;
  while (size < 2 * capacity) size *= 2;
  seq_corrid_map_t *m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->table = calloc(size, sizeof *m->table);
  if (m->table == NULL) {
    free(m);
    return NULL;
  }
  m->mask = size - 1;
  m->capacity = capacity;
  return m;
}

void seq_corrid_map_free(seq_corrid_map_t *m) {
  if (m == NULL) return;
  free(m->table);
  free(m);
}

/* The slot holding key, or the empty slot where its probe ends. The table
 * always has empty slots (count <= capacity <= size / 2). */
static uint32_t find(const seq_corrid_map_t *m, uint64_t key) {
  uint32_t i = home(m, key);
  while (m->table[i].used && m->table[i].key != key) i = (i + 1) & m->mask;
  return i;
}

bool seq_corrid_map_get(const seq_corrid_map_t *m, uint64_t key, int32_t *acc) {
  const entry_t *e = &m->table[find(m, key)];
  if (!e->used) return false;
  *acc = e->acc;
  return true;
}

/* Empties slot i and moves back the entries after it whose probe passed
 * over i, so that every remaining key is still found from its home. */
static void remove_at(seq_corrid_map_t *m, uint32_t i) {
  uint32_t j = i;
  for (;;) {
    j = (j + 1) & m->mask;
    if (!m->table[j].used) break;
    uint32_t k = home(m, m->table[j].key);
    /* The entry at j may stay when its home k lies cyclically in (i, j]. */
    bool stays = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    m->table[i] = m->table[j];
    i = j;
  }
  m->table[i].used = false;
  m->count--;
}

/* Drops the sequence stepped least recently: a full scan, but only when a
 * new sequence arrives at a full map, which the server's candidate limit
 * makes rare. */
static void evict_oldest(seq_corrid_map_t *m) {
  uint32_t oldest = 0;
  bool found = false;
  for (uint32_t i = 0; i <= m->mask; i++) {
    if (m->table[i].used && (!found || m->table[i].stepped < m->table[oldest].stepped)) {
      oldest = i;
      found = true;
    }
  }
  if (found) remove_at(m, oldest);
}

bool seq_corrid_map_put(seq_corrid_map_t *m, uint64_t key, int32_t acc) {
  uint32_t i = find(m, key);
  bool evicted = false;
  if (!m->table[i].used) {
    if (m->count == m->capacity) {
      evict_oldest(m);
      evicted = true;
      i = find(m, key); /* entries may have moved */
    }
    m->table[i].used = true;
    m->table[i].key = key;
    m->count++;
  }
  m->table[i].acc = acc;
  m->table[i].stepped = ++m->clock;
  return evicted;
}

void seq_corrid_map_remove(seq_corrid_map_t *m, uint64_t key) {
  uint32_t i = find(m, key);
  if (m->table[i].used) remove_at(m, i);
}

uint32_t seq_corrid_map_count(const seq_corrid_map_t *m) { return m->count; }
