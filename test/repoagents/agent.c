/* A test repository agent (TRITONREPOAGENT API), built twice: as
 * checksum/libtritonrepoagent_checksum.so and
 * relocate/libtritonrepoagent_relocate.so, so bazel-bin/test/repoagents is a
 * --repoagent-directory with two agents. What it does comes from the
 * model's agent parameters:
 *   record=<file>      appends "<agent> <ACTION> <location>" per action
 *   expect:<file>=<t>  LOAD fails unless <location>/<file> holds exactly <t>
 *   relocate=<text>    LOAD copies the model to an acquired folder, adds
 *                      version folder 1 and file "relocated" holding <text>,
 *                      and points the load there
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triton/core/tritonrepoagent.h"

#ifndef AGENT_NAME
#define AGENT_NAME "agent"
#endif

static const char *const ACTIONS[] = {"LOAD", "LOAD_COMPLETE", "LOAD_FAIL", "UNLOAD",
                                      "UNLOAD_COMPLETE"};

static int initialized;

TRITONSERVER_Error *TRITONREPOAGENT_Initialize(TRITONREPOAGENT_Agent *agent) {
  uint32_t major, minor;
  TRITONSERVER_Error *e = TRITONREPOAGENT_ApiVersion(&major, &minor);
  if (e != NULL) return e;
  if (major != TRITONREPOAGENT_API_VERSION_MAJOR ||
      minor < TRITONREPOAGENT_API_VERSION_MINOR)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED, "API version mismatch");
  initialized++;
  return TRITONREPOAGENT_SetState(agent, &initialized);
}

static char *file_read(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *buf = calloc(1, 65537);
  size_t n = buf != NULL ? fread(buf, 1, 65536, f) : 0;
  (void)n;
  fclose(f);
  return buf;
}

static TRITONSERVER_Error *expect(const char *loc, const char *file, const char *want) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", loc, file);
  char *got = file_read(path);
  int same = got != NULL && strcmp(got, want) == 0;
  free(got);
  if (same) return NULL;
  char msg[4200];
  snprintf(msg, sizeof msg, "checksum mismatch for '%s'", file);
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, msg);
}

static TRITONSERVER_Error *relocate(TRITONREPOAGENT_Agent *agent,
                                    TRITONREPOAGENT_AgentModel *model, const char *loc,
                                    const char *text) {
  const char *dst;
  TRITONSERVER_Error *e = TRITONREPOAGENT_ModelRepositoryLocationAcquire(
      agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, &dst);
  if (e != NULL) return e;
  char cmd[13000];
  snprintf(cmd, sizeof cmd, "cp -a '%s/.' '%s/' && mkdir -p '%s/1'", loc, dst, dst);
  if (system(cmd) != 0)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "copy failed");
  char path[4200];
  snprintf(path, sizeof path, "%s/relocated", dst);
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "write failed");
  fputs(text, f);
  fclose(f);
  return TRITONREPOAGENT_ModelRepositoryUpdate(agent, model,
                                               TRITONREPOAGENT_ARTIFACT_FILESYSTEM, dst);
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelAction(TRITONREPOAGENT_Agent *agent,
                                                TRITONREPOAGENT_AgentModel *model,
                                                const TRITONREPOAGENT_ActionType action) {
  void *state;
  TRITONSERVER_Error *e = TRITONREPOAGENT_State(agent, &state);
  if (e != NULL) return e;
  if (state != &initialized)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "agent state lost");
  TRITONREPOAGENT_ArtifactType type;
  const char *loc;
  if ((e = TRITONREPOAGENT_ModelRepositoryLocation(agent, model, &type, &loc)) != NULL)
    return e;
  uint32_t n;
  if ((e = TRITONREPOAGENT_ModelParameterCount(agent, model, &n)) != NULL) return e;
  for (uint32_t i = 0; i < n; i++) {
    const char *k, *v;
    if ((e = TRITONREPOAGENT_ModelParameter(agent, model, i, &k, &v)) != NULL) return e;
    if (strcmp(k, "record") == 0) {
      FILE *f = fopen(v, "a");
      if (f != NULL) {
        fprintf(f, "%s %s %s\n", AGENT_NAME, ACTIONS[action], loc);
        fclose(f);
      }
    }
  }
  if (action != TRITONREPOAGENT_ACTION_LOAD) return NULL;
  /* The config reaches the agent as JSON. */
  TRITONSERVER_Message *cfg;
  if ((e = TRITONREPOAGENT_ModelConfig(agent, model, 1, &cfg)) != NULL) return e;
  const char *json;
  size_t len;
  e = TRITONSERVER_MessageSerializeToJson(cfg, &json, &len);
  int named = e == NULL && strstr(json, "\"model_repository_agents\"") != NULL;
  TRITONSERVER_MessageDelete(cfg);
  if (e != NULL) return e;
  if (!named)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "config lacks agents");
  for (uint32_t i = 0; i < n; i++) {
    const char *k, *v;
    if ((e = TRITONREPOAGENT_ModelParameter(agent, model, i, &k, &v)) != NULL) return e;
    if (strncmp(k, "expect:", 7) == 0 && (e = expect(loc, k + 7, v)) != NULL) return e;
    if (strcmp(k, "relocate") == 0 && (e = relocate(agent, model, loc, v)) != NULL)
      return e;
  }
  return NULL;
}
