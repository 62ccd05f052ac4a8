/* The Triton-API log (see log.h). Any thread: settings are relaxed atomics
 * (a line racing a settings change may use either value, which is fine), and
 * each line leaves in one write(2). */
#include "server/api/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "server/api/error.h"

/* Relaxed throughout: each setting stands alone and guards no other data. */
static atomic_int verbose_level;
static atomic_bool enabled[3] = {true, true, true}; /* INFO, WARN, ERROR */
static atomic_int line_format = TRITONSERVER_LOG_DEFAULT;
static atomic_int out_fd = STDERR_FILENO;

void api_log_set_verbose(int level) {
  atomic_store_explicit(&verbose_level, level, memory_order_relaxed);
}

int api_log_verbose(void) {
  return atomic_load_explicit(&verbose_level, memory_order_relaxed);
}

void api_log_set_enabled(TRITONSERVER_LogLevel level, bool on) {
  if ((unsigned)level < 3)
    atomic_store_explicit(&enabled[level], on, memory_order_relaxed);
}

void api_log_set_format(TRITONSERVER_LogFormat format) {
  atomic_store_explicit(&line_format, (int)format, memory_order_relaxed);
}

void api_log_set_fd(int fd) { atomic_store_explicit(&out_fd, fd, memory_order_relaxed); }

size_t api_log_prefix(char *buf, size_t cap, char tag, const char *file, int line) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  const char *base = file ? strrchr(file, '/') : NULL;
  base = base ? base + 1 : (file ? file : "");
  /* Triton prints the process id here; Nereid prints the thread id, which
   * tells worker threads apart and is the pid on the main thread. */
  long tid = (long)syscall(SYS_gettid);
  int n;
  if (atomic_load_explicit(&line_format, memory_order_relaxed) ==
      TRITONSERVER_LOG_ISO8601) {
    n = snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02dZ %c %ld %s:%d] ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                 tm.tm_sec, tag, tid, base, line);
  } else {
    n = snprintf(buf, cap, "%c%02d%02d %02d:%02d:%02d.%06ld %ld %s:%d] ", tag,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts.tv_nsec / 1000, tid, base, line);
  }
  if (n < 0) n = 0, buf[0] = '\0';
  return (size_t)n < cap ? (size_t)n : cap - 1;
}

/* write(2) may be cut short by a signal or a full pipe; finish the line so a
 * reader never sees half of it glued to the next one. */
static void write_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return; /* Nowhere to report a failing log. */
    }
    p += w;
    len -= (size_t)w;
  }
}

void api_log_emit(char tag, const char *file, int line, const char *msg, size_t len) {
  char small[1024];
  /* The prefix is short (a long path is cut to its base name) but a file
   * name is not bounded; give it the whole small buffer. */
  size_t pre = api_log_prefix(small, sizeof small, tag, file, line);
  char *buf = small;
  if (pre + len + 1 > sizeof small) {
    buf = malloc(pre + len + 1);
    if (buf == NULL) {
      /* Out of memory: still say something, in two writes. */
      write_all(atomic_load_explicit(&out_fd, memory_order_relaxed), small, pre);
      write_all(atomic_load_explicit(&out_fd, memory_order_relaxed), msg, len);
      return;
    }
    memcpy(buf, small, pre);
  }
  memcpy(buf + pre, msg, len);
  buf[pre + len] = '\n';
  write_all(atomic_load_explicit(&out_fd, memory_order_relaxed), buf, pre + len + 1);
  if (buf != small) free(buf);
}

void api_log_fatal(const char *file, int line, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  api_log_emit('F', file, line, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
  abort();
}

/* ---- Exported API --------------------------------------------------------- */

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level) {
  switch (level) {
    case TRITONSERVER_LOG_INFO:
    case TRITONSERVER_LOG_WARN:
    case TRITONSERVER_LOG_ERROR:
      return atomic_load_explicit(&enabled[level], memory_order_relaxed);
    case TRITONSERVER_LOG_VERBOSE:
      return api_log_verbose() >= 1;
  }
  return false;
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
  api_log_emit(tags[level], filename, line, msg, strlen(msg));
  return NULL;
}
