/* The CUDA runtime and the pools as this machine has them. Without a GPU
 * (the CI machines) every GPU path must answer UNAVAILABLE with the reason
 * and host paths must work; with one, the pools and copies must work. */
#include "server/cuda/cuda.h"

#include <stdio.h>
#include <string.h>

#include "server/cuda/memory.h"
#include "server/options.h"
#include "test/unit/unit.h"

static bool have_gpu(void) {
  const char *why = NULL;
  int n = srv_cuda_device_count(&why);
  if (n == 0) printf("  (no GPU: %s)\n", why);
  return n > 0;
}

static void host_copy_needs_no_cuda(void) {
  char src[] = "nereid", dst[sizeof src] = {0};
  srv_status_t *st = srv_cuda_copy(dst, TRITONSERVER_MEMORY_CPU, src,
                                   TRITONSERVER_MEMORY_CPU_PINNED, sizeof src, 7);
  CHECK(st == NULL);
  CHECK_STREQ(dst, "nereid");
}

static void without_gpu_every_gpu_path_is_unavailable(void) {
  const char *why = NULL;
  if (srv_cuda_device_count(&why) > 0) {
    printf("  skipped: this machine has a GPU\n");
    return;
  }
  REQUIRE(why != NULL && why[0] != '\0');
  char buf[8];
  srv_status_t *st =
      srv_cuda_copy(buf, TRITONSERVER_MEMORY_GPU, "x", TRITONSERVER_MEMORY_CPU, 1, 0);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_UNAVAILABLE);
  CHECK(strstr(srv_status_message(st), why) != NULL);
  srv_status_free(st);
  char handle[SRV_CUDA_IPC_HANDLE_SIZE] = {0};
  void *p;
  uint64_t size;
  st = srv_cuda_ipc_open(0, handle, &p, &size);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_UNAVAILABLE);
  srv_status_free(st);
  st = srv_cuda_set_device(0);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_UNAVAILABLE);
  srv_status_free(st);
  srv_cuda_ipc_close(0, NULL); /* nothing to do, nothing to crash */
  srv_cuda_free(0, NULL);
}

static void pools_without_gpu(void) {
  if (have_gpu()) {
    printf("  skipped: this machine has a GPU\n");
    return;
  }
  srv_options_t opt;
  char *argv[] = {"nereid", NULL};
  REQUIRE(srv_options_parse(&opt, 1, argv) == NULL);
  srv_cuda_pools_init(&opt);
  void *p = NULL;
  srv_status_t *st = srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 0, 64, &p);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_UNAVAILABLE);
  CHECK(strstr(srv_status_message(st), "GPU memory allocation is unavailable") != NULL);
  srv_status_free(st);
  /* Pinned falls back to ordinary host memory, as Triton without a pool. */
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 100, &p) == NULL);
  memset(p, 1, 100);
  CHECK(!srv_cuda_pool_pinned(p));
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, p);
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU, 0, 0, &p) == NULL);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU, 0, p);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 0);
  srv_cuda_pools_fini();
  srv_options_free(&opt);
}

static void pools_and_copies_on_gpu(void) {
  if (!have_gpu()) {
    printf("  skipped: needs a GPU\n");
    return;
  }
  srv_options_t opt;
  char *argv[] = {"nereid", "--cuda-memory-pool-byte-size=0:1048576",
                  "--pinned-memory-pool-byte-size=1048576", NULL};
  REQUIRE(srv_options_parse(&opt, 3, argv) == NULL);
  srv_cuda_pools_init(&opt);
  void *g = NULL, *h = NULL;
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 0, 4096, &g) == NULL);
  REQUIRE(srv_cuda_pool_alloc(TRITONSERVER_MEMORY_CPU_PINNED, 0, 4096, &h) == NULL);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 4096);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_CPU_PINNED, 0), 4096);
  CHECK(srv_cuda_pool_pinned(h));
  char src[4096], back[4096];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (char)i;
  CHECK(srv_cuda_copy(g, TRITONSERVER_MEMORY_GPU, src, TRITONSERVER_MEMORY_CPU, 4096,
                      0) == NULL);
  CHECK(srv_cuda_copy(h, TRITONSERVER_MEMORY_CPU_PINNED, g, TRITONSERVER_MEMORY_GPU, 4096,
                      0) == NULL);
  memcpy(back, h, sizeof back);
  CHECK(memcmp(src, back, sizeof src) == 0);
  /* A full pool refuses, as Triton's (no cudaMalloc behind it). */
  void *big = NULL;
  srv_status_t *st = srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 0, 2 << 20, &big);
  REQUIRE(st != NULL);
  CHECK(strstr(srv_status_message(st), "Failed to allocate CUDA memory") != NULL);
  srv_status_free(st);
  st = srv_cuda_pool_alloc(TRITONSERVER_MEMORY_GPU, 999, 16, &big);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  srv_status_free(st);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_GPU, 0, g);
  srv_cuda_pool_free(TRITONSERVER_MEMORY_CPU_PINNED, 0, h);
  CHECK_EQ_U64(srv_cuda_pool_used(TRITONSERVER_MEMORY_GPU, 0), 0);
  srv_cuda_pools_fini();
  srv_options_free(&opt);
}

UNIT_MAIN("cuda", UNIT_CASE(host_copy_needs_no_cuda),
          UNIT_CASE(without_gpu_every_gpu_path_is_unavailable),
          UNIT_CASE(pools_without_gpu), UNIT_CASE(pools_and_copies_on_gpu))
