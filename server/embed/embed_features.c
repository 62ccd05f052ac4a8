/* Two TRITONSERVER_ServerOptions setters: the repository-agent search path
 * (a flag like any other) and peer access, which changes nothing in Nereid
 * (embed.md, "Options"). One thread at a time per object (the
 * application's). */
#include <string.h>

#include "server/embed/embed.h"

#define NO_FEATURE(fn, ...) \
  api_error_new(TRITONSERVER_ERROR_UNSUPPORTED, fn ": " __VA_ARGS__)

/* Every function here checks its options handle first. */
#define OPTIONS_CHECK(fn, o) \
  if ((o) == NULL) return SRV_EMBED_NULL(fn, "options")

/* Where repository agents are found: --repoagent-directory. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetRepoAgentDirectory";
  OPTIONS_CHECK(fn, o);
  if (dir == NULL) return SRV_EMBED_NULL(fn, "repoagent_dir");
  return srv_embed_flag_add(o, fn, "repoagent-directory", "%s", dir);
}


/* Peer access only makes copies between GPUs faster in Triton (a failure
 * to enable it is a warning); Nereid's copies work either way. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    TRITONSERVER_ServerOptions *o, bool enable) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetEnablePeerAccess", o);
  return NULL;
}
