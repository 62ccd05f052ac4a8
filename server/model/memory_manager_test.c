/* TRITONBACKEND_MemoryManagerAllocate/Free as a backend calls them: CPU
 * always; pinned as host memory; GPU from the pools with a GPU, and without
 * one UNAVAILABLE naming the reason. A bad device is INVALID_ARG. */
#include <stdio.h>
#include <string.h>

#include "server/cuda/cuda.h"
#include "server/cuda/memory.h"
#include "test/unit/unit.h"
#include "triton/core/tritonbackend.h"

static TRITONBACKEND_MemoryManager *manager(void) {
  TRITONBACKEND_MemoryManager *mm = NULL;
  /* The manager is process-wide: no backend is needed to get it. */
  CHECK(TRITONBACKEND_BackendMemoryManager(NULL, &mm) == NULL);
  return mm;
}

static void expect_error(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code,
                         const char *needle) {
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), code);
  if (strstr(TRITONSERVER_ErrorMessage(err), needle) == NULL) {
    fprintf(stderr, "  message '%s' lacks '%s'\n", TRITONSERVER_ErrorMessage(err),
            needle);
    CHECK(0);
  }
  TRITONSERVER_ErrorDelete(err);
}

static void host_memory(void) {
  TRITONBACKEND_MemoryManager *mm = manager();
  void *p = NULL;
  REQUIRE(TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_CPU, 0, 64) ==
          NULL);
  memset(p, 0, 64);
  CHECK(TRITONBACKEND_MemoryManagerFree(mm, p, TRITONSERVER_MEMORY_CPU, 0) == NULL);
  REQUIRE(TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_CPU_PINNED, 0,
                                              64) == NULL);
  memset(p, 0, 64);
  CHECK(TRITONBACKEND_MemoryManagerFree(mm, p, TRITONSERVER_MEMORY_CPU_PINNED, 0) ==
        NULL);
  expect_error(
      TRITONBACKEND_MemoryManagerAllocate(mm, &p, (TRITONSERVER_MemoryType)7, 0, 1),
      TRITONSERVER_ERROR_INVALID_ARG, "unknown memory type 7");
}

static void gpu_memory(void) {
  TRITONBACKEND_MemoryManager *mm = manager();
  const char *why = NULL;
  int gpus = srv_cuda_device_count(&why);
  void *p = NULL;
  if (gpus == 0) {
    printf("  (no GPU: %s)\n", why);
    TRITONSERVER_Error *err =
        TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_GPU, 0, 64);
    expect_error(err, TRITONSERVER_ERROR_UNAVAILABLE,
                 "GPU memory allocation is unavailable");
    err = TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_GPU, 0, 64);
    expect_error(err, TRITONSERVER_ERROR_UNAVAILABLE, why);
    return;
  }
  srv_options_t opt;
  char *argv[] = {"nereid", NULL};
  REQUIRE(srv_options_parse(&opt, 1, argv) == NULL);
  srv_cuda_pools_init(&opt);
  REQUIRE(TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_GPU, 0, 1000) ==
          NULL);
  CHECK(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0) >= 1000);
  CHECK(TRITONBACKEND_MemoryManagerFree(mm, p, TRITONSERVER_MEMORY_GPU, 0) == NULL);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 0);
  expect_error(
      TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_GPU, gpus, 8),
      TRITONSERVER_ERROR_INVALID_ARG, "invalid GPU device id");
  expect_error(
      TRITONBACKEND_MemoryManagerAllocate(mm, &p, TRITONSERVER_MEMORY_GPU, 0, 1ull << 40),
      TRITONSERVER_ERROR_INTERNAL, "Failed to allocate CUDA memory");
  srv_cuda_pools_fini();
  srv_options_free(&opt);
}

UNIT_MAIN("memory_manager", UNIT_CASE(host_memory), UNIT_CASE(gpu_memory))
