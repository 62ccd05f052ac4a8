/* TRITONSERVER_LogIsEnabled / TRITONSERVER_LogMessage: backends' lines go
 * to the server log (server/common/log.h), with its settings, layouts and
 * output, so --log-* flags, /v2/logging and LogSettings govern both alike.
 * Any thread. */
#ifndef NEREID_SERVER_API_LOG_H
#define NEREID_SERVER_API_LOG_H

#include "server/common/log.h"
#include "triton/core/tritonserver.h"

/** Logs an 'F' line and aborts: broken invariants and out-of-memory only. */
#define API_FATAL(...) srv_log_fatal(__FILE__, __LINE__, __VA_ARGS__)

#endif
