/* TRITONSERVER_LogIsEnabled / TRITONSERVER_LogMessage over the server log
 * (see log.h). Any thread. */
#include "server/api/log.h"

#include <string.h>

#include "server/api/error.h"

/* TRITONSERVER_LogLevel's order (INFO, WARN, ERROR, VERBOSE) differs from
 * the server log's. */
static srv_log_level_t server_level(TRITONSERVER_LogLevel level) {
  static const srv_log_level_t levels[] = {SRV_LOG_INFO, SRV_LOG_WARNING, SRV_LOG_ERROR,
                                           SRV_LOG_VERBOSE};
  return levels[level];
}

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level) {
  if ((unsigned)level > TRITONSERVER_LOG_VERBOSE) return false;
  return srv_log_is_on(server_level(level));
}

TRITONSERVER_Error *TRITONSERVER_LogMessage(TRITONSERVER_LogLevel level,
                                            const char *filename, const int line,
                                            const char *msg) {
  /* Triton tags VERBOSE lines 'I' (its severity letters stop at INFO). */
  static const char tags[] = {'I', 'W', 'E', 'I'};
  if ((unsigned)level > TRITONSERVER_LOG_VERBOSE) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "unknown logging level '%d'",
                         (int)level);
  }
  if (!TRITONSERVER_LogIsEnabled(level)) return NULL;
  if (msg == NULL) msg = "";
  srv_log_emit(tags[level], filename, line, msg, strlen(msg));
  return NULL;
}
