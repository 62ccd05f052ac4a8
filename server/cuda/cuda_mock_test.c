/* The server's GPU path against a stand-in runtime with two mock GPUs
 * (test/cuda_mock, first on LD_LIBRARY_PATH): device count, pools on each
 * GPU, the memory manager, copies. KIND_GPU groups against the same mock:
 * server/model/model_gpu_test.c; what only a real GPU shows (kernels, IPC)
 * is in test/e2e/gpu_test.py. */
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/host_policy.h"
#include "server/cuda/cuda.h"
#include "server/cuda/memory.h"
#include "test/unit/unit.h"
#include "triton/core/tritonbackend.h"

static void mock_gpus_are_found(void) {
  const char *why = NULL;
  int n = srv_cuda_device_count(&why);
  if (n != 2) fprintf(stderr, "  device count %d: %s\n", n, why ? why : "");
  REQUIRE(n == 2);
  CHECK(srv_cuda_set_device(1) == NULL);
  srv_status_t *st = srv_cuda_set_device(2);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  srv_status_free(st);
  int major = 0, minor = 0;
  CHECK(srv_cuda_compute_capability(0, &major, &minor) == NULL);
  CHECK_EQ_U64(major, 9);
  char handle[SRV_CUDA_IPC_HANDLE_SIZE] = {0};
  void *p;
  uint64_t size;
  st = srv_cuda_ipc_open(0, handle, &p, &size);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(srv_status_message(st), "invalid resource handle") != NULL);
  srv_status_free(st);
}

static void pools_per_gpu_and_pinned(void) {
  srv_options_t opt;
  char *argv[] = {"nereid", "--cuda-memory-pool-byte-size=0:4096",
                  "--cuda-memory-pool-byte-size=1:0",
                  "--pinned-memory-pool-byte-size=4096", NULL};
  REQUIRE(srv_options_parse(&opt, 4, argv) == NULL);
  srv_cuda_pools_init(&opt);
  TRITONBACKEND_MemoryManager *mm = NULL;
  REQUIRE(TRITONBACKEND_BackendMemoryManager(NULL, &mm) == NULL);
  void *a = NULL, *b = NULL;
  REQUIRE(TRITONBACKEND_MemoryManagerAllocate(mm, &a, TRITONSERVER_MEMORY_GPU, 0, 3000) ==
          NULL);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 3072); /* 256-aligned */
  /* Full: no cudaMalloc beyond the pool, Triton's text. */
  TRITONSERVER_Error *err =
      TRITONBACKEND_MemoryManagerAllocate(mm, &b, TRITONSERVER_MEMORY_GPU, 0, 2048);
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_INTERNAL);
  CHECK(strstr(TRITONSERVER_ErrorMessage(err),
               "Failed to allocate CUDA memory with byte size 2048 on GPU 0") != NULL);
  TRITONSERVER_ErrorDelete(err);
  /* GPU 1 has no pool (size 0); GPU 2 does not exist. */
  err = TRITONBACKEND_MemoryManagerAllocate(mm, &b, TRITONSERVER_MEMORY_GPU, 1, 8);
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_UNAVAILABLE);
  TRITONSERVER_ErrorDelete(err);
  err = TRITONBACKEND_MemoryManagerAllocate(mm, &b, TRITONSERVER_MEMORY_GPU, 2, 8);
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(strstr(TRITONSERVER_ErrorMessage(err), "this server has 2 GPUs") != NULL);
  TRITONSERVER_ErrorDelete(err);
  /* A copy in and out of the (mock) GPU buffer. */
  char src[16] = "on the mock gpu", back[16] = {0};
  CHECK(srv_cuda_copy(a, TRITONSERVER_MEMORY_GPU, src, TRITONSERVER_MEMORY_CPU, 16, 0) ==
        NULL);
  CHECK(srv_cuda_copy(back, TRITONSERVER_MEMORY_CPU, a, TRITONSERVER_MEMORY_GPU, 16, 0) ==
        NULL);
  CHECK_STREQ(back, "on the mock gpu");
  CHECK(TRITONBACKEND_MemoryManagerFree(mm, a, TRITONSERVER_MEMORY_GPU, 0) == NULL);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 0);
  /* Pinned: the pool, then the host fallback once it is full. */
  void *p1 = NULL, *p2 = NULL;
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 4096, &p1) == NULL);
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 100, &p2) == NULL);
  CHECK(srv_cuda_pool_pinned(p1));
  CHECK(!srv_cuda_pool_pinned(p2));
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, p1);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, p2);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0), 0);
  srv_cuda_pools_fini();
  srv_options_free(&opt);
}

/* Two servers: the second keeps the first one's pools (its own sizes are
 * not used, as in Triton); they go with the last server's fini. */
static void pools_shared_by_servers(void) {
  srv_options_t first, second;
  char *argv1[] = {"nereid", "--cuda-memory-pool-byte-size=0:4096",
                   "--pinned-memory-pool-byte-size=4096", NULL};
  char *argv2[] = {"nereid", "--cuda-memory-pool-byte-size=0:8192",
                   "--pinned-memory-pool-byte-size=0", NULL};
  REQUIRE(srv_options_parse(&first, 3, argv1) == NULL);
  REQUIRE(srv_options_parse(&second, 3, argv2) == NULL);
  srv_cuda_pools_init(&first);
  srv_cuda_pools_init(&second);
  void *g = NULL, *p = NULL;
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 0, 1024, &g) == NULL);
  void *big = NULL; /* more than the first server's pool: its size holds */
  srv_status_t *st = srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 0, 6000, &big);
  CHECK(st != NULL);
  if (st != NULL) srv_status_free(st);
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 256, &p) == NULL);
  CHECK(srv_cuda_pool_pinned(p));
  srv_cuda_pools_fini(); /* the first server goes: the second still has them */
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 1024);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_GPU, 0, g);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, p);
  srv_cuda_pools_fini();
  /* Gone with the last: the next server makes its own, of its sizes. */
  srv_cuda_pools_init(&second);
  CHECK(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 0, 6000, &g) == NULL);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_GPU, 0, g);
  srv_cuda_pools_fini();
  srv_options_free(&first);
  srv_options_free(&second);
}

/* The node of the pinned pool that the calling thread allocates from, into
 * *arg; also a thread's body (an instance's, started under its policy). */
static void *pinned_node_here(void *arg) {
  void *p = NULL;
  if (srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 256, &p) == NULL) {
    *(int *)arg = srv_cuda_pool_pinned_node(p);
    srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, p);
  }
  return NULL;
}

typedef struct {
  char **policies;
  size_t count;
  int node, entered, child, unbound;
} policy_thread_t;

/* A thread that enters the policy (as a loader does), allocates, starts a
 * child under it, leaves, and allocates again. */
static void *pinned_under_policy(void *arg) {
  policy_thread_t *t = arg;
  srv_host_policy_saved_t saved;
  if (srv_host_policy_enter(t->policies, t->count, "gpu_0", &saved) != NULL) return NULL;
  pinned_node_here(&t->entered);
  pthread_t c;
  if (pthread_create(&c, NULL, pinned_node_here, &t->child) == 0) pthread_join(c, NULL);
  srv_host_policy_leave(&saved);
  pinned_node_here(&t->unbound);
  return NULL;
}

/* The pinned pool of a node a policy names is cudaHostAlloc'd with the
 * memory bound to that node (the mock logs the calling thread's policy),
 * the main thread's policy given back; threads under the policy, and
 * those they start, allocate from it. This machine's nodes: one pool per
 * node, the first serving threads without a node. */
static void pinned_pool_bound_to_its_node(void) {
  if (get_mempolicy(NULL, NULL, 0, NULL, 0) != 0) {
    fprintf(stderr, "  no NUMA memory policies here: skipped\n");
    return;
  }
  int node = -1;
  for (int n = 0; n <= numa_max_node() && node < 0; n++)
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)n)) node = n;
  REQUIRE(node >= 0 && node < 64);
  char log_path[512], policy[64], needle[96];
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(log_path, sizeof log_path, "%s/mock_cuda.log", tmp ? tmp : "/tmp");
  remove(log_path);
  snprintf(policy, sizeof policy, "--host-policy=gpu_0,numa-node=%d", node);
  srv_options_t opt;
  char *argv[] = {"nereid",
                  "--cuda-memory-pool-byte-size=0:0",
                  "--cuda-memory-pool-byte-size=1:0",
                  "--pinned-memory-pool-byte-size=8192",
                  policy,
                  NULL};
  REQUIRE(srv_options_parse(&opt, 5, argv) == NULL);
  setenv("NEREID_MOCK_CUDA_LOG", log_path, 1);
  srv_cuda_pools_init(&opt);
  unsetenv("NEREID_MOCK_CUDA_LOG");
  char text[1024] = {0};
  FILE *f = fopen(log_path, "r");
  REQUIRE(f != NULL);
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  snprintf(needle, sizeof needle, "host_alloc bytes=8192 mempolicy=%d nodes=0x%lx ",
           MPOL_BIND, 1UL << node);
  CHECK(strstr(text, needle) != NULL);
  if (strstr(text, needle) == NULL) fprintf(stderr, "  mock log: %s\n", text);
  int mode = -1;
  CHECK(get_mempolicy(&mode, NULL, 0, NULL, 0) == 0 && mode == MPOL_DEFAULT);

  int mine = -9;
  pinned_node_here(&mine);
  CHECK(mine == node);
  policy_thread_t t = {.policies = opt.host_policies,
                       .count = opt.host_policy_count,
                       .entered = -9,
                       .child = -9,
                       .unbound = -9};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, pinned_under_policy, &t) == 0);
  pthread_join(th, NULL);
  CHECK(t.entered == node);
  CHECK(t.child == node);
  CHECK(t.unbound == node);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0), 0);
  srv_cuda_pools_fini();
  srv_options_free(&opt);
}

UNIT_MAIN("cuda_mock", UNIT_CASE(mock_gpus_are_found),
          UNIT_CASE(pools_per_gpu_and_pinned), UNIT_CASE(pools_shared_by_servers),
          UNIT_CASE(pinned_pool_bound_to_its_node))
