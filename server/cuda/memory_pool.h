/* A bounded first-fit allocator over one fixed address range, knowing
 * nothing of CUDA: the range may be device memory, so the pool never reads
 * or writes it and keeps its bookkeeping beside it. Any thread: every call
 * takes the pool's mutex (a few hundred nanoseconds with few blocks). */
#ifndef NEREID_SERVER_CUDA_MEMORY_POOL_H
#define NEREID_SERVER_CUDA_MEMORY_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct srv_pool srv_pool_t;

/** Alignment of every allocation (and of the sizes handed out): CUDA's own
 *  cudaMalloc alignment, enough for any element type and vector loads. */
#define SRV_POOL_ALIGN 256

/** Most blocks (free and used) one pool tracks: bounds its bookkeeping and
 *  the cost of a call. Past it, an allocation that would split a block
 *  fails as if the pool were full. */
#define SRV_POOL_BLOCKS_MAX 16384

/** A pool over [base, base + size); the range's start is rounded up and
 *  its end down to SRV_POOL_ALIGN. NULL when less than one aligned unit
 *  remains. The caller keeps owning the range. */
srv_pool_t *srv_pool_new(uintptr_t base, size_t size, uint32_t max_blocks);

/** Frees the bookkeeping (not the range). Live allocations are forgotten. */
void srv_pool_delete(srv_pool_t *pool);

/** First fit: the lowest free block of at least n bytes (rounded up to
 *  SRV_POOL_ALIGN; 0 counts as one unit). False, nothing changed, when no
 *  block fits or the block table is full. */
bool srv_pool_alloc(srv_pool_t *pool, size_t n, uintptr_t *out);

/** Gives back an allocation; its free neighbours merge with it. False,
 *  nothing changed, when p is not the start of a live allocation. */
bool srv_pool_release(srv_pool_t *pool, uintptr_t p);

/** Whether p lies in the pool's range (allocated or not). No lock. */
bool srv_pool_owns(const srv_pool_t *pool, uintptr_t p);

/** Bytes handed out now, capacity, and blocks tracked (for tests and logs). */
size_t srv_pool_used(srv_pool_t *pool);
size_t srv_pool_capacity(const srv_pool_t *pool);
uint32_t srv_pool_block_count(srv_pool_t *pool);

#endif
