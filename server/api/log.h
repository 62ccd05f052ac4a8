/* The log behind TRITONSERVER_LogIsEnabled / TRITONSERVER_LogMessage: Triton-
 * style lines ("I1120 22:39:22.123456 4242 file.c:42] msg") written to stderr
 * (or the fd the server chose), one write(2) per message so lines from
 * concurrent threads never interleave. Any thread; the settings are atomics
 * that the server changes at start-up or from a LogSettings request. */
#ifndef NEREID_SERVER_API_LOG_H
#define NEREID_SERVER_API_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "triton/core/tritonserver.h"

/** Verbose level (--log-verbose); 0 turns TRITONSERVER_LOG_VERBOSE off, as in
 *  Triton, where backend verbose lines need level >= 1. Any thread. */
void api_log_set_verbose(int level);
int api_log_verbose(void);

/** Turns INFO, WARN or ERROR lines on or off (--log-info and friends; all on
 *  by default). VERBOSE is governed by api_log_set_verbose only. */
void api_log_set_enabled(TRITONSERVER_LogLevel level, bool enabled);

/** Line prefix style (--log-format); TRITONSERVER_LOG_DEFAULT at start. */
void api_log_set_format(TRITONSERVER_LogFormat format);

/** Where lines go (--log-file); 2 (stderr) at start. The caller keeps the fd
 *  open for as long as it is set. */
void api_log_set_fd(int fd);

/** Writes the prefix of a line at severity 'tag' ('E', 'W', 'I', 'F') from
 *  'file' (only its base name is printed) and 'line' into 'buf', NUL-ended,
 *  and returns its length (at most cap - 1). The one formatter of Nereid's log
 *  format: server/log.c can call it instead of keeping its own copy. */
size_t api_log_prefix(char *buf, size_t cap, char tag, const char *file, int line);

/** Writes prefix + the 'len' bytes of 'msg' + '\n' with one write(2), whatever
 *  the enabled levels. Never truncates: long messages go through the heap. */
void api_log_emit(char tag, const char *file, int line, const char *msg, size_t len);

/** Logs an 'F' line and aborts: broken invariants and out-of-memory only. */
_Noreturn void api_log_fatal(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define API_FATAL(...) api_log_fatal(__FILE__, __LINE__, __VA_ARGS__)

#endif
