/* The CUDA runtime as the server uses it. libcudart is loaded with dlopen
 * on first use, so one binary runs everywhere: on a machine without the
 * runtime, a driver or a GPU every call here answers UNAVAILABLE with the
 * reason, and srv_cuda_device_count is 0. Any thread; the first call loads
 * the runtime (once, thread-safe). See cuda.md. */
#ifndef NEREID_SERVER_CUDA_CUDA_H
#define NEREID_SERVER_CUDA_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"
#include "triton/core/tritonserver.h"

/** Size of a CUDA IPC memory handle (cudaIpcMemHandle_t), in bytes. */
#define SRV_CUDA_IPC_HANDLE_SIZE 64

/** Usable CUDA devices: 0 when the runtime, the driver or a GPU is missing;
 *  then *why (when not NULL) gets a reason for messages, a static string. */
int srv_cuda_device_count(const char **why);

/** Opens the IPC handle `handle` (SRV_CUDA_IPC_HANDLE_SIZE bytes, made by
 *  cudaIpcGetMemHandle in another process) on `device`: *ptr gets the
 *  device pointer, *alloc_size the byte size of the allocation it lies in
 *  (what a region may cover). INVALID_ARGUMENT for a bad device or handle,
 *  UNAVAILABLE without CUDA. */
srv_status_t *srv_cuda_ipc_open(int device, const void *handle, void **ptr,
                                uint64_t *alloc_size);

/** Closes what srv_cuda_ipc_open opened. */
void srv_cuda_ipc_close(int device, void *ptr);

/** Copies n bytes from src to dst, each in host memory (CPU or pinned) or
 *  in the memory of `device` (TRITONSERVER_MEMORY_GPU), synchronously.
 *  Host to host is a memcpy and works without CUDA. */
srv_status_t *srv_cuda_copy(void *dst, TRITONSERVER_MemoryType dst_type, const void *src,
                            TRITONSERVER_MemoryType src_type, size_t n, int64_t device);

/** Makes `device` the calling thread's current device (cudaSetDevice): an
 *  instance's thread calls it once before it runs the backend. */
srv_status_t *srv_cuda_set_device(int device);

/** The compute capability of `device` (major.minor). */
srv_status_t *srv_cuda_compute_capability(int device, int *major, int *minor);

/** The fraction of `device`'s memory in use (cudaMemGetInfo: total - free
 *  over total), for --model-load-gpu-limit. The caller's current device is
 *  kept. */
srv_status_t *srv_cuda_memory_used(int device, double *fraction);

/** Whether `device` exists and its compute capability, major + minor / 10
 *  as tritonserver counts it, is at least `min`
 *  (--min-supported-compute-capability); false when it cannot be read. */
bool srv_cuda_device_supported(int device, double min);

/** cudaMalloc of n bytes on `device` (the caller's current device is kept).
 *  RESOURCE_EXHAUSTED when the device has no room. */
srv_status_t *srv_cuda_malloc(int device, size_t n, void **ptr);

/** cudaFree of what srv_cuda_malloc gave; NULL is a no-op. */
void srv_cuda_free(int device, void *ptr);

/** Page-locked host memory, usable by every device (cudaHostAlloc,
 *  portable). UNAVAILABLE without CUDA. */
srv_status_t *srv_cuda_host_alloc(size_t n, void **ptr);

/** cudaFreeHost of what srv_cuda_host_alloc gave; NULL is a no-op. */
void srv_cuda_host_free(void *ptr);

#endif
