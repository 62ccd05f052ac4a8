/* PLACEHOLDER until the cuda branch merges: no CUDA. */
#include "server/cuda/cuda.h"

#include <string.h>

int srv_cuda_device_count(const char **why) {
  if (why != NULL) *why = "CUDA support is not built";
  return 0;
}

srv_status_t *srv_cuda_ipc_open(int device, const void *handle, void **ptr,
                                uint64_t *alloc_size) {
  (void)device, (void)handle, (void)ptr, (void)alloc_size;
  return srv_status_new(GRPC_STATUS_UNAVAILABLE, "CUDA support is not built");
}

void srv_cuda_ipc_close(int device, void *ptr) { (void)device, (void)ptr; }

srv_status_t *srv_cuda_copy(void *dst, TRITONSERVER_MemoryType dst_type, const void *src,
                            TRITONSERVER_MemoryType src_type, size_t n, int64_t device) {
  (void)device;
  if (dst_type == TRITONSERVER_MEMORY_GPU || src_type == TRITONSERVER_MEMORY_GPU)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE, "CUDA support is not built");
  memcpy(dst, src, n);
  return NULL;
}
