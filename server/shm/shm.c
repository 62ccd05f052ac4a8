/* The table of regions (see shm.h). Readers find names in the published
 * table inside an epoch section; writers serialize on `write`, publish a
 * new table and retire the old one, whose reclaim drops the references of
 * the regions that left it: a reader that found a region in the old table
 * may still take its reference until then. */
#include "server/shm/shm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "actors/epoch.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/cuda/cuda.h"
#include "server/shm/shm_guard.h"
#include "server/shm/shm_region.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Triton keeps keys with this prefix for its Python backend's own regions. */
#define RESERVED_KEY_PREFIX "triton_python_backend_shm_region_"

typedef struct table {
  act_epoch_entry_t retired; /* first: the epoch callback gets this */
  uint32_t count;
  srv_shm_region_t **regions; /* sorted by name */
  srv_shm_region_t **leaving; /* unref'd when this table is reclaimed */
  uint32_t leaving_count;
} table_t;

struct srv_shm {
  /* seq_cst store and load, as actors/epoch.h asks. */
  _Atomic(table_t *) current;
  act_epoch_t *epoch;
  pthread_mutex_t write;
  bool enabled;
};

static table_t *table_new(uint32_t count) {
  table_t *t = calloc(1, sizeof *t);
  if (t == NULL) SRV_FATAL("out of memory");
  t->count = count;
  t->regions = calloc(count ? count : 1, sizeof *t->regions);
  if (t->regions == NULL) SRV_FATAL("out of memory");
  return t;
}

static void table_free(table_t *t) {
  for (uint32_t i = 0; i < t->leaving_count; i++) srv_shm_region_unref(t->leaving[i]);
  free(t->leaving);
  free(t->regions);
  free(t);
}

static void table_reclaim(act_epoch_entry_t *retired) { table_free((table_t *)retired); }

/* Compares `len` bytes at `name` with a NUL-terminated region name. */
static int name_cmp(const char *name, size_t len, const char *region) {
  size_t rlen = strlen(region);
  int c = memcmp(name, region, len < rlen ? len : rlen);
  if (c != 0) return c;
  return len < rlen ? -1 : len > rlen;
}

/* Index of `name` in t, or where it would go (then *found is false). */
static uint32_t table_find(const table_t *t, const char *name, size_t len, bool *found) {
  uint32_t lo = 0, hi = t->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = name_cmp(name, len, t->regions[mid]->name);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  *found = false;
  return lo;
}

srv_shm_t *srv_shm_new(bool enabled) {
  srv_shm_t *shm = calloc(1, sizeof *shm);
  if (shm == NULL) SRV_FATAL("out of memory");
  shm->epoch = act_epoch_new();
  pthread_mutex_init(&shm->write, NULL);
  shm->enabled = enabled;
  if (enabled) srv_shm_guard_install();
  atomic_init(&shm->current, table_new(0));
  return shm;
}

void srv_shm_free(srv_shm_t *shm) {
  act_epoch_free(shm->epoch); /* reclaims the retired tables */
  table_t *t = atomic_load_explicit(&shm->current, memory_order_relaxed);
  for (uint32_t i = 0; i < t->count; i++) srv_shm_region_unref(t->regions[i]);
  table_free(t);
  pthread_mutex_destroy(&shm->write);
  free(shm);
}

static srv_status_t *disabled(void) {
  return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                        "Client shared memory is disabled. Start the server with "
                        "'--allow-client-shm=true' to enable.");
}

/* Publishes `next` in place of the current table; `leaving` regions (moved
 * in) lose the table's reference once no reader can see the old table.
 * Under `write`. */
static void table_publish(srv_shm_t *shm, table_t *next, srv_shm_region_t **leaving,
                          uint32_t leaving_count) {
  table_t *old = atomic_load_explicit(&shm->current, memory_order_relaxed);
  old->leaving = leaving;
  old->leaving_count = leaving_count;
  atomic_store_explicit(&shm->current, next, memory_order_seq_cst);
  act_epoch_retire(shm->epoch, &old->retired, table_reclaim);
  act_epoch_poll(shm->epoch);
}

static srv_status_t *name_check(const char *name, size_t len) {
  if (len == 0) return BAD("'region name' is necessary to register a shared memory region");
  if (len > SRV_SHM_NAME_MAX)
    return BAD("shared memory region name is %zu bytes, longer than the limit of %d", len,
               SRV_SHM_NAME_MAX);
  if (memchr(name, 0, len) != NULL)
    return BAD("shared memory region name must not contain a NUL byte");
  return NULL;
}

/* Keys name POSIX shared-memory objects: one optional leading '/' and a
 * file name, so that shm_open can only reach /dev/shm. */
static srv_status_t *key_check(const char *name, const char *key, size_t len) {
  char q[SRV_QUOTE_SIZE], k[SRV_QUOTE_SIZE];
  const char *file = key;
  size_t file_len = len;
  if (file_len > 0 && file[0] == '/') {
    file++;
    file_len--;
  }
  size_t reserved = strlen(RESERVED_KEY_PREFIX);
  if (file_len >= reserved && memcmp(file, RESERVED_KEY_PREFIX, reserved) == 0)
    return BAD("cannot register shared memory region '%s' with key '%s' as the key contains "
               "the reserved prefix '" RESERVED_KEY_PREFIX "'",
               srv_quote_str(q, name), srv_quote(k, key, len));
  if (file_len == 0 || len > SRV_SHM_KEY_MAX || memchr(key, 0, len) != NULL ||
      memchr(file, '/', file_len) != NULL || (file_len == 1 && file[0] == '.') ||
      (file_len == 2 && file[0] == '.' && file[1] == '.'))
    return BAD("failed to register shared memory region '%s': invalid args: key '%s' is not "
               "the name of a POSIX shared memory object ('/name', at most %d bytes, no "
               "other '/')",
               srv_quote_str(q, name), srv_quote(k, key, len), SRV_SHM_KEY_MAX);
  return NULL;
}

/* Adds r (moved in) to the table, unless its name is taken. */
static srv_status_t *table_add(srv_shm_t *shm, srv_shm_region_t *r) {
  pthread_mutex_lock(&shm->write);
  table_t *cur = atomic_load_explicit(&shm->current, memory_order_relaxed);
  bool found;
  uint32_t at = table_find(cur, r->name, strlen(r->name), &found);
  srv_status_t *st = NULL;
  char q[SRV_QUOTE_SIZE];
  if (found)
    st = srv_status_new(GRPC_STATUS_ALREADY_EXISTS,
                        "shared memory region '%s' already in manager",
                        srv_quote_str(q, r->name));
  else if (cur->count >= SRV_SHM_REGIONS_MAX)
    st = srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                        "failed to register shared memory region '%s': %d regions are "
                        "registered, the most the server keeps",
                        srv_quote_str(q, r->name), SRV_SHM_REGIONS_MAX);
  if (st == NULL) {
    table_t *next = table_new(cur->count + 1);
    memcpy(next->regions, cur->regions, at * sizeof *next->regions);
    next->regions[at] = r;
    memcpy(next->regions + at + 1, cur->regions + at,
           (cur->count - at) * sizeof *next->regions);
    table_publish(shm, next, NULL, 0);
  }
  pthread_mutex_unlock(&shm->write);
  if (st != NULL) srv_shm_region_unref(r);
  return st;
}

/* Whether a name is taken, before the work of mapping (table_add checks
 * again under the lock). */
static bool name_taken(srv_shm_t *shm, const char *name, size_t len) {
  act_epoch_enter(shm->epoch);
  table_t *t = atomic_load_explicit(&shm->current, memory_order_seq_cst);
  bool found;
  table_find(t, name, len, &found);
  act_epoch_exit(shm->epoch);
  return found;
}

static srv_status_t *already(const char *name, size_t len) {
  char q[SRV_QUOTE_SIZE];
  return srv_status_new(GRPC_STATUS_ALREADY_EXISTS,
                        "shared memory region '%s' already in manager",
                        srv_quote(q, name, len));
}

srv_status_t *srv_shm_register_system(srv_shm_t *shm, const char *name, size_t name_len,
                                      const char *key, size_t key_len, uint64_t offset,
                                      uint64_t byte_size) {
  if (!shm->enabled) return disabled();
  srv_status_t *st = name_check(name, name_len);
  if (st != NULL) return st;
  char *n = srv_strndup(name, name_len);
  st = key_check(n, key, key_len);
  if (st == NULL && name_taken(shm, name, name_len)) st = already(name, name_len);
  srv_shm_region_t *r = NULL;
  if (st == NULL) {
    char *k = srv_strndup(key, key_len);
    st = srv_shm_region_system(n, k, offset, byte_size, &r);
    free(k);
  }
  free(n);
  if (st != NULL) return st;
  return table_add(shm, r);
}

srv_status_t *srv_shm_register_cuda(srv_shm_t *shm, const char *name, size_t name_len,
                                    const void *raw_handle, size_t handle_len,
                                    int64_t device_id, uint64_t byte_size) {
  if (!shm->enabled) return disabled();
  srv_status_t *st = name_check(name, name_len);
  if (st != NULL) return st;
  if (handle_len != SRV_CUDA_IPC_HANDLE_SIZE)
    return BAD("'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t");
  if (name_taken(shm, name, name_len)) return already(name, name_len);
  char *n = srv_strndup(name, name_len);
  srv_shm_region_t *r = NULL;
  st = srv_shm_region_cuda(n, raw_handle, device_id, byte_size, &r);
  free(n);
  if (st != NULL) return st;
  return table_add(shm, r);
}

srv_status_t *srv_shm_unregister(srv_shm_t *shm, srv_shm_kind_t kind, const char *name,
                                 size_t name_len) {
  if (!shm->enabled) return disabled();
  pthread_mutex_lock(&shm->write);
  table_t *cur = atomic_load_explicit(&shm->current, memory_order_relaxed);
  uint32_t gone = 0;
  for (uint32_t i = 0; i < cur->count; i++)
    if (cur->regions[i]->kind == kind &&
        (name_len == 0 || name_cmp(name, name_len, cur->regions[i]->name) == 0))
      gone++;
  if (gone > 0) {
    table_t *next = table_new(cur->count - gone);
    srv_shm_region_t **leaving = calloc(gone, sizeof *leaving);
    if (leaving == NULL) SRV_FATAL("out of memory");
    uint32_t kept = 0, left = 0;
    for (uint32_t i = 0; i < cur->count; i++) {
      srv_shm_region_t *r = cur->regions[i];
      if (r->kind == kind && (name_len == 0 || name_cmp(name, name_len, r->name) == 0))
        leaving[left++] = r;
      else
        next->regions[kept++] = r;
    }
    table_publish(shm, next, leaving, left);
  }
  pthread_mutex_unlock(&shm->write);
  return NULL;
}

srv_status_t *srv_shm_status(srv_shm_t *shm, srv_shm_kind_t kind, const char *name,
                             size_t name_len,
                             void (*fn)(void *ctx, const srv_shm_info_t *info), void *ctx) {
  if (!shm->enabled) return disabled();
  const char *kind_name = kind == SRV_SHM_SYSTEM ? "system" : "cuda";
  /* Under `write`: no region leaves the table (and is unmapped) meanwhile. */
  pthread_mutex_lock(&shm->write);
  table_t *cur = atomic_load_explicit(&shm->current, memory_order_relaxed);
  srv_status_t *st = NULL;
  uint32_t from = 0, to = cur->count;
  if (name_len != 0) {
    bool found;
    from = table_find(cur, name, name_len, &found);
    to = from + 1;
    char q[SRV_QUOTE_SIZE];
    if (!found)
      st = srv_status_new(GRPC_STATUS_NOT_FOUND,
                          "Unable to find %s shared memory region: '%s'", kind_name,
                          srv_quote(q, name, name_len));
    else if (cur->regions[from]->kind != kind)
      st = srv_status_new(GRPC_STATUS_NOT_FOUND,
                          "The region named '%s' is registered as %s shared memory, not %s "
                          "shared memory",
                          srv_quote(q, name, name_len),
                          kind == SRV_SHM_SYSTEM ? "CUDA" : "system",
                          kind == SRV_SHM_SYSTEM ? "system" : "CUDA");
  }
  for (uint32_t i = from; st == NULL && i < to; i++) {
    const srv_shm_region_t *r = cur->regions[i];
    if (r->kind != kind) continue;
    srv_shm_info_t info = {.name = r->name,
                           .key = r->key,
                           .offset = r->offset,
                           .byte_size = r->byte_size,
                           .device_id = r->device_id};
    fn(ctx, &info);
  }
  pthread_mutex_unlock(&shm->write);
  return st;
}

/* ---- requests ---- */

srv_status_t *srv_shm_acquire(srv_shm_t *shm, const char *name, size_t name_len,
                              uint64_t offset, uint64_t byte_size, srv_shm_ref_t *out) {
  if (!shm->enabled) return disabled();
  char q[SRV_QUOTE_SIZE];
  act_epoch_enter(shm->epoch);
  table_t *t = atomic_load_explicit(&shm->current, memory_order_seq_cst);
  bool found;
  uint32_t at = table_find(t, name, name_len, &found);
  srv_shm_region_t *r = found ? t->regions[at] : NULL;
  if (r != NULL) srv_shm_region_ref(r);
  act_epoch_exit(shm->epoch);
  if (r == NULL)
    return srv_status_new(GRPC_STATUS_NOT_FOUND, "Unable to find shared memory region: '%s'",
                          srv_quote(q, name, name_len));
  srv_status_t *st = NULL;
  if (offset >= r->byte_size)
    st = BAD("Invalid offset for shared memory region: '%s'", srv_quote_str(q, r->name));
  else if (byte_size > UINT64_MAX - offset)
    st = BAD("Integer overflow detected: byte_size (%llu) + offset (%llu) exceeds maximum "
             "value (%llu) for region '%s'",
             (unsigned long long)byte_size, (unsigned long long)offset,
             (unsigned long long)UINT64_MAX, srv_quote_str(q, r->name));
  else if (offset + byte_size > r->byte_size)
    st = BAD("Invalid offset + byte size for shared memory region: '%s'",
             srv_quote_str(q, r->name));
  if (st == NULL) st = srv_shm_region_check(r);
  if (st != NULL) {
    srv_shm_region_unref(r);
    return st;
  }
  out->region = r;
  out->addr = r->base + offset;
  out->byte_size = byte_size;
  out->memory_type = r->kind == SRV_SHM_CUDA ? TRITONSERVER_MEMORY_GPU : TRITONSERVER_MEMORY_CPU;
  out->memory_type_id = r->kind == SRV_SHM_CUDA ? r->device_id : 0;
  out->output = NULL;
  out->faults = srv_shm_guard_faults(r->guard);
  return NULL;
}

const void *srv_shm_cuda_ipc_handle(const srv_shm_ref_t *ref) {
  return ref->region->kind == SRV_SHM_CUDA ? ref->region->ipc_handle : NULL;
}

void srv_shm_release(srv_shm_ref_t *ref) {
  if (ref->region == NULL) return;
  srv_shm_region_unref(ref->region);
  ref->region = NULL;
}

const char *srv_shm_region_name(const srv_shm_region_t *region) { return region->name; }

bool srv_shm_faulted(const srv_shm_ref_t *ref) {
  return ref->region->kind == SRV_SHM_SYSTEM &&
         srv_shm_guard_faults(ref->region->guard) != ref->faults;
}

srv_shm_uses_t *srv_shm_uses_new(const srv_shm_ref_t *refs, uint32_t n) {
  if (n == 0) return NULL;
  srv_shm_uses_t *u = malloc(sizeof *u + n * sizeof *refs);
  if (u == NULL) SRV_FATAL("out of memory");
  u->count = n;
  memcpy(u->refs, refs, n * sizeof *refs);
  return u;
}

void srv_shm_uses_free(srv_shm_uses_t *u) {
  if (u == NULL) return;
  for (uint32_t i = 0; i < u->count; i++) srv_shm_release(&u->refs[i]);
  free(u);
}

const srv_shm_ref_t *srv_shm_uses_find_output(const srv_shm_uses_t *u, const char *name) {
  for (uint32_t i = 0; i < u->count; i++)
    if (u->refs[i].output != NULL && strcmp(u->refs[i].output, name) == 0)
      return &u->refs[i];
  return NULL;
}
