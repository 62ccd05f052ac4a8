/* The TRITONREPOAGENT API: repository agents, libraries that see (and may
 * replace) a model's files around its load and unload. Declarations match
 * Triton's tritonrepoagent.h so that agents built against it load here;
 * the server side lives in server/repository/repo_agent.c. */
#ifndef TRITON_CORE_TRITONREPOAGENT_H
#define TRITON_CORE_TRITONREPOAGENT_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef _COMPILING_TRITONREPOAGENT
#if defined(__GNUC__)
#define TRITONREPOAGENT_DECLSPEC __attribute__((__visibility__("default")))
#else
#define TRITONREPOAGENT_DECLSPEC
#endif
#define TRITONREPOAGENT_ISPEC
#else
#define TRITONREPOAGENT_DECLSPEC
#define TRITONREPOAGENT_ISPEC
#endif

struct TRITONREPOAGENT_Agent;
struct TRITONREPOAGENT_AgentModel;
typedef struct TRITONREPOAGENT_Agent TRITONREPOAGENT_Agent;
typedef struct TRITONREPOAGENT_AgentModel TRITONREPOAGENT_AgentModel;

#define TRITONREPOAGENT_API_VERSION_MAJOR 0
#define TRITONREPOAGENT_API_VERSION_MINOR 1

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ApiVersion(uint32_t *major,
                                                                        uint32_t *minor);

/* How a model's files reach the agent: a local folder, or a remote path. */
typedef enum TRITONREPOAGENT_artifacttype_enum {
  TRITONREPOAGENT_ARTIFACT_FILESYSTEM,
  TRITONREPOAGENT_ARTIFACT_REMOTE_FILESYSTEM
} TRITONREPOAGENT_ArtifactType;

/* The life of an agent's model: LOAD then LOAD_COMPLETE, UNLOAD,
 * UNLOAD_COMPLETE; or LOAD then LOAD_FAIL. */
typedef enum TRITONREPOAGENT_actiontype_enum {
  TRITONREPOAGENT_ACTION_LOAD,
  TRITONREPOAGENT_ACTION_LOAD_COMPLETE,
  TRITONREPOAGENT_ACTION_LOAD_FAIL,
  TRITONREPOAGENT_ACTION_UNLOAD,
  TRITONREPOAGENT_ACTION_UNLOAD_COMPLETE
} TRITONREPOAGENT_ActionType;

/* The model's files now (the server owns the string and the folder). */
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelRepositoryLocation(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    TRITONREPOAGENT_ArtifactType *artifact_type, const char **location);

/* An empty private folder for the agent, removed at release or at the end of
 * the agent's model. */
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *
TRITONREPOAGENT_ModelRepositoryLocationAcquire(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char **location);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *
TRITONREPOAGENT_ModelRepositoryLocationRelease(TRITONREPOAGENT_Agent *agent,
                                               TRITONREPOAGENT_AgentModel *model,
                                               const char *location);

/* During LOAD only: the load reads the model from `location` instead. */
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelRepositoryUpdate(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char *location);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelParameterCount(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model, uint32_t *count);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelParameter(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model, const uint32_t index,
    const char **parameter_name, const char **parameter_value);

/* The config as a JSON message (the caller deletes it); version 1 only. */
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelConfig(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const uint32_t config_version, TRITONSERVER_Message **model_config);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelState(
    TRITONREPOAGENT_AgentModel *model, void **state);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelSetState(
    TRITONREPOAGENT_AgentModel *model, void *state);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_State(
    TRITONREPOAGENT_Agent *agent, void **state);

TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error *TRITONREPOAGENT_SetState(
    TRITONREPOAGENT_Agent *agent, void *state);

/* What an agent library implements; only ModelAction is required. */
TRITONREPOAGENT_ISPEC TRITONSERVER_Error *TRITONREPOAGENT_Initialize(
    TRITONREPOAGENT_Agent *agent);

TRITONREPOAGENT_ISPEC TRITONSERVER_Error *TRITONREPOAGENT_Finalize(
    TRITONREPOAGENT_Agent *agent);

TRITONREPOAGENT_ISPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelInitialize(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model);

TRITONREPOAGENT_ISPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelFinalize(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model);

TRITONREPOAGENT_ISPEC TRITONSERVER_Error *TRITONREPOAGENT_ModelAction(
    TRITONREPOAGENT_Agent *agent, TRITONREPOAGENT_AgentModel *model,
    const TRITONREPOAGENT_ActionType action_type);

#ifdef __cplusplus
}
#endif

#endif
