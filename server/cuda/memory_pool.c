/* First-fit pool (see memory_pool.h): the range is a sorted array of
 * blocks that tile it without gaps; neighbours in the array are neighbours
 * in memory, so coalescing is a look left and right. Any thread, under the
 * pool's mutex. */
#include "server/cuda/memory_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

typedef struct {
  uintptr_t start;
  size_t size;
  bool used;
} block_t;

struct srv_pool {
  /* Fixed at creation: read without the lock. */
  uintptr_t base;
  size_t capacity;
  uint32_t max_blocks;
  pthread_mutex_t lock;
  /* Guarded by lock. The array is sized once (max_blocks), so no call
   * allocates. */
  block_t *blocks;
  uint32_t count;
  size_t used;
};

srv_pool_t *srv_pool_new(uintptr_t base, size_t size, uint32_t max_blocks) {
  uintptr_t start = (base + SRV_POOL_ALIGN - 1) & ~(uintptr_t)(SRV_POOL_ALIGN - 1);
  if (start < base || size < start - base) return NULL;
  size_t usable = (size - (start - base)) & ~(size_t)(SRV_POOL_ALIGN - 1);
  if (usable == 0 || max_blocks == 0) return NULL;
  if (max_blocks > SRV_POOL_BLOCKS_MAX) max_blocks = SRV_POOL_BLOCKS_MAX;
  srv_pool_t *pool = calloc(1, sizeof *pool);
  if (pool == NULL) SRV_FATAL("out of memory");
  pool->blocks = calloc(max_blocks, sizeof *pool->blocks);
  if (pool->blocks == NULL) SRV_FATAL("out of memory");
  pool->base = start;
  pool->capacity = usable;
  pool->max_blocks = max_blocks;
  pool->blocks[0] = (block_t){.start = start, .size = usable, .used = false};
  pool->count = 1;
  pthread_mutex_init(&pool->lock, NULL);
  return pool;
}

void srv_pool_delete(srv_pool_t *pool) {
  if (pool == NULL) return;
  pthread_mutex_destroy(&pool->lock);
  free(pool->blocks);
  free(pool);
}

bool srv_pool_alloc(srv_pool_t *pool, size_t n, uintptr_t *out) {
  if (n == 0) n = 1;
  if (n > pool->capacity) return false; /* also keeps the rounding from wrapping */
  size_t need = (n + SRV_POOL_ALIGN - 1) & ~(size_t)(SRV_POOL_ALIGN - 1);
  bool ok = false;
  pthread_mutex_lock(&pool->lock);
  for (uint32_t i = 0; i < pool->count; i++) {
    block_t *b = &pool->blocks[i];
    if (b->used || b->size < need) continue;
    if (b->size > need) {
      /* The rest stays free as a new block right after this one. */
      if (pool->count == pool->max_blocks) continue; /* an exact fit may follow */
      memmove(b + 2, b + 1, (pool->count - i - 1) * sizeof *b);
      b[1] = (block_t){.start = b->start + need, .size = b->size - need, .used = false};
      b->size = need;
      pool->count++;
    }
    b->used = true;
    pool->used += b->size;
    *out = b->start;
    ok = true;
    break;
  }
  pthread_mutex_unlock(&pool->lock);
  return ok;
}

/* The index of the block that starts at p, or count when none does. */
static uint32_t block_find(const srv_pool_t *pool, uintptr_t p) {
  uint32_t lo = 0, hi = pool->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (pool->blocks[mid].start < p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < pool->count && pool->blocks[lo].start == p ? lo : pool->count;
}

/* Folds block i + 1 into block i (both free). */
static void block_merge_next(srv_pool_t *pool, uint32_t i) {
  pool->blocks[i].size += pool->blocks[i + 1].size;
  memmove(&pool->blocks[i + 1], &pool->blocks[i + 2],
          (pool->count - i - 2) * sizeof pool->blocks[0]);
  pool->count--;
}

bool srv_pool_release(srv_pool_t *pool, uintptr_t p) {
  if (!srv_pool_owns(pool, p)) return false;
  pthread_mutex_lock(&pool->lock);
  uint32_t i = block_find(pool, p);
  bool ok = i < pool->count && pool->blocks[i].used;
  if (ok) {
    pool->blocks[i].used = false;
    pool->used -= pool->blocks[i].size;
    if (i + 1 < pool->count && !pool->blocks[i + 1].used) block_merge_next(pool, i);
    if (i > 0 && !pool->blocks[i - 1].used) block_merge_next(pool, i - 1);
  }
  pthread_mutex_unlock(&pool->lock);
  return ok;
}

bool srv_pool_owns(const srv_pool_t *pool, uintptr_t p) {
  return p >= pool->base && p - pool->base < pool->capacity;
}

size_t srv_pool_used(srv_pool_t *pool) {
  pthread_mutex_lock(&pool->lock);
  size_t used = pool->used;
  pthread_mutex_unlock(&pool->lock);
  return used;
}

size_t srv_pool_capacity(const srv_pool_t *pool) { return pool->capacity; }

uint32_t srv_pool_block_count(srv_pool_t *pool) {
  pthread_mutex_lock(&pool->lock);
  uint32_t count = pool->count;
  pthread_mutex_unlock(&pool->lock);
  return count;
}
