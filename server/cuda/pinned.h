/* The pinned (page-locked) host memory pools, private to server/cuda:
 * one pool without host policies, else one per NUMA node that a policy's
 * numa-node names, each allocated while the main thread's memory is bound
 * to its node, as tritonserver's PinnedMemoryManager. A thread allocates
 * from its own node's pool. Init and fini on the main thread, before the
 * first and after the last model; the rest from any thread. See cuda.md,
 * "Pinned pools per NUMA node". */
#ifndef NEREID_SERVER_CUDA_PINNED_H
#define NEREID_SERVER_CUDA_PINNED_H

#include <stdbool.h>
#include <stddef.h>

#include "server/cuda/memory.h"
#include "server/options.h"

/** Makes the pools of --pinned-memory-pool-byte-size bytes each (0: none);
 *  only once CUDA devices were found. A pool that cannot be made is
 *  logged and left out; never fails. */
void srv_pinned_pools_init(const srv_options_t *opt);

/** Frees the pools; allocations still out become invalid. */
void srv_pinned_pools_fini(void);

/** Whether there is at least one pinned pool (for the fallback's warning). */
bool srv_pinned_pools_exist(void);

/** The byte size each pool was made with (the first server's setting). */
uint64_t srv_pinned_pools_size(void);

/** n bytes from the pool of the calling thread's NUMA node (the first
 *  pool when it has none or its node has no pool). False when that pool
 *  is full or could not be allocated: the caller falls back to host
 *  memory, as Triton does, without trying another node's pool. */
bool srv_pinned_alloc(size_t n, void **ptr);

/** Gives back what srv_pinned_alloc gave. False when ptr lies in no pool;
 *  a pointer inside a pool that is not a live allocation is logged. */
bool srv_pinned_release(void *ptr);

/** The node of the pool ptr lies in, SRV_CUDA_PINNED_NODE_ANY for the pool
 *  made without host policies, SRV_CUDA_PINNED_NODE_NONE outside every
 *  pool. No lock. */
int srv_pinned_node(const void *ptr);

/** Bytes in use over all pools (tritonserver sums them too). */
size_t srv_pinned_used(void);

#endif
