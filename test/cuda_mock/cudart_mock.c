/* A stand-in for the CUDA runtime (libcudart.so.13) with MOCK GPUs whose
 * "device memory" is host memory, so that the server's GPU path (pools,
 * KIND_GPU instances, the memory manager) runs in tests on machines without
 * a GPU. Tests put it first on LD_LIBRARY_PATH as libcudart.so.13; the
 * server loads it as it would the real one (server/cuda/cuda.c). Devices:
 * $NEREID_MOCK_GPUS (default 2), with compute capabilities from
 * $NEREID_MOCK_CC ("9.0,5.2": device 0, device 1...; default 9.0 each,
 * and for devices past the list). Any thread; the current device is per
 * thread, as CUDA's. Only the functions the server resolves exist. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* The current device of each thread, by thread id. Not _Thread_local: TSan
 * reports glibc's release of a dlopen'd library's TLS as a race. A thread
 * that never set one has device 0, as with CUDA. */
enum { THREADS_MAX = 256 };
static pthread_mutex_t current_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  long tid;
  int device;
} current[THREADS_MAX];

static int current_get(void) {
  long tid = (long)syscall(SYS_gettid);
  int device = 0;
  pthread_mutex_lock(&current_lock);
  for (int i = 0; i < THREADS_MAX; i++)
    if (current[i].tid == tid) device = current[i].device;
  pthread_mutex_unlock(&current_lock);
  return device;
}

/* Thread ids are reused by later threads; a full table reuses slot 0. */
static void current_set(int device) {
  long tid = (long)syscall(SYS_gettid);
  pthread_mutex_lock(&current_lock);
  int slot = -1;
  for (int i = 0; i < THREADS_MAX && slot < 0; i++)
    if (current[i].tid == tid || current[i].tid == 0) slot = i;
  if (slot < 0) slot = 0;
  current[slot].tid = tid;
  current[slot].device = device;
  pthread_mutex_unlock(&current_lock);
}

static int devices(void) {
  const char *env = getenv("NEREID_MOCK_GPUS");
  return env != NULL ? atoi(env) : 2;
}

EXPORT int cudaGetDeviceCount(int *n) {
  *n = devices();
  return OK;
}

EXPORT int cudaGetDevice(int *d) {
  *d = current_get();
  return OK;
}

/* With $NEREID_MOCK_CUDA_LOG set, each cudaSetDevice appends "set_device
 * device=D tid=T" there and each cudaHostAlloc "host_alloc bytes=N
 * mempolicy=M nodes=0xMASK tid=T" (the calling thread's memory policy, as
 * get_mempolicy gives it: M 2 is MPOL_BIND; the first 64 nodes), one
 * write(2) per line, so a test can see which thread did what, and where
 * pinned memory was bound. */
static void log_append(const char *line, int n) {
  const char *path = getenv("NEREID_MOCK_CUDA_LOG");
  if (path == NULL || n <= 0) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) { /* a test reads what is there */
  }
  close(fd);
}

static void log_set_device(int d) {
  char line[64];
  log_append(line, snprintf(line, sizeof line, "set_device device=%d tid=%ld\n", d,
                            (long)syscall(SYS_gettid)));
}

EXPORT int cudaSetDevice(int d) {
  if (d < 0 || d >= devices()) return ERR_INVALID_DEVICE;
  current_set(d);
  log_set_device(d);
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

/* Of the current device: 16 GiB, of which the fraction $NEREID_MOCK_GPU_USED
 * ("0.9"; default 0) is in use. */
EXPORT int cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  const char *env = getenv("NEREID_MOCK_GPU_USED");
  double used = env != NULL ? atof(env) : 0.0;
  *total = (size_t)16 << 30;
  *free_bytes = (size_t)((double)*total * (1.0 - used));
  return OK;
}

EXPORT int cudaHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  int mode = -1;
  unsigned long nodes[1024 / (8 * sizeof(unsigned long))] = {0};
  if (syscall(SYS_get_mempolicy, &mode, nodes, 1025ul, NULL, 0ul) != 0) mode = -1;
  char line[128];
  log_append(line, snprintf(line, sizeof line,
                            "host_alloc bytes=%zu mempolicy=%d nodes=0x%lx tid=%ld\n", n,
                            mode, nodes[0], (long)syscall(SYS_gettid)));
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

/* Attributes 75 and 76: the compute capability's major and minor. */
EXPORT int cudaDeviceGetAttribute(int *value, int attr, int device) {
  if (device < 0 || device >= devices()) return ERR_INVALID_DEVICE;
  int major = 9, minor = 0;
  const char *cc = getenv("NEREID_MOCK_CC");
  for (int d = 0; cc != NULL && d < device; d++) {
    cc = strchr(cc, ',');
    if (cc != NULL) cc++;
  }
  if (cc != NULL && sscanf(cc, "%d.%d", &major, &minor) != 2) major = 9, minor = 0;
  *value = attr == 75 ? major : attr == 76 ? minor : 0;
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
