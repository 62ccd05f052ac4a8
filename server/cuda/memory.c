/* GPU pools over CUDA memory, and the dispatch by memory type to them, to
 * the pinned pools (pinned.c) or to malloc (see memory.h). The pools are
 * the process's, shared by its servers: the first server's init makes them
 * and the last one's fini frees them, under users_lock, so the table is
 * written only while no server's model thread exists and only read
 * otherwise (a later server's threads start after its init took the lock);
 * each pool has its own lock. */
#include "server/cuda/memory.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "server/common/log.h"
#include "server/cuda/cuda.h"
#include "server/cuda/memory_pool.h"
#include "server/cuda/pinned.h"

/** Most GPUs that get a pool; more are not served by the pools. */
#define SRV_CUDA_POOL_DEVICES_MAX 64

typedef struct {
  srv_pool_t *pool;
  void *base; /* what cudaMalloc gave */
} cuda_pool_t;

static cuda_pool_t gpu_pools[SRV_CUDA_POOL_DEVICES_MAX];
static int gpu_pool_devices; /* devices that the table covers */
static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned users; /* servers between init and fini; users_lock's */
/* Relaxed: only keeps the fallback's warning to one line. */
static atomic_bool pinned_fallback_warned;

static void gpu_pool_create(int device, uint64_t bytes) {
  if (bytes == 0) return;
  void *base = NULL;
  srv_status_t *st = srv_cuda_malloc(device, bytes, &base);
  if (st != NULL) {
    SRV_WARN("CUDA memory pool on GPU %d is not available: %s", device,
             srv_status_message(st));
    srv_status_free(st);
    return;
  }
  srv_pool_t *pool = srv_pool_new((uintptr_t)base, bytes, SRV_POOL_BLOCKS_MAX);
  if (pool == NULL) { /* less than one aligned unit */
    SRV_WARN("CUDA memory pool on GPU %d is not available: %llu bytes is too small",
             device, (unsigned long long)bytes);
    srv_cuda_free(device, base);
    return;
  }
  gpu_pools[device] = (cuda_pool_t){.pool = pool, .base = base};
  SRV_INFO("CUDA memory pool is created on device %d with size %llu", device,
           (unsigned long long)bytes);
}

/* A later server keeps the first one's pools, with Triton's warnings. */
static void pools_reuse(const srv_options_t *opt) {
  if (gpu_pool_devices > 0)
    SRV_WARN("New CUDA memory pools could not be created since they already exists");
  if (srv_pinned_pools_exist())
    SRV_WARN("New pinned memory pool of size %llu could not be created since one "
             "already exists of size %llu",
             (unsigned long long)opt->pinned_memory_pool_byte_size,
             (unsigned long long)srv_pinned_pools_size());
}

static void pools_make(const srv_options_t *opt) {
  const char *why = NULL;
  int devices = srv_cuda_device_count(&why);
  if (devices == 0) {
    SRV_INFO("CUDA memory pools disabled: %s", why);
    return;
  }
  if (devices > SRV_CUDA_POOL_DEVICES_MAX) {
    SRV_WARN("%d GPUs: only the first %d get a CUDA memory pool", devices,
             SRV_CUDA_POOL_DEVICES_MAX);
    devices = SRV_CUDA_POOL_DEVICES_MAX;
  }
  gpu_pool_devices = devices;
  for (int d = 0; d < devices; d++)
    gpu_pool_create(d, srv_options_cuda_pool_bytes(opt, d));
  srv_pinned_pools_init(opt);
}

void srv_cuda_pools_init(const srv_options_t *opt) {
  pthread_mutex_lock(&users_lock);
  if (users++ == 0)
    pools_make(opt);
  else
    pools_reuse(opt);
  pthread_mutex_unlock(&users_lock);
}

void srv_cuda_pools_fini(void) {
  pthread_mutex_lock(&users_lock);
  if (users == 0 || --users > 0) {
    pthread_mutex_unlock(&users_lock);
    return;
  }
  for (int d = 0; d < gpu_pool_devices; d++) {
    srv_pool_delete(gpu_pools[d].pool);
    srv_cuda_free(d, gpu_pools[d].base);
    gpu_pools[d] = (cuda_pool_t){0};
  }
  gpu_pool_devices = 0;
  srv_pinned_pools_fini();
  pthread_mutex_unlock(&users_lock);
}

static srv_status_t *gpu_alloc(int64_t device, size_t n, void **ptr) {
  const char *why = NULL;
  int devices = srv_cuda_device_count(&why);
  if (devices == 0)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "GPU memory allocation is unavailable: %s", why);
  if (device < 0 || device >= devices)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid GPU device id %lld: this server has %d GPU%s",
                          (long long)device, devices, devices == 1 ? "" : "s");
  srv_pool_t *pool = device < gpu_pool_devices ? gpu_pools[device].pool : NULL;
  if (pool == NULL)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "GPU %lld has no CUDA memory pool "
                          "(--cuda-memory-pool-byte-size=%lld:<bytes>)",
                          (long long)device, (long long)device);
  uintptr_t p;
  if (!srv_pool_alloc(pool, n, &p))
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "Failed to allocate CUDA memory with byte size %zu on GPU "
                          "%lld: out of memory (pool of %zu bytes, %zu in use)",
                          n, (long long)device, srv_pool_capacity(pool),
                          srv_pool_used(pool));
  *ptr = (void *)p;
  return NULL;
}

static srv_status_t *host_alloc(size_t n, void **ptr) {
  *ptr = malloc(n ? n : 1);
  if (*ptr == NULL)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE, "CPU memory allocation failed");
  return NULL;
}

srv_status_t *srv_cuda_pool_alloc(TRITONSERVER_MemoryType type, int64_t device, size_t n,
                                  void **ptr) {
  switch (type) {
    case TRITONSERVER_MEMORY_GPU:
      return gpu_alloc(device, n, ptr);
    case TRITONSERVER_MEMORY_CPU_PINNED:
      if (srv_pinned_alloc(n, ptr)) return NULL;
      if (srv_pinned_pools_exist() &&
          !atomic_exchange_explicit(&pinned_fallback_warned, true, memory_order_relaxed))
        SRV_WARN(
            "failed to allocate pinned system memory, falling back to non-pinned "
            "system memory");
      return host_alloc(n, ptr);
    case TRITONSERVER_MEMORY_CPU:
      return host_alloc(n, ptr);
  }
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "unknown memory type %d",
                        (int)type);
}

void srv_cuda_pool_free(TRITONSERVER_MemoryType type, int64_t device, void *ptr) {
  if (ptr == NULL) return;
  switch (type) {
    case TRITONSERVER_MEMORY_GPU: {
      srv_pool_t *pool =
          device >= 0 && device < gpu_pool_devices ? gpu_pools[device].pool : NULL;
      if (pool == NULL || !srv_pool_release(pool, (uintptr_t)ptr))
        SRV_ERROR("freeing GPU memory %p on GPU %lld that its pool did not give", ptr,
                  (long long)device);
      return;
    }
    case TRITONSERVER_MEMORY_CPU_PINNED:
      if (!srv_pinned_release(ptr)) free(ptr); /* the non-pinned fallback */
      return;
    case TRITONSERVER_MEMORY_CPU:
      free(ptr);
      return;
  }
  SRV_ERROR("freeing %p of unknown memory type %d", ptr, (int)type);
}

bool srv_cuda_pool_pinned(const void *ptr) {
  return srv_pinned_node(ptr) != SRV_CUDA_PINNED_NODE_NONE;
}

int srv_cuda_pool_pinned_node(const void *ptr) { return srv_pinned_node(ptr); }

size_t srv_cuda_pool_used(TRITONSERVER_MemoryType type, int64_t device) {
  if (type == TRITONSERVER_MEMORY_CPU_PINNED) return srv_pinned_used();
  srv_pool_t *pool = NULL;
  if (type == TRITONSERVER_MEMORY_GPU && device >= 0 && device < gpu_pool_devices)
    pool = gpu_pools[device].pool;
  return pool != NULL ? srv_pool_used(pool) : 0;
}
