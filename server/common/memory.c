/* Allocation helpers (see memory.h). */
#include "server/common/memory.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

char *srv_strdup(const char *s) {
  char *d = strdup(s);
  if (d == NULL) SRV_FATAL("out of memory");
  return d;
}

char *srv_strndup(const char *s, size_t n) {
  char *d = strndup(s, n);
  if (d == NULL) SRV_FATAL("out of memory");
  return d;
}

void *srv_arena_alloc(upb_Arena *a, size_t size) {
  void *p = upb_Arena_Malloc(a, size ? size : 1);
  if (p == NULL) SRV_FATAL("out of memory");
  return p;
}

void *srv_arena_zalloc(upb_Arena *a, size_t size) {
  void *p = srv_arena_alloc(a, size);
  memset(p, 0, size ? size : 1);
  return p;
}

void *srv_arena_copy(upb_Arena *a, const void *src, size_t size) {
  void *p = srv_arena_alloc(a, size);
  if (size > 0) memcpy(p, src, size);
  return p;
}

const char *srv_arena_strview(upb_Arena *a, upb_StringView v) {
  char *s = srv_arena_alloc(a, v.size + 1);
  if (v.size > 0) memcpy(s, v.data, v.size);
  s[v.size] = '\0';
  return s;
}
