/* Per-model RPC handlers (see model_rpcs.h). */
#include "server/grpc/model_rpcs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/core.h"
#include "server/views/model_lookup.h"
#include "server/views/views.h"

void srv_rpc_model_ready(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ModelReadyRequest, "ModelReady", request,
                           len);
  upb_StringView name = inference_ModelReadyRequest_name(req);
  upb_StringView version = inference_ModelReadyRequest_version(req);
  bool ready;
  /* Unknown models are simply not ready; only a malformed version is an error. */
  srv_status_t *st = srv_registry_ready(srv_call_server(call)->registry, name.data,
                                        name.size, version.data, version.size, &ready);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  inference_ModelReadyResponse *reply =
      inference_ModelReadyResponse_new(srv_call_arena(call));
  inference_ModelReadyResponse_set_ready(reply, ready);
  SRV_CALL_REPLY(call, inference_ModelReadyResponse, reply);
}

/* The bodies are views/'s, shared with the HTTP frontend; a handler
 * decodes the request, finds the model and serializes the reply. */
void srv_rpc_model_metadata(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ModelMetadataRequest, "ModelMetadata",
                           request, len);
  srv_model_t *m;
  upb_StringView version = inference_ModelMetadataRequest_version(req);
  srv_status_t *st = srv_model_lookup(
      srv_call_server(call), inference_ModelMetadataRequest_name(req), version, &m);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  SRV_CALL_REPLY(call, inference_ModelMetadataResponse,
                 srv_view_model_metadata(srv_call_server(call), m, version.size > 0,
                                         srv_call_arena(call)));
  srv_model_unref(m);
}

void srv_rpc_model_config(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ModelConfigRequest, "ModelConfig",
                           request, len);
  srv_model_t *m;
  srv_status_t *st =
      srv_model_lookup(srv_call_server(call), inference_ModelConfigRequest_name(req),
                       inference_ModelConfigRequest_version(req), &m);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  /* Serialized right here, while the reference keeps the config alive. */
  SRV_CALL_REPLY(call, inference_ModelConfigResponse,
                 srv_view_model_config(m, srv_call_arena(call)));
  srv_model_unref(m);
}

void srv_rpc_model_statistics(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ModelStatisticsRequest, "ModelStatistics",
                           request, len);
  inference_ModelStatisticsResponse *reply;
  srv_status_t *st = srv_view_model_statistics(
      srv_call_server(call), inference_ModelStatisticsRequest_name(req),
      inference_ModelStatisticsRequest_version(req), srv_call_arena(call), &reply);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  SRV_CALL_REPLY(call, inference_ModelStatisticsResponse, reply);
}
