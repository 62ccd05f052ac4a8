/* Which response cache the flags ask for: tritonserver's
 * `--cache-config=<cache>,<key>=<value>` (repeatable) and its deprecated
 * `--response-cache-byte-size`, checked with Triton's texts. Nereid builds
 * in the `local` cache only (cache.md). Pure: any thread. */
#ifndef NEREID_SERVER_CACHE_CACHE_CONFIG_H
#define NEREID_SERVER_CACHE_CACHE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"

/** Sets *local_size to the local cache's size in bytes, 0 for no cache.
 *  `configs`: the --cache-config values in order (a later size wins);
 *  `byte_size`: --response-cache-byte-size (0: not given). On error the
 *  status names the flag, the value and the reason. */
srv_status_t *srv_cache_config_parse(char *const *configs, size_t count,
                                     uint64_t byte_size, uint64_t *local_size);

#endif
