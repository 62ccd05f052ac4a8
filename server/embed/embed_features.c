/* The TRITONSERVER_ServerOptions of features Nereid does not have
 * (response cache, repository agents, peer access). Each accepts the value
 * that asks for nothing, which is Triton's default, so that an application setting
 * Triton's defaults runs unchanged, and refuses with UNSUPPORTED, naming
 * the option and what Nereid lacks, a value that asks for the feature
 * (embed.md, "Options"). Nothing is stored: an accepted value is the
 * behaviour Nereid has. One thread at a time per object (the
 * application's). */
#include <string.h>

#include "server/embed/embed.h"

#define NO_FEATURE(fn, ...) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, fn ": " __VA_ARGS__)

/* Every function here checks its options handle first. */
#define OPTIONS_CHECK(fn, o) \
  if ((o) == NULL) return SRV_EMBED_NULL(fn, "options")

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetResponseCacheByteSize(
    TRITONSERVER_ServerOptions *o, uint64_t size) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetResponseCacheByteSize", o);
  if (size == 0) return NULL;
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetResponseCacheByteSize",
                    "%llu bytes: Nereid has no response cache (0 is the only size)",
                    (unsigned long long)size);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheConfig(TRITONSERVER_ServerOptions *o,
                                                             const char *cache_name,
                                                             const char *config_json) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCacheConfig";
  OPTIONS_CHECK(fn, o);
  if (cache_name == NULL) return SRV_EMBED_NULL(fn, "cache_name");
  if (config_json == NULL) return SRV_EMBED_NULL(fn, "config_json");
  return NO_FEATURE("TRITONSERVER_ServerOptionsSetCacheConfig",
                    "cache '%s': Nereid has no response cache", cache_name);
}

/* Where cache libraries would be found: a search path that asks for no
 * cache by itself. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCacheDirectory";
  OPTIONS_CHECK(fn, o);
  return dir == NULL ? SRV_EMBED_NULL(fn, "cache_dir") : NULL;
}

/* The same for repository agents: a model whose config names one fails to
 * load, with its own error. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetRepoAgentDirectory";
  OPTIONS_CHECK(fn, o);
  return dir == NULL ? SRV_EMBED_NULL(fn, "repoagent_dir") : NULL;
}


/* Peer access only makes copies between GPUs faster in Triton (a failure
 * to enable it is a warning); Nereid's copies work either way. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    TRITONSERVER_ServerOptions *o, bool enable) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetEnablePeerAccess", o);
  return NULL;
}
