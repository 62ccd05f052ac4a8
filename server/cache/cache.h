/* The `local` response cache: entries (a response's outputs, copied once)
 * found by request key (key.h), shared by every model of the server under
 * one byte budget, least recently used first out. One mutex guards the
 * index and the LRU list; no copy happens under it (cache.md, "Threads").
 * Every function: any thread. */
#ifndef NEREID_SERVER_CACHE_CACHE_H
#define NEREID_SERVER_CACHE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/cache/key.h"
#include "server/common/status.h"
#include "triton/core/tritonserver.h"

typedef struct srv_cache srv_cache_t;
typedef struct srv_cache_entry srv_cache_entry_t;

/** An output as an entry holds it (and as an insertion gives it). */
typedef struct {
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *shape;
  uint32_t dims_count;
  const void *data; /* host memory; NULL only when byte_size is 0 */
  uint64_t byte_size;
} srv_cache_output_t;

/** A cache of at most `budget` bytes, its index and bookkeeping included.
 *  INVALID_ARG when the budget leaves no room beside the index. */
srv_status_t *srv_cache_new(uint64_t budget, srv_cache_t **out);

/** A cache served by library `name` from `dir` (cache_library.h), given
 *  its settings as JSON. Main thread. */
srv_status_t *srv_cache_new_library(const char *dir, const char *name,
                                    const char *config_json, srv_cache_t **out);

/** Frees c and its entries (finalizing its library). No lookup or insertion may be under
 * way, and every entry a lookup returned was released. */
void srv_cache_free(srv_cache_t *c);

/** The seed of c's keys (srv_cache_key_of). */
uint64_t srv_cache_seed(const srv_cache_t *c);

/** The entry of `key` with a reference the caller gives back with
 *  srv_cache_entry_release, or NULL; a hit becomes the most recently used.
 *  The entry's outputs stay valid and unchanged until the release, even if
 *  it is evicted meanwhile. */
srv_cache_entry_t *srv_cache_lookup(srv_cache_t *c, const srv_cache_key_t *key);

/** e's outputs (*out points into e). */
uint32_t srv_cache_entry_outputs(const srv_cache_entry_t *e,
                                 const srv_cache_output_t **out);

void srv_cache_entry_release(srv_cache_t *c, srv_cache_entry_t *e);

typedef enum {
  SRV_CACHE_INSERTED,
  SRV_CACHE_PRESENT, /* another insertion of the key came first: kept */
  SRV_CACHE_TOO_BIG, /* larger than the whole budget: never stored */
  SRV_CACHE_NO_ROOM, /* evicting all it may still leaves too little */
} srv_cache_insert_t;

/** Copies the outputs into a new entry for `key`, evicting least recently
 *  used entries until it fits. Nothing is kept unless INSERTED. */
srv_cache_insert_t srv_cache_insert(srv_cache_t *c, const srv_cache_key_t *key,
                                    const srv_cache_output_t *outputs, uint32_t count);

/* ---- a library's calls, off the workers (cache_calls.h) ---- */

/** A unit of work for a library cache's call threads: embedded in the
 *  caller's struct; `run` takes it back and frees it. `bytes`: what it
 *  holds, counted against the queue's memory bound. */
typedef struct srv_cache_job {
  struct srv_cache_job *next;
  void (*run)(struct srv_cache_job *job);
  uint64_t bytes;
} srv_cache_job_t;

/** Whether c is a library, whose calls run on its call threads; the local
 *  store is called in place (its calls are in memory and short). */
bool srv_cache_is_library(const srv_cache_t *c);

/** Queues job for c's call threads (c a library); false when the queue is
 *  full, and then job is still the caller's. Any thread. */
bool srv_cache_job_try_push(srv_cache_t *c, srv_cache_job_t *job);

/** The outputs as one malloc'd buffer of *size bytes, in the encoding a
 *  library stores (cache_library.c): what an insertion job carries. NULL
 *  when it would not fit in memory. Any thread. */
void *srv_cache_encode(const srv_cache_output_t *outputs, uint32_t count, size_t *size);

/** Stores an encoded answer (srv_cache_encode) at `key` in library c;
 *  a refusal is logged (srv_cache_insert_failed). A call thread. */
void srv_cache_insert_encoded(srv_cache_t *c, const srv_cache_key_t *key,
                              const void *blob, size_t size);

/** Logs that `key` was not inserted and why, at error level as Triton
 *  does, at most once a second (a full cache fails every insertion; the
 *  skipped lines are counted in the next one). Any thread. */
void srv_cache_insert_failed(const srv_cache_key_t *key, const char *why);

/** What c holds now: bytes charged (index, entries, and evicted entries a
 *  lookup still holds), entries in the index, evictions so far. */
typedef struct {
  uint64_t budget, bytes, entries, evictions;
} srv_cache_usage_t;
void srv_cache_usage(srv_cache_t *c, srv_cache_usage_t *out);

/** Bytes an entry of these outputs takes, bookkeeping included; UINT64_MAX
 *  when that does not fit in 64 bits. */
uint64_t srv_cache_entry_bytes(const srv_cache_output_t *outputs, uint32_t count);

#endif
