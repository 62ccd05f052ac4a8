/* Repository agents (TRITONREPOAGENT API) around a model's load and unload:
 * see repository.md, "Repository agents". Everything here blocks (dlopen,
 * agent code, file copies): loader threads only. A chain belongs to the
 * one job or private folder holding it; agent libraries are shared by all
 * models under a lock. */
#ifndef NEREID_SERVER_REPOSITORY_REPO_AGENT_H
#define NEREID_SERVER_REPOSITORY_REPO_AGENT_H

#include "proto/model_config.upb.h"
#include "server/common/status.h"

typedef struct repo_agents repo_agents_t;

/** The config's agents, in order, each given LOAD: finds and opens their
 *  libraries under `agent_dir` (<dir>/<name>/libtritonrepoagent_<name>.so),
 *  starts their models with `*dir` as location. An agent that points the
 *  model elsewhere replaces *dir (malloc'ed). A config without agents:
 *  NULL status, *out NULL. On error the agents already called get
 *  LOAD_FAIL, and the agent's (or Triton's) message comes back. */
srv_status_t *repo_agents_load(const char *agent_dir, const inference_ModelConfig *c,
                               char **dir, repo_agents_t **out);
/** After the load: LOAD_COMPLETE (ok) or LOAD_FAIL, in reverse order; a
 *  failed chain is freed. */
void repo_agents_loaded(repo_agents_t *a, bool ok);
/** The end of a chain: the actions its state still owes (LOAD_FAIL after
 *  LOAD; UNLOAD and UNLOAD_COMPLETE after LOAD_COMPLETE), then
 *  ModelFinalize, and the agent libraries are let go. NULL: nothing. */
void repo_agents_free(repo_agents_t *a);

#endif
