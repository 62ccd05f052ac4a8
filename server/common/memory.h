/* The server's allocation helpers: heap strings and upb-arena memory. Out
 * of memory is fatal (SRV_FATAL), as everywhere in the server, so callers
 * never check. Any thread; an arena is used by one thread at a time. */
#ifndef NEREID_SERVER_COMMON_MEMORY_H
#define NEREID_SERVER_COMMON_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "upb/upb.h"

/** strdup, never NULL. */
char *srv_strdup(const char *s);

/** The first n bytes of s as a string, never NULL. */
char *srv_strndup(const char *s, size_t n);

/** `size` bytes (at least 1) from the arena, never NULL. */
void *srv_arena_alloc(upb_Arena *a, size_t size);

/** `size` zeroed bytes (at least 1) from the arena, never NULL. Arena
 *  blocks are reused (pooled), so a record whose fields are not all set
 *  by its maker must come from here, not from srv_arena_alloc. */
void *srv_arena_zalloc(upb_Arena *a, size_t size);

/** A copy of `size` bytes in the arena. */
void *srv_arena_copy(upb_Arena *a, const void *src, size_t size);

/** A NUL-terminated copy of a view (empty views may have data == NULL). */
const char *srv_arena_strview(upb_Arena *a, upb_StringView v);

#endif
