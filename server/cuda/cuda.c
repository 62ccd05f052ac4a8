/* The CUDA runtime, dlopen'd on first use (see cuda.h, cuda.md). Any
 * thread: the library and the device count are settled once under
 * pthread_once; afterwards every call only reads them. */
#include "server/cuda/cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The few runtime types the server needs, declared here so that the server
 * builds without CUDA's headers. Values are the runtime's ABI. */
typedef int cuda_error_t; /* cudaError_t; 0 is success */
typedef struct {
  char reserved[SRV_CUDA_IPC_HANDLE_SIZE];
} cuda_ipc_handle_t; /* cudaIpcMemHandle_t, passed by value */

enum {
  CUDA_MEMCPY_HOST_TO_DEVICE = 1,
  CUDA_MEMCPY_DEVICE_TO_HOST = 2,
  CUDA_MEMCPY_DEVICE_TO_DEVICE = 3,
  CUDA_IPC_LAZY_PEER_ACCESS = 1, /* cudaIpcMemLazyEnablePeerAccess */
  CUDA_HOST_ALLOC_PORTABLE = 1,  /* cudaHostAllocPortable */
  CUDA_ATTR_CC_MAJOR = 75,       /* cudaDevAttrComputeCapabilityMajor */
  CUDA_ATTR_CC_MINOR = 76,
};

typedef struct {
  cuda_error_t (*get_device_count)(int *);
  cuda_error_t (*get_device)(int *);
  cuda_error_t (*set_device)(int);
  const char *(*error_string)(cuda_error_t);
  cuda_error_t (*ipc_open)(void **, cuda_ipc_handle_t, unsigned);
  cuda_error_t (*ipc_close)(void *);
  cuda_error_t (*copy)(void *, const void *, size_t, int);
  cuda_error_t (*device_alloc)(void **, size_t);
  cuda_error_t (*device_free)(void *);
  cuda_error_t (*host_alloc)(void **, size_t, unsigned);
  cuda_error_t (*free_host)(void *);
  cuda_error_t (*attribute)(int *, int, int);
  cuda_error_t (*mem_info)(size_t *, size_t *); /* of the current device */
  /* The driver's cuMemGetAddressRange_v2 (CUresult, CUdeviceptr = uint64). */
  int (*address_range)(uint64_t *, size_t *, uint64_t);
} cuda_api_t;

/* Written once inside load_once, read-only afterwards. */
static pthread_once_t load_once_control = PTHREAD_ONCE_INIT;
static cuda_api_t api;
static int device_count;
static const char *absent_why = "CUDA runtime not loaded";

static void *library_open(void) {
  static const char *const names[] = {
      "libcudart.so.13",
      "libcudart.so",
      "/usr/local/cuda/lib64/libcudart.so.13",
      "/usr/local/cuda/lib64/libcudart.so",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (dl != NULL) return dl;
  }
  return NULL;
}

/* The driver entry point: CUDA 12.5+ asks for it by version, older ones
 * by name only (the extra argument is ignored where there is none). */
static void driver_entry_resolve(void *dl) {
  typedef cuda_error_t by_version_fn(const char *, void **, unsigned, unsigned long long,
                                     int *);
  typedef cuda_error_t by_name_fn(const char *, void **, unsigned long long, int *);
  by_version_fn *by_version =
      (by_version_fn *)dlsym(dl, "cudaGetDriverEntryPointByVersion");
  by_name_fn *by_name = (by_name_fn *)dlsym(dl, "cudaGetDriverEntryPoint");
  void *fn = NULL;
  int found = 0;
  if (by_version != NULL) by_version("cuMemGetAddressRange", &fn, 12000, 0, &found);
  if (fn == NULL && by_name != NULL) by_name("cuMemGetAddressRange", &fn, 0, &found);
  api.address_range = (int (*)(uint64_t *, size_t *, uint64_t))fn;
}

#define RESOLVE(field, symbol)                                   \
  do {                                                           \
    *(void **)&api.field = dlsym(dl, symbol);                    \
    if (api.field == NULL) missing = missing ? missing : symbol; \
  } while (0)

static void load_once(void) {
  void *dl = library_open();
  if (dl == NULL) {
    absent_why = "CUDA runtime library not found (libcudart.so.13 or libcudart.so)";
    return;
  }
  const char *missing = NULL;
  RESOLVE(get_device_count, "cudaGetDeviceCount");
  RESOLVE(get_device, "cudaGetDevice");
  RESOLVE(set_device, "cudaSetDevice");
  RESOLVE(error_string, "cudaGetErrorString");
  RESOLVE(ipc_open, "cudaIpcOpenMemHandle");
  RESOLVE(ipc_close, "cudaIpcCloseMemHandle");
  RESOLVE(copy, "cudaMemcpy");
  RESOLVE(device_alloc, "cudaMalloc");
  RESOLVE(device_free, "cudaFree");
  RESOLVE(host_alloc, "cudaHostAlloc");
  RESOLVE(free_host, "cudaFreeHost");
  RESOLVE(attribute, "cudaDeviceGetAttribute");
  RESOLVE(mem_info, "cudaMemGetInfo");
  if (missing != NULL) {
    /* The library stays loaded: unloading a runtime is never safe. */
    absent_why = "the CUDA runtime library lacks a function the server needs";
    memset(&api, 0, sizeof api);
    return;
  }
  int n = 0;
  cuda_error_t err = api.get_device_count(&n);
  if (err != 0) {
    /* The runtime's text, e.g. "no CUDA-capable device is detected" or
     * "CUDA driver version is insufficient for CUDA runtime version". */
    absent_why = api.error_string(err);
    return;
  }
  if (n <= 0) {
    absent_why = "no CUDA-capable device is detected";
    return;
  }
  driver_entry_resolve(dl);
  device_count = n;
  absent_why = NULL;
}

static void load(void) { pthread_once(&load_once_control, load_once); }

int srv_cuda_device_count(const char **why) {
  load();
  if (device_count == 0 && why != NULL) *why = absent_why;
  return device_count;
}

static srv_status_t *unavailable(const char *what) {
  return srv_status_new(GRPC_STATUS_UNAVAILABLE, "%s: CUDA is unavailable: %s", what,
                        absent_why);
}

static srv_status_t *device_check(const char *what, int64_t device) {
  if (srv_cuda_device_count(NULL) == 0) return unavailable(what);
  if (device < 0 || device >= device_count)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "%s: invalid GPU device %lld (this server has %d)", what,
                          (long long)device, device_count);
  return NULL;
}

static bool device_valid(int64_t device) {
  return device >= 0 && device < srv_cuda_device_count(NULL);
}

static srv_status_t *cuda_failed(grpc_status_code code, const char *what, int64_t device,
                                 cuda_error_t err) {
  return srv_status_new(code, "%s on GPU %lld failed: %s", what, (long long)device,
                        api.error_string(err));
}

/* Runs with `device` current on the calling thread, then puts the thread's
 * previous device back: callers are worker and loader threads whose own
 * device (if any) must not change under them. */
static bool device_enter(int device, int *previous) {
  if (api.get_device(previous) != 0) *previous = -1;
  if (*previous == device) return true;
  return api.set_device(device) == 0;
}

static void device_leave(int device, int previous) {
  if (previous >= 0 && previous != device) api.set_device(previous);
}

srv_status_t *srv_cuda_set_device(int device) {
  srv_status_t *st = device_check("cudaSetDevice", device);
  if (st != NULL) return st;
  cuda_error_t err = api.set_device(device);
  return err == 0 ? NULL
                  : cuda_failed(GRPC_STATUS_INTERNAL, "cudaSetDevice", device, err);
}

srv_status_t *srv_cuda_compute_capability(int device, int *major, int *minor) {
  srv_status_t *st = device_check("compute capability", device);
  if (st != NULL) return st;
  cuda_error_t err = api.attribute(major, CUDA_ATTR_CC_MAJOR, device);
  if (err == 0) err = api.attribute(minor, CUDA_ATTR_CC_MINOR, device);
  return err == 0
             ? NULL
             : cuda_failed(GRPC_STATUS_INTERNAL, "cudaDeviceGetAttribute", device, err);
}

srv_status_t *srv_cuda_memory_used(int device, double *fraction) {
  srv_status_t *st = device_check("cudaMemGetInfo", device);
  if (st != NULL) return st;
  int previous;
  size_t free_bytes = 0, total = 0;
  cuda_error_t err = device_enter(device, &previous) ? api.mem_info(&free_bytes, &total)
                                                      : api.set_device(device);
  device_leave(device, previous);
  if (err != 0) return cuda_failed(GRPC_STATUS_INTERNAL, "cudaMemGetInfo", device, err);
  *fraction = total > 0 ? (double)(total - free_bytes) / (double)total : 0.0;
  return NULL;
}

bool srv_cuda_device_supported(int device, double min) {
  int major, minor;
  srv_status_t *st = srv_cuda_compute_capability(device, &major, &minor);
  if (st != NULL) {
    srv_status_free(st);
    return false;
  }
  return major + minor / 10.0 >= min;
}

srv_status_t *srv_cuda_ipc_open(int device, const void *handle, void **ptr,
                                uint64_t *alloc_size) {
  srv_status_t *st = device_check("opening a CUDA IPC handle", device);
  if (st != NULL) return st;
  cuda_ipc_handle_t h;
  memcpy(h.reserved, handle, sizeof h.reserved);
  int previous;
  if (!device_enter(device, &previous))
    return srv_status_new(GRPC_STATUS_INTERNAL, "cannot make GPU %d current", device);
  void *p = NULL;
  cuda_error_t err = api.ipc_open(&p, h, CUDA_IPC_LAZY_PEER_ACCESS);
  uint64_t base = 0;
  size_t size = 0;
  if (err == 0 && (api.address_range == NULL ||
                   api.address_range(&base, &size, (uint64_t)(uintptr_t)p) != 0)) {
    api.ipc_close(p);
    device_leave(device, previous);
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "cannot read the size of the CUDA IPC allocation on GPU %d",
                          device);
  }
  device_leave(device, previous);
  if (err != 0)
    return cuda_failed(GRPC_STATUS_INVALID_ARGUMENT, "cudaIpcOpenMemHandle", device, err);
  *ptr = p;
  /* What lies from p to the allocation's end: a region may cover no more. */
  *alloc_size = base + size - (uint64_t)(uintptr_t)p;
  return NULL;
}

void srv_cuda_ipc_close(int device, void *ptr) {
  if (!device_valid(device)) return;
  int previous;
  if (!device_enter(device, &previous)) return;
  api.ipc_close(ptr);
  device_leave(device, previous);
}

srv_status_t *srv_cuda_copy(void *dst, TRITONSERVER_MemoryType dst_type, const void *src,
                            TRITONSERVER_MemoryType src_type, size_t n, int64_t device) {
  bool dst_gpu = dst_type == TRITONSERVER_MEMORY_GPU;
  bool src_gpu = src_type == TRITONSERVER_MEMORY_GPU;
  if (!dst_gpu && !src_gpu) {
    if (n > 0) memcpy(dst, src, n);
    return NULL;
  }
  srv_status_t *st = device_check("copying GPU memory", device);
  if (st != NULL) return st;
  int kind = dst_gpu && src_gpu ? CUDA_MEMCPY_DEVICE_TO_DEVICE
             : dst_gpu          ? CUDA_MEMCPY_HOST_TO_DEVICE
                                : CUDA_MEMCPY_DEVICE_TO_HOST;
  int previous;
  if (!device_enter((int)device, &previous))
    return srv_status_new(GRPC_STATUS_INTERNAL, "cannot make GPU %lld current",
                          (long long)device);
  cuda_error_t err = api.copy(dst, src, n, kind);
  device_leave((int)device, previous);
  return err == 0 ? NULL : cuda_failed(GRPC_STATUS_INTERNAL, "cudaMemcpy", device, err);
}

srv_status_t *srv_cuda_malloc(int device, size_t n, void **ptr) {
  srv_status_t *st = device_check("cudaMalloc", device);
  if (st != NULL) return st;
  int previous;
  if (!device_enter(device, &previous))
    return srv_status_new(GRPC_STATUS_INTERNAL, "cannot make GPU %d current", device);
  cuda_error_t err = api.device_alloc(ptr, n);
  device_leave(device, previous);
  return err == 0
             ? NULL
             : cuda_failed(GRPC_STATUS_RESOURCE_EXHAUSTED, "cudaMalloc", device, err);
}

void srv_cuda_free(int device, void *ptr) {
  if (ptr == NULL || !device_valid(device)) return;
  int previous;
  if (!device_enter(device, &previous)) return;
  api.device_free(ptr);
  device_leave(device, previous);
}

srv_status_t *srv_cuda_host_alloc(size_t n, void **ptr) {
  if (srv_cuda_device_count(NULL) == 0) return unavailable("cudaHostAlloc");
  cuda_error_t err = api.host_alloc(ptr, n, CUDA_HOST_ALLOC_PORTABLE);
  return err == 0 ? NULL
                  : srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                                   "cudaHostAlloc of %zu bytes failed: %s", n,
                                   api.error_string(err));
}

void srv_cuda_host_free(void *ptr) {
  if (ptr != NULL && srv_cuda_device_count(NULL) > 0) api.free_host(ptr);
}
