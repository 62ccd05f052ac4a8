/* System shared-memory regions of a run (see shm.h): POSIX objects, and
 * their registration over the control channel. Main thread only. */
#include "tools/perf/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grpc_service.upb.h"
#include "tools/perf/rpc.h"

/* Names taken by objects left from an earlier process of the same pid are
 * skipped; this many tries in a row means something else is wrong. */
#define NAME_TRIES 64

struct perf_shm {
  perf_shm_region_t **regions;
  size_t n;
  unsigned next; /* the <n> of the next name to try */
};

perf_shm_t *perf_shm_new(void) { return perf_calloc(1, sizeof(perf_shm_t)); }

/* Opens a new object under the next free name; its name in r. */
static int object_open(perf_shm_t *shm, perf_shm_region_t *r, perf_err_t *err) {
  for (unsigned tries = 0; tries < NAME_TRIES; tries++) {
    snprintf(r->name, sizeof r->name, "nereid-perf-%ld-%u", (long)getpid(), shm->next++);
    snprintf(r->key, sizeof r->key, "/%s", r->name);
    int fd = shm_open(r->key, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) {
      if (fd < 0)
        perf_fail(err, "%s: shm_open(%s, O_CREAT|O_EXCL): %s", r->tensor, r->key,
                  strerror(errno));
      return fd;
    }
  }
  perf_fail(err, "%s: shm_open: %d names /nereid-perf-%ld-* in a row already exist",
            r->tensor, NAME_TRIES, (long)getpid());
  return -1;
}

/* Sizes, allocates and maps the new object fd into r. */
static bool object_map(int fd, perf_shm_region_t *r, perf_err_t *err) {
  if (ftruncate(fd, (off_t)r->size) != 0)
    return perf_fail(err, "%s: ftruncate(%s, %zu): %s", r->tensor, r->key, r->size,
                     strerror(errno));
  int e = posix_fallocate(fd, 0, (off_t)r->size);
  if (e != 0)
    return perf_fail(err, "%s: posix_fallocate(%s, %zu bytes): %s", r->tensor, r->key,
                     r->size, strerror(e));
  void *map = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    return perf_fail(err, "%s: mmap(%s, %zu bytes): %s", r->tensor, r->key, r->size,
                     strerror(errno));
  r->map = map;
  return true;
}

bool perf_shm_create(perf_shm_t *shm, const char *kind, const char *tensor, size_t size,
                     perf_shm_region_t **out, perf_err_t *err) {
  perf_shm_region_t *r = perf_calloc(1, sizeof *r);
  size_t len = strlen(kind) + strlen(tensor) + 2;
  r->tensor = perf_malloc(len);
  snprintf(r->tensor, len, "%s %s", kind, tensor);
  r->size = size ? size : 1; /* the server refuses empty regions */
  int fd = object_open(shm, r, err);
  bool ok = fd >= 0 && object_map(fd, r, err);
  if (fd >= 0) {
    close(fd); /* the mapping keeps the object */
    if (!ok) shm_unlink(r->key);
  }
  if (!ok) {
    free(r->tensor);
    free(r);
    return false;
  }
  r->linked = true;
  shm->regions = perf_realloc(shm->regions, (shm->n + 1) * sizeof *shm->regions);
  shm->regions[shm->n++] = r;
  *out = r;
  return true;
}

static upb_Arena *arena_new(void) {
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) PERF_FATAL("out of memory");
  return a;
}

/* Calls method with the request serialized in `bytes` (from arena a, which
 * this frees); the reply is empty for these methods. */
static bool control_call(grpc_channel *ch, const char *method, upb_Arena *a,
                         const char *bytes, size_t len, unsigned timeout_ms,
                         perf_err_t *why) {
  if (bytes == NULL) PERF_FATAL("out of memory");
  grpc_slice reply = grpc_empty_slice();
  bool ok = perf_rpc_call(ch, method, bytes, len, timeout_ms, &reply, why);
  grpc_slice_unref(reply);
  upb_Arena_Free(a);
  return ok;
}

static bool region_register(perf_shm_region_t *r, grpc_channel *ch, unsigned timeout_ms,
                            perf_err_t *err) {
  upb_Arena *a = arena_new();
  inference_SystemSharedMemoryRegisterRequest *req =
      inference_SystemSharedMemoryRegisterRequest_new(a);
  if (req == NULL) PERF_FATAL("out of memory");
  inference_SystemSharedMemoryRegisterRequest_set_name(
      req, upb_StringView_FromString(r->name));
  inference_SystemSharedMemoryRegisterRequest_set_key(req,
                                                      upb_StringView_FromString(r->key));
  inference_SystemSharedMemoryRegisterRequest_set_offset(req, 0);
  inference_SystemSharedMemoryRegisterRequest_set_byte_size(req, r->size);
  size_t len;
  char *bytes = inference_SystemSharedMemoryRegisterRequest_serialize(req, a, &len);
  perf_err_t why;
  if (!control_call(ch, "SystemSharedMemoryRegister", a, bytes, len, timeout_ms, &why))
    return perf_fail(err, "registering region %s (key %s, %zu bytes) for %s: %s", r->name,
                     r->key, r->size, r->tensor, why.msg);
  r->registered = true;
  return true;
}

bool perf_shm_register(perf_shm_t *shm, grpc_channel *ch, unsigned timeout_ms,
                       perf_err_t *err) {
  for (size_t i = 0; i < shm->n; i++) {
    perf_shm_region_t *r = shm->regions[i];
    if (r->registered) continue;
    if (!region_register(r, ch, timeout_ms, err)) return false;
    /* The server holds the object open: its name is no longer needed. */
    if (shm_unlink(r->key) != 0)
      return perf_fail(err, "%s: shm_unlink(%s): %s", r->tensor, r->key, strerror(errno));
    r->linked = false;
  }
  return true;
}

static bool region_unregister(perf_shm_region_t *r, grpc_channel *ch, unsigned timeout_ms,
                              perf_err_t *err) {
  upb_Arena *a = arena_new();
  inference_SystemSharedMemoryUnregisterRequest *req =
      inference_SystemSharedMemoryUnregisterRequest_new(a);
  if (req == NULL) PERF_FATAL("out of memory");
  inference_SystemSharedMemoryUnregisterRequest_set_name(
      req, upb_StringView_FromString(r->name));
  size_t len;
  char *bytes = inference_SystemSharedMemoryUnregisterRequest_serialize(req, a, &len);
  perf_err_t why;
  if (!control_call(ch, "SystemSharedMemoryUnregister", a, bytes, len, timeout_ms, &why))
    return perf_fail(err, "unregistering region %s (%s): %s", r->name, r->tensor,
                     why.msg);
  r->registered = false;
  return true;
}

bool perf_shm_free(perf_shm_t *shm, grpc_channel *ch, unsigned timeout_ms,
                   perf_err_t *err) {
  if (shm == NULL) return true;
  bool ok = true;
  perf_err_t why;
  for (size_t i = 0; i < shm->n; i++) {
    perf_shm_region_t *r = shm->regions[i];
    if (r->registered && !region_unregister(r, ch, timeout_ms, &why) && ok)
      ok = perf_fail(err, "%s", why.msg);
    if (r->linked && shm_unlink(r->key) != 0 && ok)
      ok = perf_fail(err, "%s: shm_unlink(%s): %s", r->tensor, r->key, strerror(errno));
    munmap(r->map, r->size);
    free(r->tensor);
    free(r);
  }
  free(shm->regions);
  free(shm);
  return ok;
}
