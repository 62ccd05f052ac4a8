/* The system shared-memory regions of a --shared-memory system run: one
 * POSIX shared-memory object per input (holding that input's data for every
 * prebuilt request) and one per output, made before the load, registered
 * with the server, and unregistered and removed at the end. Main thread
 * only; during the load the server reads and writes the mappings, the
 * workers never touch them. See README.md, "Shared memory". */
#ifndef NEREID_TOOLS_PERF_SHM_H
#define NEREID_TOOLS_PERF_SHM_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/perf/common.h"

/** One region: a POSIX object mapped in this process, registered under
 *  `name` at offset 0 for its whole size. */
typedef struct {
  char name[64]; /* the region's name at the server: "nereid-perf-<pid>-<n>" */
  char key[64];  /* its object: "/nereid-perf-<pid>-<n>" */
  char *tensor;  /* "input INPUT0", "output OUTPUT0": for messages */
  char *map;     /* the mapping, size bytes */
  size_t size;
  bool linked;     /* the object's name still exists under /dev/shm */
  bool registered; /* the server holds it */
} perf_shm_region_t;

typedef struct perf_shm perf_shm_t;

/** An empty set of regions. */
perf_shm_t *perf_shm_new(void);

/** Makes a new object of `size` bytes (at least 1) under a name no other
 *  object has (shm_open O_CREAT|O_EXCL, retried past names taken), with
 *  its memory allocated (so that a full /dev/shm fails here, not as a
 *  SIGBUS later) and mapped; `kind` and `tensor` name it in messages. The
 *  region belongs to shm; *out stays valid until perf_shm_free. Fails
 *  with the system call and its errno, and then made nothing. */
bool perf_shm_create(perf_shm_t *shm, const char *kind, const char *tensor, size_t size,
                     perf_shm_region_t **out, perf_err_t *err);

/** Registers every region not yet registered (SystemSharedMemoryRegister,
 *  the whole object), then removes its name: the server holds the object
 *  open from then on, so that nothing is left under /dev/shm even if this
 *  process dies. Stops at the first failure, naming the region, its
 *  tensor and the server's answer; the regions registered before it stay
 *  so until perf_shm_free. Blocks on the RPCs (timeout_ms each). */
bool perf_shm_register(perf_shm_t *shm, grpc_channel *ch, unsigned timeout_ms,
                       perf_err_t *err);

/** Unregisters every region the server holds (each by name), removes the
 *  names still linked, unmaps all and frees shm (NULL is fine). Goes on
 *  past failures; false when one failed, err naming the first. */
bool perf_shm_free(perf_shm_t *shm, grpc_channel *ch, unsigned timeout_ms,
                   perf_err_t *err);

#endif
