/* The log options of TRITONSERVER_ServerOptions. As in Triton, the log is
 * the process's and each setter changes it at once (the options object
 * only carries the call): they call the log's own setters (api/log.h,
 * common/log.h). The application's thread, before ServerNew or between
 * servers: the server log's verbose level is a plain int that its threads
 * read (common/log.h: set it before they start). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "server/api/log.h"
#include "server/common/log.h"
#include "server/embed/embed.h"

#define OPTIONS_CHECK(fn, o) \
  if ((o) == NULL) return SRV_EMBED_NULL(fn, "options")

/* The descriptor the log writes to once a log file was set: the file, or
 * a copy of stderr after an empty name. Its number never changes (a new
 * target is dup2'ed onto it), so a line another thread is writing goes to
 * the old target or the new one, never to a file that reused the number.
 * -1 until the first call. */
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static int file_fd = -1;

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogVerbose(TRITONSERVER_ServerOptions *o,
                                                            int level) {
  const char *fn = "TRITONSERVER_ServerOptionsSetLogVerbose";
  OPTIONS_CHECK(fn, o);
  if (level < 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: verbose level %d is negative", fn, level);
  srv_log_set_verbose(level);
  api_log_set_verbose(level);
  return NULL;
}

static TRITONSERVER_Error *level_set(TRITONSERVER_ServerOptions *o, const char *fn,
                                     TRITONSERVER_LogLevel level, bool on) {
  OPTIONS_CHECK(fn, o);
  api_log_set_enabled(level, on);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogInfo(TRITONSERVER_ServerOptions *o,
                                                         bool log) {
  return level_set(o, "TRITONSERVER_ServerOptionsSetLogInfo", TRITONSERVER_LOG_INFO, log);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogWarn(TRITONSERVER_ServerOptions *o,
                                                         bool log) {
  return level_set(o, "TRITONSERVER_ServerOptionsSetLogWarn", TRITONSERVER_LOG_WARN, log);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogError(TRITONSERVER_ServerOptions *o,
                                                          bool log) {
  return level_set(o, "TRITONSERVER_ServerOptionsSetLogError", TRITONSERVER_LOG_ERROR, log);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFormat(TRITONSERVER_ServerOptions *o,
                                                           const TRITONSERVER_LogFormat f) {
  const char *fn = "TRITONSERVER_ServerOptionsSetLogFormat";
  OPTIONS_CHECK(fn, o);
  if (f != TRITONSERVER_LOG_DEFAULT && f != TRITONSERVER_LOG_ISO8601)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: unknown log format %d", fn,
                         (int)f);
  api_log_set_format(f);
  return NULL;
}

/* An empty name goes back to stderr. The file is appended to, as Triton's
 * log file is. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFile(TRITONSERVER_ServerOptions *o,
                                                         const char *file) {
  const char *fn = "TRITONSERVER_ServerOptionsSetLogFile";
  OPTIONS_CHECK(fn, o);
  if (file == NULL) return SRV_EMBED_NULL(fn, "file");
  int fd = file[0] != '\0' ? open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                           : fcntl(2, F_DUPFD_CLOEXEC, 0);
  if (fd < 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: failed to open log file '%s': %s", fn, file,
                         strerror(errno));
  pthread_mutex_lock(&file_lock);
  if (file_fd < 0) {
    file_fd = fd;
    api_log_set_fd(file_fd);
  } else {
    dup2(fd, file_fd);
    fcntl(file_fd, F_SETFD, FD_CLOEXEC); /* dup2 clears it */
    close(fd);
  }
  pthread_mutex_unlock(&file_lock);
  return NULL;
}
