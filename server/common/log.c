/* The server log (see log.h). Any thread.
 *
 * Settings are relaxed atomics: each stands alone and guards no other data,
 * so a line racing a change may use the old or the new value, either being
 * right. The output is a descriptor number in `out_fd`: 2 (stderr) until a
 * file is set, then `file_fd`, a descriptor of our own that is never closed.
 * A new file is opened aside and moved onto file_fd with dup3, which the
 * kernel does atomically: a write(2) in flight finishes on the file it
 * started on, the next one goes to the new file, and no writer can hold a
 * number that was closed (or, worse, reused by another open). */
#include "server/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int verbose_level;
/* Indexed by srv_log_level_t: ERROR, WARNING, INFO. */
static atomic_bool level_on[3] = {true, true, true};
static atomic_int line_format = SRV_LOG_FORMAT_DEFAULT;
/* Release on store, acquire on load: a writer that sees file_fd sees it
 * open (the open happened before the store). */
static atomic_int out_fd = STDERR_FILENO;

/* Serializes srv_log_set_file and guards file_fd and file_name. */
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static int file_fd = -1;
static char file_name[SRV_LOG_FILE_MAX + 1];

void srv_log_set_verbose(int level) {
  atomic_store_explicit(&verbose_level, level < 0 ? 0 : level, memory_order_relaxed);
}

int srv_log_verbose_level(void) {
  return atomic_load_explicit(&verbose_level, memory_order_relaxed);
}

void srv_log_set_info(bool on) {
  atomic_store_explicit(&level_on[SRV_LOG_INFO], on, memory_order_relaxed);
}

void srv_log_set_warning(bool on) {
  atomic_store_explicit(&level_on[SRV_LOG_WARNING], on, memory_order_relaxed);
}

void srv_log_set_error(bool on) {
  atomic_store_explicit(&level_on[SRV_LOG_ERROR], on, memory_order_relaxed);
}

bool srv_log_is_on(srv_log_level_t level) {
  switch (level) {
    case SRV_LOG_ERROR:
    case SRV_LOG_WARNING:
    case SRV_LOG_INFO:
      return atomic_load_explicit(&level_on[level], memory_order_relaxed);
    case SRV_LOG_VERBOSE:
      return srv_log_verbose_level() >= 1;
  }
  return false;
}

void srv_log_set_format(srv_log_format_t format) {
  atomic_store_explicit(&line_format, (int)format, memory_order_relaxed);
}

srv_log_format_t srv_log_format(void) {
  return (srv_log_format_t)atomic_load_explicit(&line_format, memory_order_relaxed);
}

const char *srv_log_format_name(srv_log_format_t format) {
  return format == SRV_LOG_FORMAT_ISO8601 ? "ISO8601" : "default";
}

bool srv_log_format_parse(const char *name, srv_log_format_t *out) {
  if (strcmp(name, "default") == 0) {
    *out = SRV_LOG_FORMAT_DEFAULT;
  } else if (strcmp(name, "ISO8601") == 0) {
    *out = SRV_LOG_FORMAT_ISO8601;
  } else {
    return false;
  }
  return true;
}

/* Points file_fd at what `fd` refers to (creating file_fd the first time)
 * and publishes it as the output. Under file_lock. */
static srv_status_t *install_fd(int fd, const char *path) {
  if (file_fd < 0) {
    /* A number of our own, above stdio's, that nobody else closes. */
    file_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (file_fd < 0)
      return srv_status_new(GRPC_STATUS_INTERNAL, "failed to open log file '%s': %s",
                            path, strerror(errno));
  } else if (dup3(fd, file_fd, O_CLOEXEC) < 0) {
    return srv_status_new(GRPC_STATUS_INTERNAL, "failed to open log file '%s': %s",
                          path, strerror(errno));
  }
  atomic_store_explicit(&out_fd, file_fd, memory_order_release);
  return NULL;
}

srv_status_t *srv_log_set_file(const char *path) {
  size_t len = strlen(path);
  if (len > SRV_LOG_FILE_MAX) {
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "log file path is %zu bytes long, more than %d", len,
                          SRV_LOG_FILE_MAX);
  }
  srv_status_t *st = NULL;
  pthread_mutex_lock(&file_lock);
  if (len == 0) {
    /* Back to stderr. Writers that still hold file_fd's number write to
     * stderr too once dup3 has moved it there. */
    if (file_fd >= 0) {
      if (dup3(STDERR_FILENO, file_fd, O_CLOEXEC) < 0) {
        st = srv_status_new(GRPC_STATUS_INTERNAL, "failed to log to stderr again: %s",
                            strerror(errno));
      }
    }
    if (st == NULL) atomic_store_explicit(&out_fd, STDERR_FILENO, memory_order_release);
  } else {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to open log file '%s': %s", path, strerror(errno));
    } else {
      st = install_fd(fd, path);
      if (fd != file_fd) close(fd);
    }
  }
  if (st == NULL) memcpy(file_name, path, len + 1);
  pthread_mutex_unlock(&file_lock);
  return st;
}

void srv_log_file(char *buf, size_t cap) {
  if (cap == 0) return;
  pthread_mutex_lock(&file_lock);
  snprintf(buf, cap, "%s", file_name);
  pthread_mutex_unlock(&file_lock);
}

size_t srv_log_prefix(char *buf, size_t cap, char tag, const char *file, int line) {
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
  if (srv_log_format() == SRV_LOG_FORMAT_ISO8601) {
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

void srv_log_emit(char tag, const char *file, int line, const char *msg, size_t len) {
  char small[1024];
  size_t pre = srv_log_prefix(small, sizeof small, tag, file, line);
  int fd = atomic_load_explicit(&out_fd, memory_order_acquire);
  char *buf = small;
  if (pre + len + 1 > sizeof small) {
    buf = malloc(pre + len + 1);
    if (buf == NULL) {
      /* Out of memory: still say something, in two writes. */
      write_all(fd, small, pre);
      write_all(fd, msg, len);
      return;
    }
    memcpy(buf, small, pre);
  }
  memcpy(buf + pre, msg, len);
  buf[pre + len] = '\n';
  write_all(fd, buf, pre + len + 1);
  if (buf != small) free(buf);
}

static void emit_v(char tag, const char *file, int line, const char *fmt, va_list ap) {
  char msg[3072];
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  if (n < 0) n = 0;
  srv_log_emit(tag, file, line, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

void srv_log_write(srv_log_level_t level, const char *file, int line, const char *fmt,
                   ...) {
  static const char tags[] = {'E', 'W', 'I', 'I'};
  if (!srv_log_is_on(level)) return;
  va_list ap;
  va_start(ap, fmt);
  emit_v(tags[level], file, line, fmt, ap);
  va_end(ap);
}

void srv_log_fatal(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit_v('F', file, line, fmt, ap);
  va_end(ap);
  abort();
}
