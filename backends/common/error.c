/* Error creation and logging through the server's API. Any thread. */
#include "backends/common/error.h"

#include <stdarg.h>
#include <stdio.h>

TRITONSERVER_Error *bk_error(TRITONSERVER_Error_Code code, const char *fmt, ...) {
  char msg[BK_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return TRITONSERVER_ErrorNew(code, msg);
}

void bk_log(TRITONSERVER_LogLevel level, const char *file, int line, const char *fmt,
            ...) {
  char msg[BK_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* A failing log call has nowhere to go but away. */
  TRITONSERVER_Error *err = TRITONSERVER_LogMessage(level, file, line, msg);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
}

void bk_log_failure(TRITONSERVER_Error *err, const char *what, const char *file,
                    int line) {
  if (err == NULL) return;
  bk_log(TRITONSERVER_LOG_ERROR, file, line, "%s: %s", what,
         TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
}
