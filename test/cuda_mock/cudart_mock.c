/* A stand-in for the CUDA runtime (libcudart.so.13) with MOCK GPUs whose
 * "device memory" is host memory, so that the server's GPU path (pools,
 * KIND_GPU instances, the memory manager) runs in tests on machines without
 * a GPU. Tests put it first on LD_LIBRARY_PATH as libcudart.so.13; the
 * server loads it as it would the real one (server/cuda/cuda.c). Devices:
 * $NEREID_MOCK_GPUS (default 2). Any thread; the current device is per
 * thread, as CUDA's. Only the functions the server resolves exist. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum {
  OK = 0,
  ERR_INVALID_VALUE = 1,
  ERR_MEMORY = 2,
  ERR_INVALID_DEVICE = 101,
  ERR_INVALID_HANDLE = 400,
};

typedef struct {
  char reserved[64];
} ipc_handle_t; /* cudaIpcMemHandle_t */

static _Thread_local int current;

static int devices(void) {
  const char *env = getenv("NEREID_MOCK_GPUS");
  return env != NULL ? atoi(env) : 2;
}

EXPORT int cudaGetDeviceCount(int *n) {
  *n = devices();
  return OK;
}

EXPORT int cudaGetDevice(int *d) {
  *d = current;
  return OK;
}

EXPORT int cudaSetDevice(int d) {
  if (d < 0 || d >= devices()) return ERR_INVALID_DEVICE;
  current = d;
  return OK;
}

EXPORT const char *cudaGetErrorString(int err) {
  switch (err) {
    case OK:
      return "no error";
    case ERR_INVALID_VALUE:
      return "invalid argument";
    case ERR_MEMORY:
      return "out of memory";
    case ERR_INVALID_DEVICE:
      return "invalid device ordinal";
    case ERR_INVALID_HANDLE:
      return "invalid resource handle";
  }
  return "unknown error";
}

/* 256-byte aligned, as CUDA's allocations are. */
EXPORT int cudaMalloc(void **p, size_t n) {
  if (posix_memalign(p, 256, n ? n : 1) != 0) *p = NULL;
  return *p != NULL ? OK : ERR_MEMORY;
}

EXPORT int cudaFree(void *p) {
  free(p);
  return OK;
}

EXPORT int cudaHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  return cudaMalloc(p, n);
}

EXPORT int cudaFreeHost(void *p) { return cudaFree(p); }

EXPORT int cudaMemcpy(void *dst, const void *src, size_t n, int kind) {
  (void)kind;
  if (n > 0) memcpy(dst, src, n);
  return OK;
}

/* Every handle is refused: the mock has no other process to share with. */
EXPORT int cudaIpcOpenMemHandle(void **p, ipc_handle_t handle, unsigned flags) {
  (void)handle;
  (void)flags;
  *p = NULL;
  return ERR_INVALID_HANDLE;
}

EXPORT int cudaIpcCloseMemHandle(void *p) {
  (void)p;
  return OK;
}

EXPORT int cudaDeviceGetAttribute(int *value, int attr, int device) {
  (void)device;
  *value = attr == 75 ? 9 : 0; /* compute capability 9.0 */
  return OK;
}

static int address_range(uint64_t *base, size_t *size, uint64_t p) {
  *base = p;
  *size = 0;
  return 0;
}

EXPORT int cudaGetDriverEntryPointByVersion(const char *symbol, void **fn,
                                            unsigned version, unsigned long long flags,
                                            int *status) {
  (void)version;
  (void)flags;
  *fn = strcmp(symbol, "cuMemGetAddressRange") == 0 ? (void *)address_range : NULL;
  if (status != NULL) *status = *fn != NULL ? 0 : 1;
  return *fn != NULL ? OK : ERR_INVALID_VALUE;
}
