/* Fixed-size block pools for objects made and freed once per request (the
 * gRPC call, the request's shared state, the response): per-thread caches
 * in front of one mutex-protected depot per pool. Any thread may allocate
 * and free; each thread touches only its own cache, and the depot takes
 * its lock once per batch. See block_pool.md. */
#ifndef NEREID_SERVER_COMMON_BLOCK_POOL_H
#define NEREID_SERVER_COMMON_BLOCK_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** Most pools a process may have (each takes a slot in every thread's
 *  cache); one more is fatal. */
#define SRV_BLOCK_POOL_SLOTS 8

/** A pool of blocks of one size. Define it with static storage duration
 *  (pools are never destroyed: threads' caches refer to them until they
 *  exit) and SRV_BLOCK_POOL_INIT; its fields are the pool's own. */
typedef struct srv_block_pool {
  /* Set by SRV_BLOCK_POOL_INIT, read-only after. */
  size_t size;        /* bytes of a block: at least 32, a multiple of 16 */
  uint32_t batch;     /* blocks moved at once between a cache and the depot */
  uint32_t depot_max; /* full chains the depot keeps; more go to free() */
  /* The slot of this pool in every thread's cache; 0 until the first use
   * registers it (under the registration lock). */
  _Atomic uint32_t slot;
  /* The depot, under `mu`: a stack of chains of blocks. */
  pthread_mutex_t mu;
  void *chains;
  uint32_t chain_count;
  uint64_t depot_blocks;
} srv_block_pool_t;

/** The initializer of a pool of `bytes`-byte blocks (16-byte aligned);
 *  each thread caches at most 2 * batch of them, the depot at most
 *  depot_chains * batch. batch >= 1. */
#define SRV_BLOCK_POOL_INIT(bytes, batch_, depot_chains)                \
  {                                                                     \
    .size = (bytes) < 32 ? 32 : ((size_t)(bytes) + 15u) & ~(size_t)15u, \
    .batch = (batch_), .depot_max = (depot_chains), .slot = 0,          \
    .mu = PTHREAD_MUTEX_INITIALIZER, .chains = NULL, .chain_count = 0,  \
    .depot_blocks = 0,                                                  \
  }

/** A block of pool->size bytes, 16-byte aligned, contents undefined. Any
 *  thread; never NULL (out of memory is fatal). Steady state pops the
 *  calling thread's cache: no lock, no malloc. An empty cache takes a
 *  chain from the depot under its lock, or mallocs one block when the
 *  depot is empty too. The caller owns the block until it frees it. */
void *srv_block_pool_alloc(srv_block_pool_t *pool);

/** Returns a block of `pool` (from srv_block_pool_alloc on any thread).
 *  Any thread: the block goes to the calling thread's cache. A full cache
 *  (2 * batch) hands its older batch to the depot, and a full depot
 *  frees that batch. A block freed twice is fatal under ASan (free
 *  blocks are poisoned there), undefined elsewhere. */
void srv_block_pool_free(srv_block_pool_t *pool, void *block);

/** Moves every cache of the calling thread (all pools) to the depots.
 *  Threads do so by themselves at exit (a pthread key destructor); main
 *  calls it before srv_block_pool_trim to give everything back. */
void srv_block_pool_flush(void);

/** Frees the depot's blocks. Any thread, any time: later allocations
 *  refill it. Blocks in use or in live threads' caches are not touched. */
void srv_block_pool_trim(srv_block_pool_t *pool);

/** Blocks in the calling thread's cache of `pool` (tests, statistics). */
uint32_t srv_block_pool_cached(srv_block_pool_t *pool);

/** Blocks in `pool`'s depot (tests, statistics). Takes the depot lock. */
uint64_t srv_block_pool_depot_blocks(srv_block_pool_t *pool);

#endif
