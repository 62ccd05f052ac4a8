/* The server log, the one log of the process: the server's own lines
 * (SRV_INFO...) and the backends' (TRITONSERVER_LogMessage, server/api/log.c)
 * share its settings and its output. Triton's line layouts:
 *   default  "I1120 22:39:22.123456 1234 file.c:42] msg"
 *   ISO8601  "2026-11-20T22:39:22Z I 1234 file.c:42] msg"
 * Any thread. Each line leaves in one write(2), so lines from different
 * threads never interleave; the settings (levels, verbosity, format, file)
 * may change at any time, from any thread (--log-* flags at start-up, the
 * LogSettings RPC and /v2/logging, TRITONSERVER_ServerOptionsSetLog*). */
#ifndef NEREID_SERVER_COMMON_LOG_H
#define NEREID_SERVER_COMMON_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"

typedef enum {
  SRV_LOG_ERROR = 0,
  SRV_LOG_WARNING = 1,
  SRV_LOG_INFO = 2,
  SRV_LOG_VERBOSE = 3,
} srv_log_level_t;

/** Triton's two line layouts (--log-format, TRITONSERVER_LogFormat). */
typedef enum {
  SRV_LOG_FORMAT_DEFAULT = 0,
  SRV_LOG_FORMAT_ISO8601 = 1,
} srv_log_format_t;

/** Longest log file path, in bytes, NUL excluded. */
#define SRV_LOG_FILE_MAX 4095

/** Sets the verbose level (--log-verbose, log_verbose_level); 0 turns
 *  verbose lines off, a negative level counts as 0. Any thread. */
void srv_log_set_verbose(int level);
int srv_log_verbose_level(void);

/** Turns ERROR, WARNING or INFO lines on or off (--log-error,
 *  --log-warning, --log-info; all on at start). Verbose lines depend on the
 *  verbose level only, as in Triton. Any thread. */
void srv_log_set_info(bool on);
void srv_log_set_warning(bool on);
void srv_log_set_error(bool on);

/** Whether a line of `level` would be written now: its switch for ERROR,
 *  WARNING and INFO, a verbose level of at least 1 for VERBOSE. */
bool srv_log_is_on(srv_log_level_t level);

/** Line layout (--log-format); SRV_LOG_FORMAT_DEFAULT at start. */
void srv_log_set_format(srv_log_format_t format);
srv_log_format_t srv_log_format(void);

/** "default" or "ISO8601", the names Triton prints and accepts. */
const char *srv_log_format_name(srv_log_format_t format);

/** The format named `name` (exactly "default" or "ISO8601"); false for
 *  any other name. */
bool srv_log_format_parse(const char *name, srv_log_format_t *out);

/** Sends the lines to the file at `path` (created if missing, appended to,
 *  mode 0644), or back to stderr when `path` is "" (--log-file). Any path
 *  the process may open: only the operator reaches this (the command line,
 *  the embedding API); the network frontends refuse to change the file, as
 *  Triton does. Lines written while the file changes go whole to the old
 *  or the new file, none is lost, and no thread ever writes to a closed
 *  descriptor. On error (path too long, cannot be opened) nothing changed:
 *  INVALID_ARGUMENT or INTERNAL naming the path and the reason. Calls are
 *  serialized; any thread. */
srv_status_t *srv_log_set_file(const char *path);

/** The current file's path ("" for stderr), NUL-terminated into buf,
 *  cut to cap - 1 bytes. */
void srv_log_file(char *buf, size_t cap);

/** Writes the prefix of a line at severity `tag` ('E', 'W', 'I', 'F') from
 *  `file` (only its base name) and `line` into `buf` in the current
 *  format, NUL-terminated, and returns its length (at most cap - 1). */
size_t srv_log_prefix(char *buf, size_t cap, char tag, const char *file, int line);

/** Writes prefix + the `len` bytes of `msg` + '\n' in one write(2),
 *  whatever the switches (the caller checked srv_log_is_on). Never
 *  truncates: a long message goes through the heap. */
void srv_log_emit(char tag, const char *file, int line, const char *msg, size_t len);

/** A printf-style line of `level` if that level is on. Verbose lines carry
 *  the 'I' tag (Triton's severity letters stop at INFO). */
void srv_log_write(srv_log_level_t level, const char *file, int line, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

/* Logs and aborts: broken invariants and out-of-memory only. Always
 * written, whatever the switches. */
_Noreturn void srv_log_fatal(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define SRV_LOG(level, ...) srv_log_write(level, __FILE__, __LINE__, __VA_ARGS__)
#define SRV_ERROR(...) SRV_LOG(SRV_LOG_ERROR, __VA_ARGS__)
#define SRV_WARN(...) SRV_LOG(SRV_LOG_WARNING, __VA_ARGS__)
#define SRV_INFO(...) SRV_LOG(SRV_LOG_INFO, __VA_ARGS__)
/* Verbose lines cost one relaxed load and a branch when off. */
#define SRV_VERBOSE(n, ...)                                                    \
  do {                                                                         \
    if (srv_log_verbose_level() >= (n)) SRV_LOG(SRV_LOG_VERBOSE, __VA_ARGS__); \
  } while (0)
#define SRV_FATAL(...) srv_log_fatal(__FILE__, __LINE__, __VA_ARGS__)

#endif
