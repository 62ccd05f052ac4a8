/* Errors and logging for backends: printf-style TRITONSERVER_Error creation,
 * the server's log, and logging of errors nobody else can report. Any
 * thread (the server's log and error functions are thread-safe). */
#ifndef NEREID_BACKENDS_COMMON_ERROR_H
#define NEREID_BACKENDS_COMMON_ERROR_H

#include "triton/core/tritonserver.h"

/* Messages longer than this are truncated. */
#define BK_ERROR_MAX 512

/** New error with a formatted message; the caller owns it. */
TRITONSERVER_Error *bk_error(TRITONSERVER_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Writes a formatted message to the server's log at `level`. */
void bk_log(TRITONSERVER_LogLevel level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define BK_LOG(level, ...) bk_log((level), __FILE__, __LINE__, __VA_ARGS__)

/** Logs a failed call that has no caller to return it to (sending a
 * response, releasing a request), then deletes err. NULL is a no-op. */
void bk_log_failure(TRITONSERVER_Error *err, const char *what, const char *file,
                    int line);

/* The NULL test inline: a call that succeeded (every request's) costs no
 * call here. */
#define BK_LOG_IF_ERROR(x, what)                                                      \
  do {                                                                                \
    TRITONSERVER_Error *bk_log_err_ = (x);                                            \
    if (bk_log_err_ != NULL) bk_log_failure(bk_log_err_, (what), __FILE__, __LINE__); \
  } while (0)

#define BK_RETURN_IF_ERROR(x)            \
  do {                                   \
    TRITONSERVER_Error *bk_err_ = (x);   \
    if (bk_err_ != NULL) return bk_err_; \
  } while (0)

#endif
