/* The gRPC methods' restricted groups (see restrict.h). Main thread at
 * start-up; the check runs on the call's actor. */
#include "server/grpc/restrict.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/common/log.h"
#include "server/grpc/rpc.h"

/* tritonserver's assignment (grpc_server.cc, infer_handler.cc). It also
 * puts grpc.health.v1 Check under `health`; Nereid keeps the standard
 * health service open, because Kubernetes' gRPC probes send no metadata
 * (README.md, "Restricted groups"). */
static const struct {
  const char *name;
  srv_group_t group;
} groups[] = {
    {"ServerLive", SRV_GROUP_HEALTH},
    {"ServerReady", SRV_GROUP_HEALTH},
    {"ModelReady", SRV_GROUP_HEALTH},
    {"ServerMetadata", SRV_GROUP_METADATA},
    {"ModelMetadata", SRV_GROUP_METADATA},
    {"ModelInfer", SRV_GROUP_INFERENCE},
    {"ModelStreamInfer", SRV_GROUP_INFERENCE},
    {"ModelConfig", SRV_GROUP_MODEL_CONFIG},
    {"ModelStatistics", SRV_GROUP_STATISTICS},
    {"RepositoryIndex", SRV_GROUP_MODEL_REPOSITORY},
    {"RepositoryModelLoad", SRV_GROUP_MODEL_REPOSITORY},
    {"RepositoryModelUnload", SRV_GROUP_MODEL_REPOSITORY},
    {"SystemSharedMemoryStatus", SRV_GROUP_SHARED_MEMORY},
    {"SystemSharedMemoryRegister", SRV_GROUP_SHARED_MEMORY},
    {"SystemSharedMemoryUnregister", SRV_GROUP_SHARED_MEMORY},
    {"CudaSharedMemoryStatus", SRV_GROUP_SHARED_MEMORY},
    {"CudaSharedMemoryRegister", SRV_GROUP_SHARED_MEMORY},
    {"CudaSharedMemoryUnregister", SRV_GROUP_SHARED_MEMORY},
    {"TraceSetting", SRV_GROUP_TRACE},
    {"LogSettings", SRV_GROUP_LOGGING},
};

srv_group_t srv_grpc_rpc_group(size_t rpc) {
  if (rpc >= srv_rpc_count || strncmp(srv_rpcs[rpc].path, "/inference.", 11) != 0)
    return SRV_GROUP_NONE;
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
    if (strcmp(groups[i].name, srv_rpcs[rpc].name) == 0) return groups[i].group;
  SRV_FATAL("gRPC method %s has no restricted group", srv_rpcs[rpc].name);
  return SRV_GROUP_NONE;
}

void srv_grpc_restrict_init(srv_grpc_restrict_t *r, const srv_options_t *opt) {
  srv_status_t *st = srv_restrictions_parse(
      &r->groups, opt->grpc_restricted_protocols, opt->grpc_restricted_protocol_count,
      "grpc-restricted-protocol", SRV_GRPC_RESTRICTED_PREFIX, "protocol");
  if (st != NULL) SRV_FATAL("options not validated: %s", srv_status_message(st));
  r->of_rpc = calloc(srv_rpc_count + 1, sizeof *r->of_rpc);
  if (r->of_rpc == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < srv_rpc_count; i++) {
    r->of_rpc[i] = srv_restrictions_get(&r->groups, srv_grpc_rpc_group(i));
    if (r->of_rpc[i] != NULL)
      SRV_INFO("gRPC %s is restricted (group %s, header '%s')", srv_rpcs[i].name,
               srv_group_name(srv_grpc_rpc_group(i)), r->of_rpc[i]->key);
  }
}

void srv_grpc_restrict_free(srv_grpc_restrict_t *r) {
  free(r->of_rpc);
  r->of_rpc = NULL;
  srv_restrictions_free(&r->groups);
}

/* Metadata keys arrive lower case (HTTP/2); the flag's key may not be. */
static bool key_is(grpc_slice key, const char *name) {
  size_t len = strlen(name);
  return GRPC_SLICE_LENGTH(key) == len &&
         strncasecmp((const char *)GRPC_SLICE_START_PTR(key), name, len) == 0;
}

srv_status_t *srv_grpc_restrict_check(const srv_restriction_t *rule,
                                      const grpc_metadata_array *md) {
  for (size_t i = 0; i < md->count; i++) {
    if (!key_is(md->metadata[i].key, rule->key)) continue;
    grpc_slice v = md->metadata[i].value;
    /* The first value counts, as Triton's multimap find. */
    if (srv_restriction_matches(rule, (const char *)GRPC_SLICE_START_PTR(v),
                                GRPC_SLICE_LENGTH(v)))
      return NULL;
    break;
  }
  return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                        "This protocol is restricted, expecting header '%s'", rule->key);
}
