/* Nereid's ABI-compatible declaration of Triton's cache C API (TRITONCACHE,
 * API 0.1): what a response cache library (libtritoncache_<name>.so)
 * implements and what the server offers it. Names, signatures and version
 * match Triton's tritoncache.h, so a cache built against Triton loads
 * unchanged. Nereid's side: server/cache/cache_library.c. */
#ifndef NEREID_TRITON_CORE_TRITONCACHE_H
#define NEREID_TRITON_CORE_TRITONCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TRITONCACHE_DECLSPEC marks what the server provides (exported when the
 * server is compiled: _COMPILING_TRITONCACHE, as in Triton, or Nereid's
 * _COMPILING_TRITONSERVER); TRITONCACHE_ISPEC what a cache library
 * implements (plain declarations: a library exports them as it builds). */
#if (defined(_COMPILING_TRITONCACHE) || defined(_COMPILING_TRITONSERVER)) && \
    defined(__GNUC__)
#define TRITONCACHE_DECLSPEC __attribute__((__visibility__("default")))
#define TRITONCACHE_ISPEC
#else
#define TRITONCACHE_DECLSPEC
#define TRITONCACHE_ISPEC
#endif

typedef struct TRITONCACHE_Cache TRITONCACHE_Cache;
typedef struct TRITONCACHE_CacheEntry TRITONCACHE_CacheEntry;
typedef struct TRITONCACHE_Allocator TRITONCACHE_Allocator;

/* A library built against MAJOR.MINOR runs on a server reporting the same
 * MAJOR and a MINOR at least as large. */
#define TRITONCACHE_API_VERSION_MAJOR 0
#define TRITONCACHE_API_VERSION_MINOR 1

/* ---- Provided by the server ---- */

/** The TRITONCACHE version the server implements. */
TRITONCACHE_DECLSPEC TRITONSERVER_Error *TRITONCACHE_ApiVersion(uint32_t *major,
                                                                uint32_t *minor);

/** How many buffers `entry` holds. */
TRITONCACHE_DECLSPEC TRITONSERVER_Error *TRITONCACHE_CacheEntryBufferCount(
    TRITONCACHE_CacheEntry *entry, size_t *count);

/** Appends a buffer (host memory only) described by `buffer_attributes`
 *  (byte size, memory type), which the caller made and still owns. The
 *  entry does not own `base`. */
TRITONCACHE_DECLSPEC TRITONSERVER_Error *TRITONCACHE_CacheEntryAddBuffer(
    TRITONCACHE_CacheEntry *entry, void *base,
    TRITONSERVER_BufferAttributes *buffer_attributes);

/** Buffer `index` (0 <= index < count): its address, and its size and
 *  memory kind written into `buffer_attributes`, which the caller made.
 *  Valid until the entry goes (for an insertion: until the insert call
 *  returns). */
TRITONCACHE_DECLSPEC TRITONSERVER_Error *TRITONCACHE_CacheEntryGetBuffer(
    TRITONCACHE_CacheEntry *entry, size_t index, void **base,
    TRITONSERVER_BufferAttributes *buffer_attributes);

/** Points buffer `index` at `new_base` (memory the caller owns), with new
 *  attributes when `buffer_attributes` is not NULL: how a cache hands the
 *  server its own buffers to copy into (TRITONCACHE_Copy). */
TRITONCACHE_DECLSPEC TRITONSERVER_Error *TRITONCACHE_CacheEntrySetBuffer(
    TRITONCACHE_CacheEntry *entry, size_t index, void *new_base,
    TRITONSERVER_BufferAttributes *buffer_attributes);

/** Has the server copy through `allocator`: on insertion, from the response
 *  into the entry's buffers (which the cache set); on lookup, from the
 *  entry's buffers (which the cache added) into the response. */
TRITONCACHE_DECLSPEC TRITONSERVER_Error *TRITONCACHE_Copy(
    TRITONCACHE_Allocator *allocator, TRITONCACHE_CacheEntry *entry);

/* ---- Implemented by the cache library (all four required) ---- */

/** Makes a cache from `config`, a JSON object of the --cache-config
 *  settings given for this cache (values as strings). */
TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheInitialize(
    TRITONCACHE_Cache **cache, const char *config);

/** Frees a cache made by TRITONCACHE_CacheInitialize. */
TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheFinalize(TRITONCACHE_Cache *cache);

/** Stores `entry` at `key`. The entry's buffers carry their sizes; the
 *  cache reads them or sets its own and calls TRITONCACHE_Copy. Errors by
 *  convention: INVALID_ARG, ALREADY_EXISTS, INTERNAL. Any thread. */
TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheInsert(
    TRITONCACHE_Cache *cache, const char *key, TRITONCACHE_CacheEntry *entry,
    TRITONCACHE_Allocator *allocator);

/** Finds `key`: the cache adds its buffers to `entry` and calls
 *  TRITONCACHE_Copy. NOT_FOUND when absent. Any thread. */
TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheLookup(
    TRITONCACHE_Cache *cache, const char *key, TRITONCACHE_CacheEntry *entry,
    TRITONCACHE_Allocator *allocator);

#ifdef __cplusplus
}
#endif

#endif
