/* One registered region: its mapping (system) or opened IPC handle (CUDA),
 * counted by the table that lists it and by the requests that use it; the
 * last reference unmaps it. Internal to server/shm. */
#ifndef NEREID_SERVER_SHM_SHM_REGION_H
#define NEREID_SERVER_SHM_SHM_REGION_H

#include <stdatomic.h>

#include "server/cuda/cuda.h"
#include "server/shm/shm.h"

struct srv_shm_region {
  _Atomic uint32_t refs;
  srv_shm_kind_t kind;
  char *name;
  char *key;          /* system: the object's name */
  uint64_t offset;    /* system: where the region starts in the object */
  uint64_t byte_size; /* what the client registered */
  int64_t device_id;  /* CUDA */
  int fd;             /* system: kept to check the object's size on use */
  void *map;          /* system: the page-aligned mapping; CUDA: the IPC pointer */
  size_t map_len;
  char *base;         /* the region's first byte */
  uint32_t guard;     /* system: the SIGBUS guard slot */
  /* CUDA: the client's handle, handed to backends with outputs placed in
   * the region (TRITONBACKEND_OutputBufferAttributes), as Triton does. */
  unsigned char ipc_handle[SRV_CUDA_IPC_HANDLE_SIZE];
};

/** Opens and maps a system region (refs 1). */
srv_status_t *srv_shm_region_system(const char *name, const char *key, uint64_t offset,
                                    uint64_t byte_size, srv_shm_region_t **out);

/** Opens a CUDA region (refs 1). */
srv_status_t *srv_shm_region_cuda(const char *name, const void *raw_handle,
                                  int64_t device_id, uint64_t byte_size,
                                  srv_shm_region_t **out);

void srv_shm_region_ref(srv_shm_region_t *r);

/** Drops a reference; the last unmaps and frees. */
void srv_shm_region_unref(srv_shm_region_t *r);

/** Checks that a system region's object still covers it (a client may
 *  shrink it) and that it never faulted. */
srv_status_t *srv_shm_region_check(const srv_shm_region_t *r);

#endif
