/* Server-wide RPC handlers (see server_rpcs.h). Run on call actors; they
 * read only the atomic server state; the metadata and the trace settings
 * are views/'s. */
#include "server/grpc/server_rpcs.h"

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/core/core.h"
#include "server/views/log_view.h"
#include "server/views/views.h"

/* Like tritonserver: while exiting, liveness and readiness calls fail. */
static bool fail_if_exiting(srv_call_t *call) {
  if (srv_server_state(srv_call_server(call)) != SRV_STATE_EXITING) return false;
  srv_call_fail(call, srv_status_new(GRPC_STATUS_UNAVAILABLE, "server is exiting"));
  return true;
}

void srv_rpc_server_live(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ServerLiveRequest, "ServerLive", request,
                           len);
  (void)req; /* an empty message: nothing to read */
  if (fail_if_exiting(call)) return;
  inference_ServerLiveResponse *reply =
      inference_ServerLiveResponse_new(srv_call_arena(call));
  inference_ServerLiveResponse_set_live(reply, true);
  SRV_CALL_REPLY(call, inference_ServerLiveResponse, reply);
}

void srv_rpc_server_ready(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ServerReadyRequest, "ServerReady",
                           request, len);
  (void)req; /* an empty message: nothing to read */
  if (fail_if_exiting(call)) return;
  inference_ServerReadyResponse *reply =
      inference_ServerReadyResponse_new(srv_call_arena(call));
  /* Strict readiness, tritonserver's default: every model must be ready. */
  srv_server_t *srv = srv_call_server(call);
  bool ready = srv_server_state(srv) == SRV_STATE_READY &&
               (!srv->options->strict_readiness || srv_registry_all_ready(srv->registry));
  inference_ServerReadyResponse_set_ready(reply, ready);
  SRV_CALL_REPLY(call, inference_ServerReadyResponse, reply);
}

void srv_rpc_server_metadata(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_ServerMetadataRequest, "ServerMetadata",
                           request, len);
  (void)req; /* an empty message: nothing to read */
  SRV_CALL_REPLY(call, inference_ServerMetadataResponse,
                 srv_view_server_metadata(srv_call_arena(call),
                                          srv_call_server(call)->options->server_id));
}

void srv_rpc_log_settings(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_LogSettingsRequest, "LogSettings", request,
                           len);
  inference_LogSettingsResponse *reply;
  srv_status_t *st = srv_view_log_settings(req, srv_call_arena(call), &reply);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  SRV_CALL_REPLY(call, inference_LogSettingsResponse, reply);
}

void srv_rpc_trace_setting(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_TraceSettingRequest, "TraceSetting",
                           request, len);
  upb_Arena *a = srv_call_arena(call);
  size_t count;
  srv_view_trace_item_t *items = srv_view_trace_items(req, a, &count);
  inference_TraceSettingResponse *reply = NULL;
  srv_status_t *st = srv_view_trace_setting(srv_call_server(call),
                                            inference_TraceSettingRequest_model_name(req),
                                            items, count, a, &reply);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  SRV_CALL_REPLY(call, inference_TraceSettingResponse, reply);
}
