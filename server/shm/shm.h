/* Shared-memory regions that clients register (Triton's system and CUDA
 * shared-memory extensions) and the references requests hold on them.
 *
 * One table per server maps region names (one namespace for both kinds) to
 * regions. Register, unregister and status are rare: they serialize on a
 * mutex and publish a new table. Requests look names up on every inference
 * that uses a region: lock-free, inside an epoch section, taking a counted
 * reference on the region. An unregistered region leaves the table at once
 * and is unmapped when the last request using it ends, as Triton defers it.
 * See shm.md. Any thread. */
#ifndef NEREID_SERVER_SHM_SHM_H
#define NEREID_SERVER_SHM_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"
#include "triton/core/tritonserver.h"

typedef struct srv_shm srv_shm_t;
typedef struct srv_shm_region srv_shm_region_t;

typedef enum { SRV_SHM_SYSTEM, SRV_SHM_CUDA } srv_shm_kind_t;

/** Most regions registered at once (each holds a file descriptor and a
 *  mapping); past it a register answers RESOURCE_EXHAUSTED. */
#define SRV_SHM_REGIONS_MAX 4096
/** Longest region name and key, in bytes. */
#define SRV_SHM_NAME_MAX 1024
#define SRV_SHM_KEY_MAX 255

/** An empty table. `enabled` false (--allow-client-shm=false) makes every
 *  call answer UNAVAILABLE. */
srv_shm_t *srv_shm_new(bool enabled);

/** Unmaps every region. No request may hold one any more. */
void srv_shm_free(srv_shm_t *shm);

/** Maps byte_size bytes at `offset` of the POSIX shared-memory object
 *  `key` under `name`. */
srv_status_t *srv_shm_register_system(srv_shm_t *shm, const char *name, size_t name_len,
                                      const char *key, size_t key_len, uint64_t offset,
                                      uint64_t byte_size);

/** Opens a CUDA IPC handle (raw_handle, SRV_CUDA_IPC_HANDLE_SIZE bytes) of
 *  device_id under `name`. */
srv_status_t *srv_shm_register_cuda(srv_shm_t *shm, const char *name, size_t name_len,
                                    const void *raw_handle, size_t handle_len,
                                    int64_t device_id, uint64_t byte_size);

/** Unregisters region `name` of `kind`, or every region of `kind` when
 *  name_len is 0. A name that is not registered (or is of the other kind)
 *  is no error, as in Triton. */
srv_status_t *srv_shm_unregister(srv_shm_t *shm, srv_shm_kind_t kind, const char *name,
                                 size_t name_len);

/** What a status lists of a region. Strings live until the callback returns. */
typedef struct {
  const char *name;
  const char *key; /* system regions */
  uint64_t offset; /* system regions */
  uint64_t byte_size;
  int64_t device_id; /* CUDA regions */
} srv_shm_info_t;

/** Calls fn for region `name` of `kind`, or for every region of `kind`
 *  (name order) when name_len is 0. NOT_FOUND with Triton's texts for an
 *  unknown name or one of the other kind. fn must not call back into shm. */
srv_status_t *srv_shm_status(srv_shm_t *shm, srv_shm_kind_t kind, const char *name,
                             size_t name_len,
                             void (*fn)(void *ctx, const srv_shm_info_t *info), void *ctx);

/* ---- requests ---- */

/** A request's counted reference on byte_size bytes at an offset of a
 *  region: for an input, where its data is; for an output, where it goes. */
typedef struct {
  srv_shm_region_t *region;
  void *addr; /* the region's mapping + offset (a device pointer for CUDA) */
  uint64_t byte_size;
  TRITONSERVER_MemoryType memory_type; /* CPU or GPU */
  int64_t memory_type_id;
  const char *output; /* the model's output name; NULL for an input */
  uint32_t faults;    /* the region's fault count when taken */
} srv_shm_ref_t;

/** Finds region `name` and takes a reference on [offset, offset+byte_size)
 *  of it, with Triton's checks and texts: unknown region, offset or size
 *  outside the region, and for system regions an object that shrank under
 *  the server (its size is checked on every use). */
srv_status_t *srv_shm_acquire(srv_shm_t *shm, const char *name, size_t name_len,
                              uint64_t offset, uint64_t byte_size, srv_shm_ref_t *out);

/** The CUDA IPC handle the client registered ref's region with
 *  (SRV_CUDA_IPC_HANDLE_SIZE bytes, living as long as ref), or NULL for a
 *  system region. */
const void *srv_shm_cuda_ipc_handle(const srv_shm_ref_t *ref);

/** Drops what srv_shm_acquire took. */
void srv_shm_release(srv_shm_ref_t *ref);

/** The region's name. */
const char *srv_shm_region_name(const srv_shm_region_t *region);

/** Whether the region's memory faulted (its object shrank or was removed
 *  while mapped) since ref was taken: what was read or written through it
 *  is not what the client meant. See shm_guard.h. */
bool srv_shm_faulted(const srv_shm_ref_t *ref);

/** The references of one request, owned by its srv_infer_state_t (which
 *  frees them with it): outputs are found here by the backend threads that
 *  allocate output buffers, and by the frontend that answers. */
typedef struct srv_shm_uses {
  uint32_t count;
  srv_shm_ref_t refs[];
} srv_shm_uses_t;

/** Moves n references into a new srv_shm_uses_t (NULL when n is 0). */
srv_shm_uses_t *srv_shm_uses_new(const srv_shm_ref_t *refs, uint32_t n);

/** Releases every reference and frees u (NULL is fine). */
void srv_shm_uses_free(srv_shm_uses_t *u);

/** srv_shm_uses_output's search, for a u that is not NULL. */
const srv_shm_ref_t *srv_shm_uses_find_output(const srv_shm_uses_t *u, const char *name);

/** The reference for output `name` (compared by content), or NULL; u may
 *  be NULL (a request without shared memory). Inline: that test is all
 *  nearly every reply needs, and callers on the reply path make no call
 *  for it (issue 21). */
static inline const srv_shm_ref_t *srv_shm_uses_output(const srv_shm_uses_t *u,
                                                       const char *name) {
  return u == NULL ? NULL : srv_shm_uses_find_output(u, name);
}

#endif
