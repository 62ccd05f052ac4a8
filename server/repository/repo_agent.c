/* Repository agents: the server side of the TRITONREPOAGENT API and the
 * chain of agents a model's config names (repo_agent.h).
 *
 * Threads: a chain (repo_agents_t) is used by one thread at a time, the
 * loader running the job or folder release that holds it, so an agent
 * never sees two actions of one model at once. Agent libraries (agent_lib)
 * are shared by every model that names them: the list and the use counts
 * sit under `libs_lock`; an agent's Initialize runs once, when its first
 * user opens it, and Finalize when its last user lets it go. */
#include "server/repository/repo_agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/api/error.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/config/model_config.h"
#include "server/model/config_json.h"
#include "server/repository/load_override.h"
#include "triton/core/tritonrepoagent.h"

typedef TRITONSERVER_Error *agent_fn(TRITONREPOAGENT_Agent *);
typedef TRITONSERVER_Error *model_fn(TRITONREPOAGENT_Agent *,
                                     TRITONREPOAGENT_AgentModel *);
typedef TRITONSERVER_Error *action_fn(TRITONREPOAGENT_Agent *,
                                      TRITONREPOAGENT_AgentModel *,
                                      const TRITONREPOAGENT_ActionType);

typedef struct agent_lib {
  char *path;
  void *dl;
  agent_fn *fini;
  model_fn *model_init, *model_fini;
  action_fn *action;
  void *state; /* TRITONREPOAGENT_SetState's: the agent's to guard */
  size_t users;
  struct agent_lib *next;
} agent_lib_t;

static pthread_mutex_t libs_lock = PTHREAD_MUTEX_INITIALIZER;
static agent_lib_t *libs;

/* One agent's view of one model (TRITONREPOAGENT_AgentModel). */
typedef struct {
  agent_lib_t *lib;
  TRITONREPOAGENT_ArtifactType type;
  char *location;
  char **params; /* name, value, name, value... */
  uint32_t param_count;
  char *config_json;
  size_t config_len;
  void *state;
  char *acquired; /* ModelRepositoryLocationAcquire's folder, or NULL */
  int action;     /* the last action given, -1 before LOAD */
  bool initialized;
} agent_model_t;

struct repo_agents {
  agent_model_t *models;
  size_t count;
};

/* Bounds on what a config may ask for. */
enum { AGENTS_MAX = 64, AGENT_PARAMS_MAX = 1024 };

static srv_status_t *status_of(TRITONSERVER_Error *e) {
  srv_status_t *st = srv_status_new(api_error_grpc_code(TRITONSERVER_ErrorCode(e)), "%s",
                                    TRITONSERVER_ErrorMessage(e));
  TRITONSERVER_ErrorDelete(e);
  return st;
}

static void lib_release(agent_lib_t *l) {
  pthread_mutex_lock(&libs_lock);
  bool last = --l->users == 0;
  if (last)
    for (agent_lib_t **p = &libs; *p != NULL; p = &(*p)->next)
      if (*p == l) {
        *p = l->next;
        break;
      }
  pthread_mutex_unlock(&libs_lock);
  if (!last) return;
  if (l->fini != NULL) {
    TRITONSERVER_Error *e = l->fini((TRITONREPOAGENT_Agent *)l);
    if (e != NULL) {
      SRV_ERROR("repository agent '%s' finalize: %s", l->path,
                TRITONSERVER_ErrorMessage(e));
      TRITONSERVER_ErrorDelete(e);
    }
  }
  dlclose(l->dl);
  free(l->path);
  free(l);
}

/* The library of agent `name`, opened (and initialized) on first use.
 * Held under the lock throughout, so two loads naming a new agent open it
 * once. */
static srv_status_t *lib_acquire(const char *dir, const char *name, agent_lib_t **out) {
  char path[PATH_MAX];
  struct stat sb;
  if (strchr(name, '/') != NULL || name[0] == '\0' || strcmp(name, "..") == 0 ||
      (size_t)snprintf(path, sizeof path, "%s/%s/libtritonrepoagent_%s.so", dir, name,
                       name) >= sizeof path ||
      stat(path, &sb) != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "unable to find 'libtritonrepoagent_%s.so' for repo agent "
                          "'%s', searched: %s",
                          name, name, dir);
  srv_status_t *st = NULL;
  pthread_mutex_lock(&libs_lock);
  agent_lib_t *l = libs;
  while (l != NULL && strcmp(l->path, path) != 0) l = l->next;
  if (l != NULL) {
    l->users++;
    goto out;
  }
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (dl == NULL) {
    st = srv_status_new(GRPC_STATUS_NOT_FOUND, "unable to load shared library: %s",
                        dlerror());
    goto out;
  }
  l = calloc(1, sizeof *l);
  if (l == NULL) SRV_FATAL("out of memory");
  l->dl = dl;
  l->path = srv_strdup(path);
  l->fini = (agent_fn *)dlsym(dl, "TRITONREPOAGENT_Finalize");
  l->model_init = (model_fn *)dlsym(dl, "TRITONREPOAGENT_ModelInitialize");
  l->model_fini = (model_fn *)dlsym(dl, "TRITONREPOAGENT_ModelFinalize");
  l->action = (action_fn *)dlsym(dl, "TRITONREPOAGENT_ModelAction");
  agent_fn *init = (agent_fn *)dlsym(dl, "TRITONREPOAGENT_Initialize");
  TRITONSERVER_Error *e = NULL;
  if (l->action == NULL)
    st =
        srv_status_new(GRPC_STATUS_NOT_FOUND,
                       "unable to find required entrypoint 'TRITONREPOAGENT_ModelAction' "
                       "in shared library '%s'",
                       path);
  else if (init != NULL && (e = init((TRITONREPOAGENT_Agent *)l)) != NULL)
    st = status_of(e);
  if (st != NULL) {
    dlclose(dl);
    free(l->path);
    free(l);
    l = NULL;
    goto out;
  }
  l->users = 1;
  l->next = libs;
  libs = l;
out:
  pthread_mutex_unlock(&libs_lock);
  *out = l;
  return st;
}

static const char *action_name(int a) {
  static const char *const names[] = {
      "TRITONREPOAGENT_ACTION_LOAD", "TRITONREPOAGENT_ACTION_LOAD_COMPLETE",
      "TRITONREPOAGENT_ACTION_LOAD_FAIL", "TRITONREPOAGENT_ACTION_UNLOAD",
      "TRITONREPOAGENT_ACTION_UNLOAD_COMPLETE"};
  return a >= 0 && a <= 4 ? names[a] : "not set";
}

static srv_status_t *model_act(agent_model_t *m, TRITONREPOAGENT_ActionType a) {
  m->action = (int)a;
  TRITONSERVER_Error *e =
      m->lib->action((TRITONREPOAGENT_Agent *)m->lib, (TRITONREPOAGENT_AgentModel *)m, a);
  return e != NULL ? status_of(e) : NULL;
}

/* For the actions whose errors change nothing: logged, as Triton does. */
static void model_act_logged(agent_model_t *m, TRITONREPOAGENT_ActionType a) {
  srv_status_t *st = model_act(m, a);
  if (st == NULL) return;
  SRV_ERROR("Agent model returns error on %s: %s", action_name((int)a),
            srv_status_message(st));
  srv_status_free(st);
}

static void model_end(agent_model_t *m) {
  if (m->action == TRITONREPOAGENT_ACTION_LOAD)
    model_act_logged(m, TRITONREPOAGENT_ACTION_LOAD_FAIL);
  if (m->action == TRITONREPOAGENT_ACTION_LOAD_COMPLETE)
    model_act_logged(m, TRITONREPOAGENT_ACTION_UNLOAD);
  if (m->action == TRITONREPOAGENT_ACTION_UNLOAD)
    model_act_logged(m, TRITONREPOAGENT_ACTION_UNLOAD_COMPLETE);
  if (m->initialized && m->lib->model_fini != NULL) {
    TRITONSERVER_Error *e = m->lib->model_fini((TRITONREPOAGENT_Agent *)m->lib,
                                               (TRITONREPOAGENT_AgentModel *)m);
    if (e != NULL) {
      SRV_ERROR("repository agent model finalize: %s", TRITONSERVER_ErrorMessage(e));
      TRITONSERVER_ErrorDelete(e);
    }
  }
  if (m->acquired != NULL) srv_load_override_remove(m->acquired);
  free(m->acquired);
  free(m->location);
  for (uint32_t i = 0; i < 2 * m->param_count; i++) free(m->params[i]);
  free(m->params);
  free(m->config_json);
  lib_release(m->lib);
}

void repo_agents_free(repo_agents_t *a) {
  if (a == NULL) return;
  /* Unloads in config order, the completions in reverse: Triton's order. */
  for (size_t i = 0; i < a->count; i++)
    if (a->models[i].action == TRITONREPOAGENT_ACTION_LOAD_COMPLETE)
      model_act_logged(&a->models[i], TRITONREPOAGENT_ACTION_UNLOAD);
  for (size_t i = a->count; i > 0; i--) model_end(&a->models[i - 1]);
  free(a->models);
  free(a);
}

void repo_agents_loaded(repo_agents_t *a, bool ok) {
  if (a == NULL) return;
  for (size_t i = a->count; i > 0; i--)
    model_act_logged(&a->models[i - 1], ok ? TRITONREPOAGENT_ACTION_LOAD_COMPLETE
                                           : TRITONREPOAGENT_ACTION_LOAD_FAIL);
  if (!ok) repo_agents_free(a);
}

static void params_copy(agent_model_t *m,
                        const inference_ModelRepositoryAgents_Agent *ag) {
  size_t n = inference_ModelRepositoryAgents_Agent_parameters_size(ag);
  m->params = calloc(2 * n + 1, sizeof *m->params);
  if (m->params == NULL) SRV_FATAL("out of memory");
  size_t iter = kUpb_Map_Begin;
  const inference_ModelRepositoryAgents_Agent_ParametersEntry *e;
  while ((e = inference_ModelRepositoryAgents_Agent_parameters_next(ag, &iter)) != NULL &&
         m->param_count < n) {
    upb_StringView k = inference_ModelRepositoryAgents_Agent_ParametersEntry_key(e);
    upb_StringView v = inference_ModelRepositoryAgents_Agent_ParametersEntry_value(e);
    m->params[2 * m->param_count] = srv_strndup(k.data, k.size);
    m->params[2 * m->param_count + 1] = srv_strndup(v.data, v.size);
    m->param_count++;
  }
}

/* The config of the model folder `dir` as JSON ("{}" when it has no
 * readable config.pbtxt). */
static char *config_json_at(const char *dir, size_t *len) {
  char path[PATH_MAX], err[256];
  upb_Arena *arena = upb_Arena_New();
  if (arena == NULL) SRV_FATAL("out of memory");
  inference_ModelConfig *c = NULL;
  if ((size_t)snprintf(path, sizeof path, "%s/config.pbtxt", dir) < sizeof path)
    c = cfg_model_config_read(path, arena, err, sizeof err);
  if (c == NULL) c = inference_ModelConfig_new(arena);
  if (c == NULL) SRV_FATAL("out of memory");
  char *json =
      srv_config_json_encode((const upb_Message *)c, cfg_model_config_def(), len);
  upb_Arena_Free(arena);
  return json;
}

srv_status_t *repo_agents_load(const char *agent_dir, const inference_ModelConfig *c,
                               char **dir, repo_agents_t **out) {
  *out = NULL;
  const inference_ModelRepositoryAgents *ra =
      inference_ModelConfig_model_repository_agents(c);
  size_t n = 0;
  const inference_ModelRepositoryAgents_Agent *const *ags =
      ra != NULL ? inference_ModelRepositoryAgents_agents(ra, &n) : NULL;
  if (n == 0) return NULL;
  if (n > AGENTS_MAX)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "model_repository_agents: %zu agents, at most %d", n,
                          AGENTS_MAX);
  for (size_t i = 0; i < n; i++)
    if (inference_ModelRepositoryAgents_Agent_parameters_size(ags[i]) > AGENT_PARAMS_MAX)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "model_repository_agents: agent %zu has more than %d "
                            "parameters",
                            i, AGENT_PARAMS_MAX);
  repo_agents_t *a = calloc(1, sizeof *a);
  if (a == NULL) SRV_FATAL("out of memory");
  a->models = calloc(n, sizeof *a->models);
  if (a->models == NULL) SRV_FATAL("out of memory");
  /* The first agent sees the load's config; one after an agent that moved
   * the model sees the config.pbtxt there (empty if it has none), as in
   * Triton. The agents list itself is always the first config's. */
  size_t json_len = 0;
  char *json =
      srv_config_json_encode((const upb_Message *)c, cfg_model_config_def(), &json_len);
  srv_status_t *st = NULL;
  for (size_t i = 0; i < n && st == NULL; i++) {
    upb_StringView nm = inference_ModelRepositoryAgents_Agent_name(ags[i]);
    char *name = srv_strndup(nm.data, nm.size);
    agent_lib_t *lib;
    st = lib_acquire(agent_dir, name, &lib);
    free(name);
    if (st != NULL) break;
    agent_model_t *m = &a->models[a->count++];
    m->lib = lib;
    m->action = -1;
    m->type = TRITONREPOAGENT_ARTIFACT_FILESYSTEM;
    m->location = srv_strdup(*dir);
    m->config_json = json != NULL ? srv_strndup(json, json_len) : NULL;
    m->config_len = json_len;
    params_copy(m, ags[i]);
    if (lib->model_init != NULL) {
      TRITONSERVER_Error *e =
          lib->model_init((TRITONREPOAGENT_Agent *)lib, (TRITONREPOAGENT_AgentModel *)m);
      if (e != NULL) {
        st = status_of(e);
        break;
      }
    }
    m->initialized = true;
    st = model_act(m, TRITONREPOAGENT_ACTION_LOAD);
    /* The next agent, and the load, read where this one left the model. */
    if (strcmp(m->location, *dir) != 0) {
      free(*dir);
      *dir = srv_strdup(m->location);
      free(json);
      json = config_json_at(*dir, &json_len);
    }
  }
  free(json);
  if (st != NULL) {
    repo_agents_loaded(a, false);
    return st;
  }
  *out = a;
  return NULL;
}

/* ---- The server side of the API ------------------------------------------ */

#define AGENT_MODEL(p) ((agent_model_t *)(p))
#define ARG_NULL(x) \
  if ((x) == NULL)  \
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, #x " must not be NULL")

TRITONSERVER_Error *TRITONREPOAGENT_ApiVersion(uint32_t *major, uint32_t *minor) {
  ARG_NULL(major);
  ARG_NULL(minor);
  *major = TRITONREPOAGENT_API_VERSION_MAJOR;
  *minor = TRITONREPOAGENT_API_VERSION_MINOR;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelRepositoryLocation(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    TRITONREPOAGENT_ArtifactType *artifact_type, const char **location) {
  (void)agent;
  ARG_NULL(model);
  ARG_NULL(artifact_type);
  ARG_NULL(location);
  *artifact_type = AGENT_MODEL(model)->type;
  *location = AGENT_MODEL(model)->location;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelRepositoryLocationAcquire(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char **location) {
  (void)agent;
  ARG_NULL(model);
  ARG_NULL(location);
  agent_model_t *m = AGENT_MODEL(model);
  if (artifact_type != TRITONREPOAGENT_ARTIFACT_FILESYSTEM)
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG,
        "Unexpected artifact type, expects 'TRITONREPOAGENT_ARTIFACT_FILESYSTEM'");
  if (m->acquired == NULL) {
    /* The same shape as a load override's folder, so that the same careful
     * removal applies: <tmp>/nereid-model-XXXXXX/model. */
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/" SRV_LOAD_OVERRIDE_PREFIX "XXXXXX",
                         tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp") >=
            sizeof path - 8 ||
        mkdtemp(path) == NULL)
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                   "failed to make a temporary directory");
    strcat(path, "/model");
    if (mkdir(path, 0700) != 0) {
      path[strlen(path) - 6] = '\0';
      rmdir(path);
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                   "failed to make a temporary directory");
    }
    m->acquired = srv_strdup(path);
  }
  *location = m->acquired;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelRepositoryLocationRelease(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const char *location) {
  (void)agent;
  (void)location;
  ARG_NULL(model);
  agent_model_t *m = AGENT_MODEL(model);
  if (m->acquired == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE,
                                 "No mutable location to be deleted");
  srv_load_override_remove(m->acquired);
  free(m->acquired);
  m->acquired = NULL;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelRepositoryUpdate(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char *location) {
  (void)agent;
  ARG_NULL(model);
  ARG_NULL(location);
  agent_model_t *m = AGENT_MODEL(model);
  if (m->action != TRITONREPOAGENT_ACTION_LOAD)
    return api_error_new(
        TRITONSERVER_ERROR_INVALID_ARG,
        "location can only be updated during TRITONREPOAGENT_ACTION_LOAD, "
        "current action type is %s",
        action_name(m->action));
  /* Remote locations would need a remote file system: we have none. */
  if (artifact_type != TRITONREPOAGENT_ARTIFACT_FILESYSTEM)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED,
                                 "only TRITONREPOAGENT_ARTIFACT_FILESYSTEM locations are "
                                 "supported");
  if (location[0] != '/' || strlen(location) >= PATH_MAX)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                 "the location must be an absolute path shorter than "
                                 "PATH_MAX");
  char *copy = srv_strdup(location);
  free(m->location);
  m->location = copy;
  m->type = artifact_type;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelParameterCount(TRITONREPOAGENT_Agent *agent,
                                                        TRITONREPOAGENT_AgentModel *model,
                                                        uint32_t *count) {
  (void)agent;
  ARG_NULL(model);
  ARG_NULL(count);
  *count = AGENT_MODEL(model)->param_count;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelParameter(TRITONREPOAGENT_Agent *agent,
                                                   TRITONREPOAGENT_AgentModel *model,
                                                   const uint32_t index,
                                                   const char **parameter_name,
                                                   const char **parameter_value) {
  (void)agent;
  ARG_NULL(model);
  ARG_NULL(parameter_name);
  ARG_NULL(parameter_value);
  agent_model_t *m = AGENT_MODEL(model);
  if (index >= m->param_count)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                 "index out of range for model parameters");
  *parameter_name = m->params[2 * index];
  *parameter_value = m->params[2 * index + 1];
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelConfig(TRITONREPOAGENT_Agent *agent,
                                                TRITONREPOAGENT_AgentModel *model,
                                                const uint32_t config_version,
                                                TRITONSERVER_Message **model_config) {
  (void)agent;
  ARG_NULL(model);
  ARG_NULL(model_config);
  agent_model_t *m = AGENT_MODEL(model);
  if (config_version != 1)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "model config version %u is not supported, supported versions "
                         "are: 1",
                         config_version);
  if (m->config_json == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                 "the model config could not be written as JSON");
  return TRITONSERVER_MessageNewFromSerializedJson(model_config, m->config_json,
                                                   m->config_len);
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelState(TRITONREPOAGENT_AgentModel *model,
                                               void **state) {
  ARG_NULL(model);
  ARG_NULL(state);
  *state = AGENT_MODEL(model)->state;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_ModelSetState(TRITONREPOAGENT_AgentModel *model,
                                                  void *state) {
  ARG_NULL(model);
  AGENT_MODEL(model)->state = state;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_State(TRITONREPOAGENT_Agent *agent, void **state) {
  ARG_NULL(agent);
  ARG_NULL(state);
  *state = ((agent_lib_t *)agent)->state;
  return NULL;
}

TRITONSERVER_Error *TRITONREPOAGENT_SetState(TRITONREPOAGENT_Agent *agent, void *state) {
  ARG_NULL(agent);
  ((agent_lib_t *)agent)->state = state;
  return NULL;
}
