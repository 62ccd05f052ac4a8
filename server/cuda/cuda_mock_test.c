/* The server's GPU path against a stand-in runtime with two mock GPUs
 * (test/cuda_mock, first on LD_LIBRARY_PATH): device count, pools on each
 * GPU, the memory manager, copies. KIND_GPU groups against the same mock:
 * server/model/model_gpu_test.c; what only a real GPU shows (kernels, IPC)
 * is in test/e2e/gpu_test.py. */
#include <stdio.h>
#include <string.h>

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

UNIT_MAIN("cuda_mock", UNIT_CASE(mock_gpus_are_found),
          UNIT_CASE(pools_per_gpu_and_pinned))
