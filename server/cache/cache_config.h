/* Which response cache the flags ask for: tritonserver's
 * `--cache-config=<cache>,<key>=<value>` (repeatable) and its deprecated
 * `--response-cache-byte-size`, checked with Triton's texts. `local` is
 * built in; any other name is a cache library (cache.md). Pure: any
 * thread. */
#ifndef NEREID_SERVER_CACHE_CACHE_CONFIG_H
#define NEREID_SERVER_CACHE_CACHE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"

/** The cache the flags chose. */
typedef struct {
  char *name;          /* NULL: no cache; "local", or a library's name */
  uint64_t local_size; /* local's size in bytes */
  /* A library's settings as a JSON object of strings (a later value of a
   * key wins), as tritonserver hands them to TRITONCACHE_CacheInitialize. */
  char *config_json;
} srv_cache_choice_t;

/** Fills *out (free it with srv_cache_choice_free, also on error).
 *  `configs`: the --cache-config values in order; `byte_size`:
 *  --response-cache-byte-size (0: not given). On error the status names the
 *  flag, the value and the reason. */
srv_status_t *srv_cache_config_parse(char *const *configs, size_t count,
                                     uint64_t byte_size, srv_cache_choice_t *out);

void srv_cache_choice_free(srv_cache_choice_t *c);

#endif
