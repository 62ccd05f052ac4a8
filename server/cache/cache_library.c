/* Cache libraries through the TRITONCACHE API (cache_library.h), and the
 * server's half of that API: entries, buffers and the copy callback.
 *
 * An insertion hands the library an entry of one buffer, already holding
 * the encoded answer; a library may read it (GetBuffer) or set its own
 * buffer of that size (SetBuffer) and have us copy into it
 * (TRITONCACHE_Copy), which is what Triton's own caches do. A lookup hands
 * an empty entry; the library adds its buffers (AddBuffer) and calls
 * TRITONCACHE_Copy, which copies them out while they are valid; a library
 * that does not call it is read once its lookup returns.
 *
 * The encoding (little end first, host order): "NRC1", u32 output count,
 * then per output u32 name length, the name, u32 datatype, u32 rank, i64
 * dims, u64 byte size, the bytes. A stored answer is checked as it is
 * decoded: it may come from outside the process (a shared redis). */
#include "server/cache/cache_library.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/api/error.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "triton/core/tritoncache.h"

typedef TRITONSERVER_Error *(*init_fn_t)(TRITONCACHE_Cache **, const char *);
typedef TRITONSERVER_Error *(*fini_fn_t)(TRITONCACHE_Cache *);
typedef TRITONSERVER_Error *(*io_fn_t)(TRITONCACHE_Cache *, const char *,
                                       TRITONCACHE_CacheEntry *, TRITONCACHE_Allocator *);

struct srv_cache_library {
  void *dl;
  char *name;
  TRITONCACHE_Cache *impl;
  init_fn_t init;
  fini_fn_t fini;
  io_fn_t insert, lookup;
};

/* ---- entries and the allocator (the server's half of the API) ---- */

typedef struct {
  void *base;
  size_t size;
} buffer_t;

enum { ENTRY_BUFFERS_MAX = 64 }; /* a library adding more is refused */

struct TRITONCACHE_CacheEntry {
  buffer_t buffers[ENTRY_BUFFERS_MAX];
  size_t count;
};

struct TRITONCACHE_Allocator {
  bool insert;
  /* insert: the encoded answer, copied into the library's buffer */
  const void *src;
  size_t src_size;
  /* lookup: the answer copied out of the library's buffers */
  void *got;
  size_t got_size;
  bool copied;
};

#define BAD_ARG(...) api_error_new(TRITONSERVER_ERROR_INVALID_ARG, __VA_ARGS__)

TRITONSERVER_Error *TRITONCACHE_ApiVersion(uint32_t *major, uint32_t *minor) {
  if (major == NULL || minor == NULL) return BAD_ARG("major and minor must not be NULL");
  *major = TRITONCACHE_API_VERSION_MAJOR;
  *minor = TRITONCACHE_API_VERSION_MINOR;
  return NULL;
}

TRITONSERVER_Error *TRITONCACHE_CacheEntryBufferCount(TRITONCACHE_CacheEntry *entry,
                                                      size_t *count) {
  if (entry == NULL || count == NULL) return BAD_ARG("entry and count must not be NULL");
  *count = entry->count;
  return NULL;
}

/* Size and kind from attributes a library made; host memory only. */
static TRITONSERVER_Error *attrs_read(TRITONSERVER_BufferAttributes *a, size_t *size) {
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  TRITONSERVER_Error *err = TRITONSERVER_BufferAttributesByteSize(a, size);
  if (err == NULL) err = TRITONSERVER_BufferAttributesMemoryType(a, &type);
  if (err == NULL && type == TRITONSERVER_MEMORY_GPU)
    err = BAD_ARG("only buffers in CPU memory are supported in cache entries");
  return err;
}

TRITONSERVER_Error *TRITONCACHE_CacheEntryAddBuffer(
    TRITONCACHE_CacheEntry *entry, void *base,
    TRITONSERVER_BufferAttributes *buffer_attributes) {
  if (entry == NULL || buffer_attributes == NULL)
    return BAD_ARG("entry and buffer_attributes must not be NULL");
  if (entry->count == ENTRY_BUFFERS_MAX)
    return BAD_ARG("a cache entry holds at most %d buffers", ENTRY_BUFFERS_MAX);
  size_t size;
  TRITONSERVER_Error *err = attrs_read(buffer_attributes, &size);
  if (err != NULL) return err;
  if (base == NULL && size != 0) return BAD_ARG("buffer of %zu bytes at NULL", size);
  entry->buffers[entry->count++] = (buffer_t){.base = base, .size = size};
  return NULL;
}

TRITONSERVER_Error *TRITONCACHE_CacheEntryGetBuffer(
    TRITONCACHE_CacheEntry *entry, size_t index, void **base,
    TRITONSERVER_BufferAttributes *buffer_attributes) {
  if (entry == NULL || base == NULL || buffer_attributes == NULL)
    return BAD_ARG("entry, base and buffer_attributes must not be NULL");
  if (index >= entry->count)
    return BAD_ARG("buffer index %zu out of range: the entry has %zu", index,
                   entry->count);
  *base = entry->buffers[index].base;
  TRITONSERVER_Error *err = TRITONSERVER_BufferAttributesSetByteSize(
      buffer_attributes, entry->buffers[index].size);
  if (err == NULL)
    err = TRITONSERVER_BufferAttributesSetMemoryType(buffer_attributes,
                                                     TRITONSERVER_MEMORY_CPU);
  if (err == NULL)
    err = TRITONSERVER_BufferAttributesSetMemoryTypeId(buffer_attributes, 0);
  return err;
}

TRITONSERVER_Error *TRITONCACHE_CacheEntrySetBuffer(
    TRITONCACHE_CacheEntry *entry, size_t index, void *new_base,
    TRITONSERVER_BufferAttributes *buffer_attributes) {
  if (entry == NULL) return BAD_ARG("entry must not be NULL");
  if (index >= entry->count)
    return BAD_ARG("buffer index %zu out of range: the entry has %zu", index,
                   entry->count);
  size_t size = entry->buffers[index].size;
  if (buffer_attributes != NULL) {
    TRITONSERVER_Error *err = attrs_read(buffer_attributes, &size);
    if (err != NULL) return err;
  }
  if (new_base == NULL && size != 0) return BAD_ARG("buffer of %zu bytes at NULL", size);
  entry->buffers[index] = (buffer_t){.base = new_base, .size = size};
  return NULL;
}

/* The entry's buffers, one after another, in a new block. */
static TRITONSERVER_Error *gather(TRITONCACHE_Allocator *a,
                                  const TRITONCACHE_CacheEntry *e) {
  size_t total = 0;
  for (size_t i = 0; i < e->count; i++) {
    if (e->buffers[i].size > SIZE_MAX - total) return BAD_ARG("cache entry too large");
    total += e->buffers[i].size;
  }
  char *p = malloc(total ? total : 1);
  if (p == NULL) return api_error_new(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  size_t at = 0;
  for (size_t i = 0; i < e->count; i++) {
    if (e->buffers[i].size) memcpy(p + at, e->buffers[i].base, e->buffers[i].size);
    at += e->buffers[i].size;
  }
  free(a->got);
  a->got = p;
  a->got_size = total;
  a->copied = true;
  return NULL;
}

TRITONSERVER_Error *TRITONCACHE_Copy(TRITONCACHE_Allocator *allocator,
                                     TRITONCACHE_CacheEntry *entry) {
  if (allocator == NULL || entry == NULL)
    return BAD_ARG("allocator and entry must not be NULL");
  if (!allocator->insert) return gather(allocator, entry);
  if (entry->count != 1 || entry->buffers[0].size != allocator->src_size)
    return api_error_new(TRITONSERVER_ERROR_INTERNAL,
                         "Expected one cache buffer of %zu bytes, the entry has %zu",
                         allocator->src_size, entry->count);
  if (entry->buffers[0].base != allocator->src && allocator->src_size != 0)
    memcpy(entry->buffers[0].base, allocator->src, allocator->src_size);
  return NULL;
}

/* ---- the encoding ---- */

static const char MAGIC[4] = {'N', 'R', 'C', '1'};

static void put(char **p, const void *src, size_t n) {
  memcpy(*p, src, n);
  *p += n;
}

/* The encoded answer in a new block; NULL when it cannot be sized. */
void *srv_cache_library_encode(const srv_cache_output_t *o, uint32_t n, size_t *size) {
  uint64_t total = sizeof MAGIC + 4;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t one = 4 + strlen(o[i].name) + 4 + 4 + 8ull * o[i].dims_count + 8;
    if (o[i].byte_size > UINT64_MAX / 2 || total > UINT64_MAX / 2 - one - o[i].byte_size)
      return NULL;
    total += one + o[i].byte_size;
  }
  if (total > SIZE_MAX) return NULL;
  char *blob = malloc(total), *p = blob;
  if (blob == NULL) return NULL;
  put(&p, MAGIC, sizeof MAGIC);
  put(&p, &n, 4);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t len = (uint32_t)strlen(o[i].name), type = (uint32_t)o[i].datatype;
    put(&p, &len, 4);
    put(&p, o[i].name, len);
    put(&p, &type, 4);
    put(&p, &o[i].dims_count, 4);
    if (o[i].dims_count) put(&p, o[i].shape, 8ull * o[i].dims_count);
    put(&p, &o[i].byte_size, 8);
    if (o[i].byte_size) put(&p, o[i].data, o[i].byte_size);
  }
  *size = (size_t)total;
  return blob;
}

/* A reader that never passes its end. */
typedef struct {
  char *p, *end;
} reader_t;

static bool take(reader_t *r, void *out, size_t n) {
  if ((size_t)(r->end - r->p) < n) return false;
  if (out != NULL) memcpy(out, r->p, n);
  r->p += n;
  return true;
}

enum { DECODE_OUTPUTS_MAX = 4096, DECODE_RANK_MAX = 64 };

/* Outputs pointing into blob (names NUL-terminated in place: each name's
 * length field is overwritten, it is read first). -1 when malformed. */
static int64_t decode(char *blob, size_t size, srv_cache_output_t **outs) {
  reader_t r = {blob, blob + size};
  char magic[4];
  uint32_t n;
  if (!take(&r, magic, 4) || memcmp(magic, MAGIC, 4) != 0 || !take(&r, &n, 4) ||
      n > DECODE_OUTPUTS_MAX)
    return -1;
  srv_cache_output_t *o = calloc(n ? n : 1, sizeof *o);
  if (o == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < n; i++) {
    char *len_at = r.p;
    uint32_t len, type, rank;
    uint64_t bytes;
    if (!take(&r, &len, 4) || (size_t)(r.end - r.p) < len) goto bad;
    /* Shift the name back over its length field to end it with a NUL. */
    memmove(len_at, r.p, len);
    len_at[len] = '\0';
    o[i].name = len_at;
    r.p += len;
    if (!take(&r, &type, 4) || !take(&r, &rank, 4) || rank > DECODE_RANK_MAX) goto bad;
    o[i].datatype = (TRITONSERVER_DataType)type;
    o[i].dims_count = rank;
    o[i].shape = (const int64_t *)r.p; /* read unaligned-safe by memcpy users below */
    if (!take(&r, NULL, 8ull * rank) || !take(&r, &bytes, 8) ||
        (uint64_t)(r.end - r.p) < bytes)
      goto bad;
    o[i].data = r.p;
    o[i].byte_size = bytes;
    r.p += bytes;
  }
  if (r.p != r.end) goto bad;
  *outs = o;
  return n;
bad:
  free(o);
  return -1;
}

/* ---- loading ---- */

static srv_status_t *symbol(srv_cache_library_t *lib, const char *path, const char *name,
                            void **out) {
  *out = dlsym(lib->dl, name);
  if (*out == NULL)
    return srv_status_new(GRPC_STATUS_NOT_FOUND,
                          "unable to find required entrypoint '%s' in "
                          "cache library '%s'",
                          name, path);
  return NULL;
}

static srv_status_t *from_error(TRITONSERVER_Error *err, const char *what,
                                const char *name) {
  srv_status_t *st =
      srv_status_new(api_error_grpc_code(TRITONSERVER_ErrorCode(err)),
                     "%s cache '%s': %s", what, name, TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return st;
}

srv_status_t *srv_cache_library_open(const char *dir, const char *name,
                                     const char *config_json, srv_cache_library_t **out) {
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s/%s/libtritoncache_%s.so", dir, name, name);
  struct stat sb;
  if (n < 0 || (size_t)n >= sizeof path || stat(path, &sb) != 0) /* Triton's text. */
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "unable to find 'libtritoncache_%s.so' for cache. Searched: %s",
                          name, dir);
  srv_cache_library_t *lib = calloc(1, sizeof *lib);
  if (lib == NULL) SRV_FATAL("out of memory");
  lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib->dl == NULL) {
    srv_status_t *st = srv_status_new(
        GRPC_STATUS_NOT_FOUND, "unable to load cache library '%s': %s", path, dlerror());
    free(lib);
    return st;
  }
  srv_status_t *st =
      symbol(lib, path, "TRITONCACHE_CacheInitialize", (void **)&lib->init);
  if (st == NULL)
    st = symbol(lib, path, "TRITONCACHE_CacheFinalize", (void **)&lib->fini);
  if (st == NULL)
    st = symbol(lib, path, "TRITONCACHE_CacheLookup", (void **)&lib->lookup);
  if (st == NULL)
    st = symbol(lib, path, "TRITONCACHE_CacheInsert", (void **)&lib->insert);
  if (st == NULL) {
    SRV_INFO("Creating TritonCache with name: '%s', libpath: '%s', cache_config: '%s'",
             name, path, config_json);
    TRITONSERVER_Error *err = lib->init(&lib->impl, config_json);
    if (err != NULL)
      st = from_error(err, "failed to initialize", name);
    else if (lib->impl == NULL)
      st = srv_status_new(GRPC_STATUS_INTERNAL,
                          "Failed to initialize cache implementation");
  }
  if (st != NULL) {
    dlclose(lib->dl);
    free(lib);
    return st;
  }
  lib->name = srv_strdup(name);
  *out = lib;
  return NULL;
}

void srv_cache_library_close(srv_cache_library_t *lib) {
  if (lib == NULL) return;
  TRITONSERVER_Error *err = lib->fini(lib->impl);
  if (err != NULL) {
    SRV_ERROR("failed finalizing cache '%s': %s", lib->name,
              TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
  dlclose(lib->dl);
  free(lib->name);
  free(lib);
}

/* ---- lookup and insertion ---- */

int64_t srv_cache_library_lookup(srv_cache_library_t *lib, const srv_cache_key_t *key,
                                 void **blob, srv_cache_output_t **outs) {
  char text[33];
  srv_cache_key_text(key, text);
  TRITONCACHE_CacheEntry entry = {.count = 0};
  TRITONCACHE_Allocator a = {.insert = false};
  TRITONSERVER_Error *err = lib->lookup(lib->impl, text, &entry, &a);
  if (err == NULL && !a.copied) err = gather(&a, &entry);
  if (err != NULL) {
    if (TRITONSERVER_ErrorCode(err) != TRITONSERVER_ERROR_NOT_FOUND)
      SRV_VERBOSE(1, "cache '%s': lookup of %s failed: %s", lib->name, text,
                  TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
    free(a.got);
    return -1;
  }
  int64_t n = decode(a.got, a.got_size, outs);
  if (n < 0) {
    SRV_VERBOSE(1, "cache '%s': the entry at %s is not an answer Nereid stored",
                lib->name, text);
    free(a.got);
    return -1;
  }
  *blob = a.got;
  return n;
}

bool srv_cache_library_insert(srv_cache_library_t *lib, const srv_cache_key_t *key,
                              const void *blob, size_t size) {
  char text[33];
  srv_cache_key_text(key, text);
  TRITONCACHE_CacheEntry entry = {.count = 1};
  entry.buffers[0] = (buffer_t){.base = (void *)blob, .size = size};
  TRITONCACHE_Allocator a = {.insert = true, .src = blob, .src_size = size};
  TRITONSERVER_Error *err = lib->insert(lib->impl, text, &entry, &a);
  if (err == NULL) return true;
  /* Two misses of one key racing: the first stays, as in Triton. */
  if (TRITONSERVER_ErrorCode(err) != TRITONSERVER_ERROR_ALREADY_EXISTS)
    srv_cache_insert_failed(key, TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return false;
}
