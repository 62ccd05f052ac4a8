/* Repository RPC handlers (see repository_rpcs.h). The registry is
 * read-only while serving, so the index needs no lock. */
#include "server/repository_rpcs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/core/registry.h"
#include "server/log.h"
#include "server/memory.h"

static int entry_cmp(const void *a, const void *b) {
  const srv_registry_entry_t *x = *(const srv_registry_entry_t *const *)a;
  const srv_registry_entry_t *y = *(const srv_registry_entry_t *const *)b;
  return strcmp(x->name, y->name);
}

static void index_add(inference_RepositoryIndexResponse *reply, const char *name,
                      const char *version, const char *state, const char *reason,
                      upb_Arena *a) {
  inference_RepositoryIndexResponse_ModelIndex *m =
      inference_RepositoryIndexResponse_add_models(reply, a);
  if (m == NULL) SRV_FATAL("out of memory");
  inference_RepositoryIndexResponse_ModelIndex_set_name(m,
                                                        upb_StringView_FromString(name));
  inference_RepositoryIndexResponse_ModelIndex_set_version(
      m, upb_StringView_FromString(version));
  inference_RepositoryIndexResponse_ModelIndex_set_state(
      m, upb_StringView_FromString(state));
  inference_RepositoryIndexResponse_ModelIndex_set_reason(
      m, upb_StringView_FromString(reason));
}

/* One entry per ready version, and one UNAVAILABLE entry with the reason
 * for a model whose load failed; sorted by name, as tritonserver does. */
static void index_fill(inference_RepositoryIndexResponse *reply, const srv_registry_t *r,
                       bool ready_only, upb_Arena *a) {
  size_t n = srv_registry_count(r);
  const srv_registry_entry_t **sorted = upb_Arena_Malloc(a, (n + 1) * sizeof *sorted);
  if (sorted == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) sorted[i] = srv_registry_at(r, i);
  qsort(sorted, n, sizeof *sorted, entry_cmp);
  for (size_t i = 0; i < n; i++) {
    const srv_registry_entry_t *e = sorted[i];
    for (size_t v = 0; v < e->version_count; v++) {
      index_add(reply, e->name, e->versions[v]->version_string, "READY", "", a);
    }
    if (e->reason != NULL && !ready_only)
      index_add(reply, e->name, "", "UNAVAILABLE", e->reason, a);
  }
}

void srv_rpc_repository_index(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_RepositoryIndexRequest, "RepositoryIndex",
                           request, len);
  upb_Arena *a = srv_call_arena(call);
  inference_RepositoryIndexResponse *reply = inference_RepositoryIndexResponse_new(a);
  index_fill(reply, srv_call_server(call)->registry,
             inference_RepositoryIndexRequest_ready(req), a);
  SRV_CALL_REPLY(call, inference_RepositoryIndexResponse, reply);
}

/* Model control mode 'none' (the only one so far) loads everything at
 * start-up; tritonserver refuses explicit load/unload then, with this text. */
static void refuse_without_model_control(srv_call_t *call, const char *rpc, bool parsed) {
  if (!parsed) {
    srv_call_fail(call, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                       "%s: malformed request message", rpc));
    return;
  }
  srv_call_fail(call, srv_status_new(GRPC_STATUS_UNAVAILABLE,
                                     "explicit model load / unload is not allowed if "
                                     "polling is enabled"));
}

void srv_rpc_repository_model_load(srv_call_t *call, const char *request, size_t len) {
  bool parsed = srv_call_parse(call, &inference_RepositoryModelLoadRequest_msginit,
                               request, len) != NULL;
  refuse_without_model_control(call, "RepositoryModelLoad", parsed);
}

void srv_rpc_repository_model_unload(srv_call_t *call, const char *request, size_t len) {
  bool parsed = srv_call_parse(call, &inference_RepositoryModelUnloadRequest_msginit,
                               request, len) != NULL;
  refuse_without_model_control(call, "RepositoryModelUnload", parsed);
}
