/* Regions: mapping, counting, unmapping (see shm_region.h). */
#include "server/shm/shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/cuda/cuda.h"
#include "server/shm/shm_guard.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static srv_shm_region_t *region_new(srv_shm_kind_t kind, const char *name,
                                    uint64_t byte_size) {
  srv_shm_region_t *r = calloc(1, sizeof *r);
  if (r == NULL) SRV_FATAL("out of memory");
  atomic_init(&r->refs, 1);
  r->kind = kind;
  r->name = srv_strdup(name);
  r->byte_size = byte_size;
  r->fd = -1;
  return r;
}

static void region_free(srv_shm_region_t *r) {
  free(r->name);
  free(r->key);
  free(r);
}

/* The size of the object behind fd, or -1. */
static int64_t object_size(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 0) return -1;
  return (int64_t)st.st_size;
}

srv_status_t *srv_shm_region_system(const char *name, const char *key, uint64_t offset,
                                    uint64_t byte_size, srv_shm_region_t **out) {
  char q[SRV_QUOTE_SIZE];
  if (byte_size == 0)
    return BAD("failed to register shared memory region '%s': invalid args: byte_size is 0",
               srv_quote_str(q, name));
  if (offset > UINT64_MAX - byte_size || offset + byte_size > (uint64_t)INT64_MAX)
    return BAD("failed to register shared memory region '%s': invalid args: offset %llu + "
               "byte_size %llu overflows",
               srv_quote_str(q, name), (unsigned long long)offset,
               (unsigned long long)byte_size);
  /* O_RDWR without O_CREAT: the server only ever opens what a client made. */
  int fd = shm_open(key, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    char k[SRV_QUOTE_SIZE];
    return srv_status_new(errno == EMFILE || errno == ENFILE ? GRPC_STATUS_RESOURCE_EXHAUSTED
                                                             : GRPC_STATUS_INTERNAL,
                          "Unable to open shared memory region: '%s': %s",
                          srv_quote_str(k, key), strerror(errno));
  }
  int64_t size = object_size(fd);
  if (size < 0 || offset + byte_size > (uint64_t)size) {
    close(fd);
    char k[SRV_QUOTE_SIZE];
    return BAD("failed to register shared memory region '%s': invalid args: offset %llu + "
               "byte_size %llu is past the end of '%s' (%lld bytes)",
               srv_quote_str(q, name), (unsigned long long)offset,
               (unsigned long long)byte_size, srv_quote_str(k, key), (long long)size);
  }
  /* Map from the page that holds `offset`: clients need not align it. */
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t start = offset - offset % page;
  size_t len = (size_t)(offset + byte_size - start);
  void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
  if (map == MAP_FAILED) {
    int e = errno;
    close(fd);
    return BAD("failed to register shared memory region '%s': unable to process address "
               "space%s",
               srv_quote_str(q, name), strerror(e));
  }
  uint32_t guard = srv_shm_guard_add(map, len);
  if (guard == 0) {
    munmap(map, len);
    close(fd);
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "failed to register shared memory region '%s': no guard slot "
                          "left",
                          srv_quote_str(q, name));
  }
  srv_shm_region_t *r = region_new(SRV_SHM_SYSTEM, name, byte_size);
  r->key = srv_strdup(key);
  r->offset = offset;
  r->fd = fd;
  r->map = map;
  r->map_len = len;
  r->base = (char *)map + (offset - start);
  r->guard = guard;
  *out = r;
  return NULL;
}

srv_status_t *srv_shm_region_cuda(const char *name, const void *raw_handle,
                                  int64_t device_id, uint64_t byte_size,
                                  srv_shm_region_t **out) {
  char q[SRV_QUOTE_SIZE];
  const char *why = NULL;
  int devices = srv_cuda_device_count(&why);
  if (devices == 0)
    return BAD("failed to register CUDA shared memory region: '%s', GPUs not supported: %s",
               srv_quote_str(q, name), why ? why : "no CUDA device");
  if (device_id < 0 || device_id >= devices)
    return BAD("failed to register shared memory region '%s': invalid args: device_id %lld "
               "is not one of the %d CUDA devices",
               srv_quote_str(q, name), (long long)device_id, devices);
  void *ptr = NULL;
  uint64_t alloc_size = 0;
  srv_status_t *st = srv_cuda_ipc_open((int)device_id, raw_handle, &ptr, &alloc_size);
  if (st != NULL) {
    SRV_ERROR("failed to open CUDA IPC handle of region '%s': %s", srv_quote_str(q, name),
              srv_status_message(st));
    srv_status_free(st);
    return BAD("failed to register shared memory region: invalid args");
  }
  if (byte_size == 0 || byte_size > alloc_size) {
    srv_cuda_ipc_close((int)device_id, ptr);
    return BAD("failed to register shared memory region '%s': invalid args: byte_size %llu, "
               "the allocation holds %llu bytes",
               srv_quote_str(q, name), (unsigned long long)byte_size,
               (unsigned long long)alloc_size);
  }
  srv_shm_region_t *r = region_new(SRV_SHM_CUDA, name, byte_size);
  r->device_id = device_id;
  memcpy(r->ipc_handle, raw_handle, sizeof r->ipc_handle);
  r->map = ptr;
  r->base = ptr;
  *out = r;
  return NULL;
}

void srv_shm_region_ref(srv_shm_region_t *r) {
  /* Relaxed: the caller holds a reference, or the table's epoch section
   * keeps the table's. */
  atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
}

void srv_shm_region_unref(srv_shm_region_t *r) {
  /* Acq_rel: the last holder unmaps after every other holder's accesses. */
  if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1) return;
  if (r->kind == SRV_SHM_SYSTEM) {
    srv_shm_guard_remove(r->guard);
    munmap(r->map, r->map_len);
    close(r->fd);
  } else {
    srv_cuda_ipc_close((int)r->device_id, r->map);
  }
  region_free(r);
}

srv_status_t *srv_shm_region_check(const srv_shm_region_t *r) {
  if (r->kind != SRV_SHM_SYSTEM) return NULL;
  char q[SRV_QUOTE_SIZE];
  if (srv_shm_guard_faults(r->guard) != 0)
    return BAD("shared memory region '%s' is no longer usable: its object '%s' shrank while "
               "the server had it mapped; unregister and register it again",
               srv_quote_str(q, r->name), r->key);
  int64_t size = object_size(r->fd);
  if (size < 0 || r->offset + r->byte_size > (uint64_t)size)
    return BAD("shared memory region '%s' is no longer usable: its object '%s' is %lld bytes "
               "now, %llu are registered at offset %llu; unregister and register it again",
               srv_quote_str(q, r->name), r->key, (long long)size,
               (unsigned long long)r->byte_size, (unsigned long long)r->offset);
  return NULL;
}
