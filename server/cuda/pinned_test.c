/* Pinned pools per NUMA node on a machine of any shape: binding memory to
 * a node, the thread's node and cudaHostAlloc are wrapped (ld --wrap, see
 * BUILD) so that pools of several nodes exist where this machine has one
 * node; the pools, the choice of pool and the fallback are the real ones,
 * over the mock runtime. The real binding to a real node is in
 * cuda_mock_test. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/common/host_policy.h"
#include "server/cuda/cuda.h"
#include "server/cuda/memory.h"
#include "test/unit/unit.h"

#define POOL_BYTES 4096

srv_status_t *__wrap_srv_host_policy_memory_enter(const char *policy, int node,
                                                  srv_host_policy_saved_t *saved);
void __wrap_srv_host_policy_leave(const srv_host_policy_saved_t *saved);
int __wrap_srv_host_policy_thread_node(void);
srv_status_t *__wrap_srv_cuda_host_alloc(size_t n, void **ptr);
srv_status_t *__real_srv_cuda_host_alloc(size_t n, void **ptr);

/* The fake machine: nodes 0, 1, 3 and 5 can be bound, 2 cannot; node 5's
 * cudaHostAlloc fails. Main thread only (init). */
static int bound_node = -1;
static int allocs[8], alloc_count; /* the bound node of each cudaHostAlloc */
static size_t alloc_bytes[8];
/* Each thread's node, as srv_host_policy_thread_node answers it. */
static _Thread_local int fake_node = -1;
static atomic_int node_asked;

srv_status_t *__wrap_srv_host_policy_memory_enter(const char *policy, int node,
                                                  srv_host_policy_saved_t *saved) {
  saved->cores = 0;
  saved->node = -1; /* the real leave would change nothing */
  if (node == 2)
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "host policy '%s': cannot bind memory to NUMA node %d: %s",
                          policy, node, "Invalid argument");
  bound_node = node;
  return NULL;
}

void __wrap_srv_host_policy_leave(const srv_host_policy_saved_t *saved) {
  (void)saved;
  bound_node = -1;
}

int __wrap_srv_host_policy_thread_node(void) {
  atomic_fetch_add_explicit(&node_asked, 1, memory_order_relaxed);
  return fake_node;
}

srv_status_t *__wrap_srv_cuda_host_alloc(size_t n, void **ptr) {
  if (alloc_count < 8) {
    alloc_bytes[alloc_count] = n;
    allocs[alloc_count++] = bound_node;
  }
  if (bound_node == 5)
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "cudaHostAlloc of %zu bytes failed: out of memory", n);
  return __real_srv_cuda_host_alloc(n, ptr);
}

/* Options with `policies` in place of the flags' (the fake nodes would not
 * pass the start's check against this machine). */
static void pools_init(const char *const *policies, size_t n) {
  srv_options_t opt;
  char *argv[] = {"nereid", "--pinned-memory-pool-byte-size=4096",
                  "--cuda-memory-pool-byte-size=0:0", "--cuda-memory-pool-byte-size=1:0",
                  NULL};
  REQUIRE(srv_options_parse(&opt, 4, argv) == NULL);
  char **kept = opt.host_policies;
  size_t kept_count = opt.host_policy_count;
  opt.host_policies = (char **)policies;
  opt.host_policy_count = n;
  alloc_count = 0;
  atomic_store_explicit(&node_asked, 0, memory_order_relaxed);
  srv_cuda_pools_init(&opt);
  opt.host_policies = kept;
  opt.host_policy_count = kept_count;
  srv_options_free(&opt);
}

/* n pinned bytes as a thread on `node` gets them; the node of the pool
 * they came from (SRV_CUDA_PINNED_NODE_NONE: host memory). */
static int alloc_on(int node, size_t n, void **p) {
  fake_node = node;
  *p = NULL;
  srv_status_t *st = srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, n, p);
  fake_node = -1;
  if (st != NULL || *p == NULL) {
    CHECK(!"pinned allocation failed");
    srv_status_free(st);
    return SRV_CUDA_PINNED_NODE_NONE;
  }
  memset(*p, 0x5a, n); /* host-addressable either way */
  return srv_cuda_pool_pinned_node(*p);
}

static void pinned_free(void *p) {
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, p);
}

static const char *const node_policies[] = {
    "a,numa-node=3", "b,numa-node=1", "b,numa-node=0", /* b's last: 0 */
    "c,numa-node=2",                                   /* cannot be bound */
    "d,numa-node=5",                                   /* cudaHostAlloc fails */
    "e,numa-node=3",                                   /* 3 again */
    "f,cpu-cores=0",
};

static void pools_per_named_node(void) {
  pools_init(node_policies, sizeof node_policies / sizeof node_policies[0]);
  /* Ascending, each with its node bound, each the flag's whole size; node
   * 1 (overridden) and node 2 (not bindable) get none. */
  REQUIRE(alloc_count == 3);
  CHECK_EQ_U64(allocs[0], 0);
  CHECK_EQ_U64(allocs[1], 3);
  CHECK_EQ_U64(allocs[2], 5);
  for (int i = 0; i < 3; i++) CHECK_EQ_U64(alloc_bytes[i], POOL_BYTES);
  CHECK(bound_node == -1);
  void *a, *b, *c, *d, *e, *f, *g;
  CHECK_EQ_U64(alloc_on(3, POOL_BYTES, &a), 3); /* the whole pool: not split */
  CHECK_EQ_U64(alloc_on(0, 1000, &b), 0);
  /* A node without a pool, a thread without a node, a node out of range:
   * the first pool, tritonserver's default. */
  CHECK_EQ_U64(alloc_on(1, 256, &c), 0);
  CHECK_EQ_U64(alloc_on(-1, 256, &d), 0);
  CHECK_EQ_U64(alloc_on(SRV_HOST_POLICY_NODES + 7, 256, &e), 0);
  /* Node 3's pool is full: host memory, not node 0's pool that has room.
   * Node 5's allocation failed: its threads get host memory too. */
  CHECK(alloc_on(3, 256, &f) == SRV_CUDA_PINNED_NODE_NONE);
  CHECK(alloc_on(5, 256, &g) == SRV_CUDA_PINNED_NODE_NONE);
  CHECK(atomic_load_explicit(&node_asked, memory_order_relaxed) == 7);
  /* Used: the sum over the pools, in 256-byte units. */
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0),
               POOL_BYTES + 1024 + 3 * 256);
  void *all[] = {a, b, c, d, e, f, g};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) pinned_free(all[i]);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0), 0);
  srv_cuda_pools_fini();
}

static void one_pool_asks_no_node(void) {
  /* No numa-node: the one pool, made unbound; no thread's node is read. */
  static const char *const cores[] = {"f,cpu-cores=0"};
  pools_init(cores, 1);
  REQUIRE(alloc_count == 1);
  CHECK_EQ_U64(allocs[0], (unsigned long long)-1);
  void *p, *q;
  CHECK(alloc_on(3, 512, &p) == SRV_CUDA_PINNED_NODE_ANY);
  CHECK(alloc_on(-1, 512, &q) == SRV_CUDA_PINNED_NODE_ANY);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0), 1024);
  pinned_free(p);
  pinned_free(q);
  srv_cuda_pools_fini();
  /* One named node: its pool serves every thread, still without asking. */
  static const char *const one[] = {"a,numa-node=3"};
  pools_init(one, 1);
  CHECK(alloc_on(-1, 512, &p) == 3);
  pinned_free(p);
  CHECK(atomic_load_explicit(&node_asked, memory_order_relaxed) == 0);
  srv_cuda_pools_fini();
}

enum { THREADS = 6, ROUNDS = 2000 };

typedef struct {
  int node, expect;
} worker_t;

/* Each thread, on its own node, allocates and frees small blocks; every
 * block must come from its node's pool (or host memory once that is full)
 * and keep what the thread wrote. */
static void *worker(void *arg) {
  worker_t *w = arg;
  fake_node = w->node;
  void *held[4] = {0};
  for (int r = 0; r < ROUNDS; r++) {
    void **slot = &held[r % 4];
    if (*slot != NULL) {
      CHECK(((unsigned char *)*slot)[0] == (unsigned char)w->node);
      srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, *slot);
      *slot = NULL;
      continue;
    }
    if (srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 200, slot) != NULL) {
      CHECK(!"pinned allocation failed");
      continue;
    }
    int node = srv_cuda_pool_pinned_node(*slot);
    CHECK(node == w->expect || node == SRV_CUDA_PINNED_NODE_NONE);
    *(unsigned char *)*slot = (unsigned char)w->node;
  }
  for (int i = 0; i < 4; i++)
    srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, held[i]);
  return NULL;
}

static void threads_use_their_nodes_pools(void) {
  pools_init(node_policies, sizeof node_policies / sizeof node_policies[0]);
  static const worker_t plan[THREADS] = {{0, 0}, {3, 3},  {1, 0},
                                         {3, 3}, {-1, 0}, {5, SRV_CUDA_PINNED_NODE_NONE}};
  worker_t w[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = plan[i];
    REQUIRE(pthread_create(&t[i], NULL, worker, &w[i]) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0), 0);
  srv_cuda_pools_fini();
}

UNIT_MAIN("pinned", UNIT_CASE(pools_per_named_node), UNIT_CASE(one_pool_asks_no_node),
          UNIT_CASE(threads_use_their_nodes_pools))
