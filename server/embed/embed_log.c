/* The log options of TRITONSERVER_ServerOptions. As in Triton, the log is
 * the process's and each setter changes it at once (the options object
 * only carries the call): they call the log's own setters (common/log.h),
 * which serve the server's lines and backends' TRITONSERVER_LogMessage
 * alike, and which any thread may call. */
#include "server/api/error.h"
#include "server/api/error_status.h"
#include "server/common/log.h"
#include "server/embed/embed.h"

#define OPTIONS_CHECK(fn, o) \
  if ((o) == NULL) return SRV_EMBED_NULL(fn, "options")

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogVerbose(TRITONSERVER_ServerOptions *o,
                                                            int level) {
  const char *fn = "TRITONSERVER_ServerOptionsSetLogVerbose";
  OPTIONS_CHECK(fn, o);
  if (level < 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: verbose level %d is negative", fn, level);
  srv_log_set_verbose(level);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogInfo(TRITONSERVER_ServerOptions *o,
                                                         bool log) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetLogInfo", o);
  srv_log_set_info(log);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogWarn(TRITONSERVER_ServerOptions *o,
                                                         bool log) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetLogWarn", o);
  srv_log_set_warning(log);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogError(TRITONSERVER_ServerOptions *o,
                                                          bool log) {
  OPTIONS_CHECK("TRITONSERVER_ServerOptionsSetLogError", o);
  srv_log_set_error(log);
  return NULL;
}

/* The API's enum and the log's share their values (0 default, 1 ISO8601). */
_Static_assert((int)TRITONSERVER_LOG_DEFAULT == (int)SRV_LOG_FORMAT_DEFAULT &&
                   (int)TRITONSERVER_LOG_ISO8601 == (int)SRV_LOG_FORMAT_ISO8601,
               "log format values");

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFormat(TRITONSERVER_ServerOptions *o,
                                                           const TRITONSERVER_LogFormat f) {
  const char *fn = "TRITONSERVER_ServerOptionsSetLogFormat";
  OPTIONS_CHECK(fn, o);
  if (f != TRITONSERVER_LOG_DEFAULT && f != TRITONSERVER_LOG_ISO8601)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: unknown log format %d", fn,
                         (int)f);
  srv_log_set_format((srv_log_format_t)f);
  return NULL;
}

/* An empty name goes back to stderr; the file is appended to, as Triton's
 * log file is (common/log.h says how a swap keeps every line whole). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFile(TRITONSERVER_ServerOptions *o,
                                                         const char *file) {
  const char *fn = "TRITONSERVER_ServerOptionsSetLogFile";
  OPTIONS_CHECK(fn, o);
  if (file == NULL) return SRV_EMBED_NULL(fn, "file");
  srv_status_t *st = srv_log_set_file(file);
  return st == NULL ? NULL : api_error_from_status(st);
}
