/* memo: a response cache library for tests (../README.md). Entries live in
 * a list under one mutex; Insert and Lookup may run on any server thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "triton/core/tritoncache.h"

typedef struct item {
  struct item *next;
  char *key;
  void **bufs;
  size_t *sizes;
  size_t count;
} item_t;

struct TRITONCACHE_Cache {
  pthread_mutex_t lock;
  item_t *items;
  char log[512];
  unsigned delay_ms; /* each Insert and Lookup first sleeps this long */
};

static TRITONSERVER_Error *fail(TRITONSERVER_Error_Code code, const char *msg) {
  return TRITONSERVER_ErrorNew(code, msg);
}

/* The string value of "key" in a flat JSON object of strings, or "". */
static void setting(const char *config, const char *key, char *out, size_t cap) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  out[0] = '\0';
  const char *at = strstr(config, pattern);
  if (at == NULL) return;
  at += strlen(pattern);
  size_t n = 0;
  while (at[n] != '\0' && at[n] != '"' && n + 1 < cap) n++;
  memcpy(out, at, n);
  out[n] = '\0';
}

static void note(TRITONCACHE_Cache *c, const char *what, const char *key,
                 const char *how) {
  if (c->log[0] == '\0') return;
  FILE *f = fopen(c->log, "a");
  if (f == NULL) return;
  fprintf(f, "%s %s%s%s\n", what, key, how[0] ? " " : "", how);
  fclose(f);
}

TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheInitialize(
    TRITONCACHE_Cache **cache, const char *config) {
  uint32_t major, minor;
  TRITONSERVER_Error *err = TRITONCACHE_ApiVersion(&major, &minor);
  if (err != NULL) return err;
  if (major != TRITONCACHE_API_VERSION_MAJOR || minor < TRITONCACHE_API_VERSION_MINOR)
    return fail(TRITONSERVER_ERROR_UNSUPPORTED, "memo: TRITONCACHE API version mismatch");
  char value[16];
  setting(config, "fail_init", value, sizeof value);
  if (strcmp(value, "1") == 0)
    return fail(TRITONSERVER_ERROR_INVALID_ARG, "memo: told to fail");
  TRITONCACHE_Cache *c = calloc(1, sizeof *c);
  if (c == NULL) return fail(TRITONSERVER_ERROR_INTERNAL, "memo: out of memory");
  pthread_mutex_init(&c->lock, NULL);
  setting(config, "log", c->log, sizeof c->log);
  setting(config, "delay_ms", value, sizeof value);
  c->delay_ms = (unsigned)strtoul(value, NULL, 10);
  *cache = c;
  return NULL;
}

static void item_free(item_t *it) {
  for (size_t i = 0; i < it->count; i++) free(it->bufs[i]);
  free(it->bufs);
  free(it->sizes);
  free(it->key);
  free(it);
}

TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheFinalize(TRITONCACHE_Cache *c) {
  for (item_t *it = c->items, *next; it != NULL; it = next) {
    next = it->next;
    item_free(it);
  }
  pthread_mutex_destroy(&c->lock);
  free(c);
  return NULL;
}

/* A cache across the network: every call waits a round trip. */
static void round_trip(const TRITONCACHE_Cache *c) {
  if (c->delay_ms == 0) return;
  struct timespec t = {.tv_sec = c->delay_ms / 1000, .tv_nsec = (c->delay_ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static item_t *find(TRITONCACHE_Cache *c, const char *key) {
  for (item_t *it = c->items; it != NULL; it = it->next)
    if (strcmp(it->key, key) == 0) return it;
  return NULL;
}

/* Sets our own buffers of the entry's sizes and has the server fill them. */
TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheInsert(
    TRITONCACHE_Cache *c, const char *key, TRITONCACHE_CacheEntry *entry,
    TRITONCACHE_Allocator *alloc) {
  round_trip(c);
  size_t count;
  TRITONSERVER_Error *err = TRITONCACHE_CacheEntryBufferCount(entry, &count);
  if (err != NULL) return err;
  item_t *it = calloc(1, sizeof *it);
  it->key = strdup(key);
  it->bufs = calloc(count ? count : 1, sizeof *it->bufs);
  it->sizes = calloc(count ? count : 1, sizeof *it->sizes);
  it->count = count;
  TRITONSERVER_BufferAttributes *attrs;
  TRITONSERVER_BufferAttributesNew(&attrs);
  for (size_t i = 0; i < count && err == NULL; i++) {
    void *base;
    err = TRITONCACHE_CacheEntryGetBuffer(entry, i, &base, attrs);
    if (err == NULL) err = TRITONSERVER_BufferAttributesByteSize(attrs, &it->sizes[i]);
    if (err == NULL) {
      it->bufs[i] = malloc(it->sizes[i] ? it->sizes[i] : 1);
      err = TRITONCACHE_CacheEntrySetBuffer(entry, i, it->bufs[i], NULL);
    }
  }
  TRITONSERVER_BufferAttributesDelete(attrs);
  if (err == NULL) err = TRITONCACHE_Copy(alloc, entry);
  if (err != NULL) {
    item_free(it);
    return err;
  }
  pthread_mutex_lock(&c->lock);
  bool present = find(c, key) != NULL;
  if (!present) {
    it->next = c->items;
    c->items = it;
  }
  note(c, "insert", key, present ? "present" : "");
  pthread_mutex_unlock(&c->lock);
  if (present) {
    item_free(it);
    return fail(TRITONSERVER_ERROR_ALREADY_EXISTS, "memo: key already exists");
  }
  return NULL;
}

/* Adds our buffers and has the server copy them out, under the lock. */
TRITONCACHE_ISPEC TRITONSERVER_Error *TRITONCACHE_CacheLookup(
    TRITONCACHE_Cache *c, const char *key, TRITONCACHE_CacheEntry *entry,
    TRITONCACHE_Allocator *alloc) {
  round_trip(c);
  pthread_mutex_lock(&c->lock);
  item_t *it = find(c, key);
  note(c, "lookup", key, it != NULL ? "hit" : "miss");
  TRITONSERVER_Error *err = NULL;
  if (it == NULL) {
    err = fail(TRITONSERVER_ERROR_NOT_FOUND, "memo: key not found");
  } else {
    TRITONSERVER_BufferAttributes *attrs;
    TRITONSERVER_BufferAttributesNew(&attrs);
    for (size_t i = 0; i < it->count && err == NULL; i++) {
      err = TRITONSERVER_BufferAttributesSetByteSize(attrs, it->sizes[i]);
      if (err == NULL)
        err = TRITONSERVER_BufferAttributesSetMemoryType(attrs, TRITONSERVER_MEMORY_CPU);
      if (err == NULL) err = TRITONCACHE_CacheEntryAddBuffer(entry, it->bufs[i], attrs);
    }
    TRITONSERVER_BufferAttributesDelete(attrs);
    if (err == NULL) err = TRITONCACHE_Copy(alloc, entry);
  }
  pthread_mutex_unlock(&c->lock);
  return err;
}
