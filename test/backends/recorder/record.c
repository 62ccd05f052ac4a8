/* Appending event lines to the record file. Any thread: O_APPEND writes of
 * one line are atomic with respect to each other. */
#define _GNU_SOURCE
#include "test/backends/recorder/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backends/common/error.h"

/* Room for an execute_start line naming many long request ids. */
#define LINE_MAX_LEN 4096

long rec_tid(void) { return (long)syscall(SYS_gettid); }

char *rec_path_resolve(const char *value) {
  if (value == NULL) return NULL;
  const char *dir = getenv("NEREID_RECORD_DIR");
  if (dir == NULL || dir[0] == '\0') dir = getenv("TEST_TMPDIR");
  if (value[0] == '/' || dir == NULL || dir[0] == '\0') return strdup(value);
  size_t len = strlen(dir) + 1 + strlen(value) + 1;
  char *path = malloc(len);
  if (path != NULL) snprintf(path, len, "%s/%s", dir, value);
  return path;
}

void rec_append(const char *path, const char *fmt, ...) {
  if (path == NULL) return;
  char line[LINE_MAX_LEN];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
  line[len++] = '\n';
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    BK_LOG(TRITONSERVER_LOG_ERROR, "recorder: cannot open '%s': %s", path,
           strerror(errno));
    return;
  }
  ssize_t w = write(fd, line, len);
  if (w != (ssize_t)len) {
    BK_LOG(TRITONSERVER_LOG_ERROR, "recorder: short write to '%s'", path);
  }
  close(fd);
}
