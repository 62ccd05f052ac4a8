/* The server's GPU and pinned memory: one pool per GPU (cudaMalloc'd at
 * start-up, --cuda-memory-pool-byte-size) and pinned host pools
 * (cudaHostAlloc'd, --pinned-memory-pool-byte-size each): one, or one per
 * NUMA node that a host policy names (pinned.h). Process-wide, as
 * Triton's: the backend memory manager has no server to hang them on.
 * Alloc and free from any thread; init and fini from the main thread,
 * before the first and after the last model. See cuda.md. */
#ifndef NEREID_SERVER_CUDA_MEMORY_H
#define NEREID_SERVER_CUDA_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/options.h"
#include "triton/core/tritonserver.h"

/** Triton's defaults: 64 MiB per GPU, 256 MiB pinned. */
#define SRV_CUDA_POOL_DEFAULT_BYTES (64ull << 20)
#define SRV_PINNED_POOL_DEFAULT_BYTES (256ull << 20)

/** For each server at its start. The first creates the pools when CUDA
 *  devices exist, sized by its options
 *  (srv_options_cuda_pool_bytes, pinned_memory_pool_byte_size; 0: no pool);
 *  without CUDA it only logs why and returns. A pool that cannot be
 *  allocated is logged and left out, as Triton does; never fails. A later
 *  server, while one has the pools, keeps them and logs Triton's warnings
 *  (its sizes are not used). */
void srv_cuda_pools_init(const srv_options_t *opt);

/** For each server at its end: the last one frees the pools; allocations
 *  still out become invalid. */
void srv_cuda_pools_fini(void);

/** n bytes of `type` memory:
 *  - TRITONSERVER_MEMORY_GPU: from `device`'s pool. UNAVAILABLE without
 *    CUDA (with the reason) or when that GPU has no pool; INVALID_ARGUMENT
 *    for a device the server does not have; INTERNAL, "Failed to allocate
 *    CUDA memory with byte size N on GPU D: out of memory", when the pool
 *    is full (as Triton: no cudaMalloc fallback, a pool is the bound).
 *  - TRITONSERVER_MEMORY_CPU_PINNED: from the pinned pool of the calling
 *    thread's NUMA node (the first pool when it has none); ordinary host
 *    memory when there is no pool (no CUDA) or it is full, as Triton's
 *    non-pinned fallback. Either way host-addressable.
 *  - TRITONSERVER_MEMORY_CPU: malloc.
 *  Any thread. */
srv_status_t *srv_cuda_pool_alloc(TRITONSERVER_MemoryType type, int64_t device, size_t n,
                                  void **ptr);

/** Frees what srv_cuda_pool_alloc gave with the same type and device; NULL
 *  is a no-op. A pointer that the pool does not know is logged, not freed. */
void srv_cuda_pool_free(TRITONSERVER_MemoryType type, int64_t device, void *ptr);

/** Whether ptr lies in a pinned pool: what srv_cuda_pool_alloc gave for
 *  TRITONSERVER_MEMORY_CPU_PINNED is really pinned, not the fallback (a
 *  caller reporting the memory type it got says CPU otherwise). No lock. */
bool srv_cuda_pool_pinned(const void *ptr);

/** The NUMA node of the pinned pool that ptr lies in (a host policy's
 *  numa-node); SRV_CUDA_PINNED_NODE_ANY for the one pool made when no
 *  policy names a node; SRV_CUDA_PINNED_NODE_NONE when ptr lies in no
 *  pinned pool. No lock. For tests and logs. */
#define SRV_CUDA_PINNED_NODE_ANY (-1)
#define SRV_CUDA_PINNED_NODE_NONE (-2)
int srv_cuda_pool_pinned_node(const void *ptr);

/** Bytes in use in `device`'s pool (type GPU) or in the pinned pools (all
 *  nodes together, as tritonserver counts them); 0 when there is no such
 *  pool. For tests and statistics. */
size_t srv_cuda_pool_used(TRITONSERVER_MemoryType type, int64_t device);

#endif
