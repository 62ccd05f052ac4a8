/* A response cache from a library (Triton's TRITONCACHE API):
 * <cache-directory>/<name>/libtritoncache_<name>.so, loaded at start-up,
 * finalized at exit. An answer travels as one buffer in Nereid's own
 * encoding (cache_library.c). Every call: any thread (the library must be
 * thread-safe, as Triton requires). */
#ifndef NEREID_SERVER_CACHE_CACHE_LIBRARY_H
#define NEREID_SERVER_CACHE_CACHE_LIBRARY_H

#include <stdbool.h>
#include <stdint.h>

#include "server/cache/cache.h"
#include "server/cache/key.h"
#include "server/common/status.h"

typedef struct srv_cache_library srv_cache_library_t;

/** Loads and initializes cache `name` from `dir` with `config_json`. On
 *  error nothing stays loaded; the status says what failed (Triton's text
 *  for a library that is not there). Main thread. */
srv_status_t *srv_cache_library_open(const char *dir, const char *name,
                                     const char *config_json, srv_cache_library_t **out);

/** Finalizes the cache and unloads the library. Nothing else may run. */
void srv_cache_library_close(srv_cache_library_t *lib);

/** The answer stored at `key`: its outputs (*outs, malloc'd, pointing into
 *  *blob, malloc'd; the caller frees both) and their count; -1 when absent
 *  or unreadable (a library error is logged at verbose level 1). */
int64_t srv_cache_library_lookup(srv_cache_library_t *lib, const srv_cache_key_t *key,
                                 void **blob, srv_cache_output_t **outs);

/** The outputs in the encoding a library stores: one malloc'd buffer of
 *  *size bytes, or NULL when that does not fit in memory. */
void *srv_cache_library_encode(const srv_cache_output_t *outs, uint32_t count,
                               size_t *size);

/** Stores an encoded answer at `key`; false when the library refused (its
 *  message logged through srv_cache_insert_failed, unless the key was
 *  already there). */
bool srv_cache_library_insert(srv_cache_library_t *lib, const srv_cache_key_t *key,
                              const void *blob, size_t size);

#endif
