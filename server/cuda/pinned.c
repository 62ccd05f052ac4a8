/* Pinned host pools per NUMA node (see pinned.h). The table is written by
 * the main thread in init, before any model thread exists, and only read
 * afterwards; each pool has its own lock. */
#include "server/cuda/pinned.h"

#include <stdint.h>
#include <stdlib.h>

#include "server/common/host_policy.h"
#include "server/common/log.h"
#include "server/cuda/cuda.h"
#include "server/cuda/memory_pool.h"

typedef struct {
  srv_pool_t *pool; /* NULL: cudaHostAlloc failed; the node's threads fall back */
  void *base;       /* what cudaHostAlloc gave */
  int node;         /* SRV_CUDA_PINNED_NODE_ANY without host policies */
} pinned_pool_t;

/* Ascending by node: the first is tritonserver's default, the pool of a
 * thread whose node has none. */
static pinned_pool_t *pools;
static size_t pool_count;
static uint64_t pool_bytes; /* each pool's size, as the first server asked */
/* A node's pool index + 1; 0: the node has no pool. */
static uint16_t node_slot[SRV_HOST_POLICY_NODES];

_Static_assert(SRV_HOST_POLICY_NODES < UINT16_MAX, "node_slot holds an index + 1");

/* One cudaHostAlloc of `bytes` made into a pool; false, logged, when the
 * runtime refuses it or it is too small to hold one aligned unit. */
static bool pool_make(uint64_t bytes, pinned_pool_t *p) {
  srv_status_t *st = srv_cuda_host_alloc(bytes, &p->base);
  if (st != NULL) {
    SRV_WARN(
        "Unable to allocate pinned system memory, pinned memory pool will not be "
        "available: %s",
        srv_status_message(st));
    srv_status_free(st);
    return false;
  }
  p->pool = srv_pool_new((uintptr_t)p->base, bytes, SRV_POOL_BLOCKS_MAX);
  if (p->pool == NULL) {
    SRV_WARN("Pinned memory pool disabled: %llu bytes is too small",
             (unsigned long long)bytes);
    srv_cuda_host_free(p->base);
    p->base = NULL;
    return false;
  }
  return true;
}

/* A node's pool, allocated with the main thread's memory bound to the node
 * so that its pages (and the pool's bookkeeping) land there. A node that
 * cannot be bound gets no pool, as in tritonserver: its threads use the
 * first pool. One whose allocation fails keeps an empty entry: its
 * threads get host memory, also as there. */
static void node_pool_add(int node, uint64_t bytes) {
  srv_host_policy_saved_t saved;
  srv_status_t *st = srv_host_policy_memory_enter("pinned memory pool", node, &saved);
  if (st != NULL) {
    SRV_WARN("Unable to allocate pinned system memory for NUMA node %d: %s", node,
             srv_status_message(st));
    srv_status_free(st);
    return;
  }
  pinned_pool_t p = {.node = node};
  bool made = pool_make(bytes, &p);
  srv_host_policy_leave(&saved);
  if (made)
    SRV_INFO("Pinned memory pool is created at '%p' with size %llu (NUMA node %d)",
             p.base, (unsigned long long)bytes, node);
  pools[pool_count++] = p;
  node_slot[node] = (uint16_t)pool_count;
}

void srv_pinned_pools_init(const srv_options_t *opt) {
  uint64_t bytes = opt->pinned_memory_pool_byte_size;
  if (pools != NULL) return; /* made already (srv_cuda_pools_init warns) */
  pool_bytes = bytes;
  if (bytes == 0) {
    SRV_INFO("Pinned memory pool disabled");
    return;
  }
  int nodes[SRV_HOST_POLICY_NODES];
  size_t n = srv_host_policy_nodes(opt->host_policies, opt->host_policy_count, nodes,
                                   SRV_HOST_POLICY_NODES);
  pools = calloc(n > 0 ? n : 1, sizeof *pools);
  if (pools == NULL) SRV_FATAL("out of memory");
  if (n == 0) {
    pinned_pool_t p = {.node = SRV_CUDA_PINNED_NODE_ANY};
    if (!pool_make(bytes, &p)) return;
    SRV_INFO("Pinned memory pool is created at '%p' with size %llu", p.base,
             (unsigned long long)bytes);
    pools[pool_count++] = p;
    return;
  }
  /* The flag's size for each node, as tritonserver: repeated, not split. */
  for (size_t i = 0; i < n; i++) node_pool_add(nodes[i], bytes);
}

void srv_pinned_pools_fini(void) {
  for (size_t i = 0; i < pool_count; i++) {
    if (pools[i].node >= 0) node_slot[pools[i].node] = 0;
    srv_pool_delete(pools[i].pool);
    srv_cuda_host_free(pools[i].base);
  }
  free(pools);
  pools = NULL;
  pool_count = 0;
}

bool srv_pinned_pools_exist(void) { return pool_count > 0; }

uint64_t srv_pinned_pools_size(void) { return pool_bytes; }

/* The calling thread's pool. With one pool there is nothing to choose and
 * no thread-local read, as tritonserver asks the thread's node only when
 * there are several. */
static pinned_pool_t *pool_of_thread(void) {
  if (pool_count <= 1) return pool_count == 1 ? &pools[0] : NULL;
  int node = srv_host_policy_thread_node();
  uint16_t slot = node >= 0 && node < SRV_HOST_POLICY_NODES ? node_slot[node] : 0;
  return &pools[slot > 0 ? slot - 1 : 0];
}

bool srv_pinned_alloc(size_t n, void **ptr) {
  pinned_pool_t *p = pool_of_thread();
  uintptr_t at;
  if (p == NULL || p->pool == NULL || !srv_pool_alloc(p->pool, n, &at)) return false;
  *ptr = (void *)at;
  return true;
}

/* The pool whose range holds ptr; NULL when none. A scan: one pool per
 * named node, a handful. */
static pinned_pool_t *pool_owning(const void *ptr) {
  for (size_t i = 0; i < pool_count; i++)
    if (pools[i].pool != NULL && srv_pool_owns(pools[i].pool, (uintptr_t)ptr))
      return &pools[i];
  return NULL;
}

bool srv_pinned_release(void *ptr) {
  pinned_pool_t *p = pool_owning(ptr);
  if (p == NULL) return false;
  if (!srv_pool_release(p->pool, (uintptr_t)ptr))
    SRV_ERROR("freeing pinned memory %p that its pool did not give", ptr);
  return true;
}

int srv_pinned_node(const void *ptr) {
  pinned_pool_t *p = pool_owning(ptr);
  return p != NULL ? p->node : SRV_CUDA_PINNED_NODE_NONE;
}

size_t srv_pinned_used(void) {
  size_t used = 0;
  for (size_t i = 0; i < pool_count; i++)
    if (pools[i].pool != NULL) used += srv_pool_used(pools[i].pool);
  return used;
}
