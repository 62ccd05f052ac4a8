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
  /* The map's entries as the view's items, in the call's arena. */
  size_t n = inference_TraceSettingRequest_settings_size(req), count = 0,
         iter = kUpb_Map_Begin;
  /* Bounded before the items are sized (the view says why). */
  if (n > SRV_VIEW_TRACE_SETTINGS_MAX) n = SRV_VIEW_TRACE_SETTINGS_MAX + 1;
  srv_view_trace_item_t *items = upb_Arena_Malloc(a, (n ? n : 1) * sizeof *items);
  if (items == NULL) SRV_FATAL("out of memory");
  const inference_TraceSettingRequest_SettingsEntry *e;
  while (count < n &&
         (e = inference_TraceSettingRequest_settings_next(req, &iter)) != NULL) {
    const inference_TraceSettingRequest_SettingValue *v =
        inference_TraceSettingRequest_SettingsEntry_value(e);
    srv_view_trace_item_t *it = &items[count++];
    it->name = inference_TraceSettingRequest_SettingsEntry_key(e);
    it->values = v != NULL
                     ? inference_TraceSettingRequest_SettingValue_value(v, &it->count)
                     : NULL;
    if (v == NULL) it->count = 0;
  }
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
