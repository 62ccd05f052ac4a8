/* Handlers of the server-wide RPCs: ServerLive, ServerReady, ServerMetadata,
 * LogSettings and TraceSetting. They run on the call's actor. */
#ifndef NEREID_SERVER_GRPC_SERVER_RPCS_H
#define NEREID_SERVER_GRPC_SERVER_RPCS_H

#include <stddef.h>

#include "server/grpc/call.h"

void srv_rpc_server_live(srv_call_t *call, const char *request, size_t len);
void srv_rpc_server_ready(srv_call_t *call, const char *request, size_t len);
void srv_rpc_server_metadata(srv_call_t *call, const char *request, size_t len);
/* LogSettings: reads and changes the log settings (views/log_view.h). */
void srv_rpc_log_settings(srv_call_t *call, const char *request, size_t len);
/* TraceSetting: the body is views/'s (shared with HTTP). */
void srv_rpc_trace_setting(srv_call_t *call, const char *request, size_t len);

#endif
