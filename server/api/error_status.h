/* A server status (server/common/status.h) as the Triton API's error: for
 * API functions that call into the server. Any thread. */
#ifndef NEREID_SERVER_API_ERROR_STATUS_H
#define NEREID_SERVER_API_ERROR_STATUS_H

#include "server/common/status.h"
#include "triton/core/tritonserver.h"

/** A TRITONSERVER_Error carrying the status's message, with the Triton code
 *  matching its gRPC code (UNKNOWN for one without a match); frees st. */
TRITONSERVER_Error *api_error_from_status(srv_status_t *st);

#endif
