/* Tests of TRITONSERVER_LogIsEnabled / TRITONSERVER_LogMessage: the line
 * format, read back from stderr redirected with dup2, the level switches and
 * whole lines under concurrent writers. Main thread, plus writer threads in
 * the concurrency case. */
#include "server/api/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "server/api/error.h"
#include "test/unit/unit.h"

typedef struct {
  int saved_stderr;
  int read_fd;
} capture_t;

/* stderr goes into a pipe until capture_end. Keep what is logged in between
 * under the pipe's 64 KiB: nothing reads it before the end. */
static void capture_begin(capture_t *c) {
  int fds[2];
  if (pipe(fds) != 0) abort();
  fflush(stderr);
  c->saved_stderr = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  close(fds[1]);
  c->read_fd = fds[0];
}

/* Restores stderr (closing the pipe's last writer) and returns what was
 * written, NUL-terminated, in 'buf'. */
static size_t capture_end(capture_t *c, char *buf, size_t cap) {
  dup2(c->saved_stderr, STDERR_FILENO);
  close(c->saved_stderr);
  size_t len = 0;
  ssize_t n;
  while (len + 1 < cap && (n = read(c->read_fd, buf + len, cap - 1 - len)) > 0) {
    len += (size_t)n;
  }
  close(c->read_fd);
  buf[len] = '\0';
  return len;
}

static void default_line_format(void) {
  capture_t c;
  char out[4096];
  time_t before = time(NULL);
  capture_begin(&c);
  TRITONSERVER_Error *err = TRITONSERVER_LogMessage(
      TRITONSERVER_LOG_INFO, "/src/backends/model.cc", 42, "hello");
  capture_end(&c, out, sizeof out);
  CHECK(err == NULL);
  CHECK(unit_matches(out,
                "^I[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} [0-9]+ "
                "model\\.cc:42\\] hello\n$"));
  /* Month and day are UTC, and the id is the calling thread's. */
  struct tm tm;
  gmtime_r(&before, &tm);
  char expect[64];
  snprintf(expect, sizeof expect, "I%02d%02d ", tm.tm_mon + 1, tm.tm_mday);
  CHECK(strncmp(out, expect, 6) == 0 || tm.tm_hour == 23); /* midnight rollover */
  snprintf(expect, sizeof expect, " %ld model.cc:42] ", (long)syscall(SYS_gettid));
  CHECK(strstr(out, expect) != NULL);
}

static void severity_letters(void) {
  capture_t c;
  char out[4096];
  capture_begin(&c);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_WARN, "w.c", 1, "careful");
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_ERROR, "e.c", 2, "broken");
  capture_end(&c, out, sizeof out);
  CHECK(unit_matches(out,
                "^W[0-9]{4} [^\n]* w\\.c:1\\] careful\n"
                "E[0-9]{4} [^\n]* e\\.c:2\\] broken\n$"));
}

static void verbose_needs_a_level(void) {
  capture_t c;
  char out[4096];
  CHECK(!TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE));
  capture_begin(&c);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_VERBOSE, "v.c", 3, "hidden");
  srv_log_set_verbose(1);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_VERBOSE, "v.c", 4, "shown");
  capture_end(&c, out, sizeof out);
  CHECK(TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE));
  CHECK_EQ_U64(srv_log_verbose_level(), 1);
  srv_log_set_verbose(0);
  /* Triton's severity letters stop at I: verbose lines read as INFO. */
  CHECK(unit_matches(out, "^I[0-9]{4} [^\n]* v\\.c:4\\] shown\n$"));
}

static void levels_can_be_switched_off(void) {
  capture_t c;
  char out[4096];
  CHECK(TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_INFO));
  CHECK(TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_WARN));
  CHECK(TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_ERROR));
  srv_log_set_info(false);
  CHECK(!TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_INFO));
  capture_begin(&c);
  CHECK(TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, "i.c", 1, "off") == NULL);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_ERROR, "e.c", 1, "on");
  capture_end(&c, out, sizeof out);
  srv_log_set_info(true);
  CHECK(strstr(out, "off") == NULL);
  CHECK(strstr(out, "e.c:1] on\n") != NULL);
  CHECK(!TRITONSERVER_LogIsEnabled((TRITONSERVER_LogLevel)9));
}

static void unknown_level_is_an_error(void) {
  TRITONSERVER_Error *err =
      TRITONSERVER_LogMessage((TRITONSERVER_LogLevel)7, "x.c", 1, "m");
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_INVALID_ARG);
  CHECK_STREQ(TRITONSERVER_ErrorMessage(err), "unknown logging level '7'");
  TRITONSERVER_ErrorDelete(err);
}

static void long_and_odd_messages(void) {
  capture_t c;
  static char out[32768];
  char *big = malloc(10001);
  memset(big, 'y', 10000);
  big[10000] = '\0';
  capture_begin(&c);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, "big.c", 5, big);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, NULL, 6, NULL);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, "plain.c", 7, "two\nlines");
  size_t len = capture_end(&c, out, sizeof out);
  const char *body = strstr(out, "big.c:5] ");
  REQUIRE(body != NULL);
  body += strlen("big.c:5] ");
  CHECK(strspn(body, "y") == 10000 && body[10000] == '\n');
  CHECK(strstr(out, " :6] \n") != NULL);
  CHECK(strstr(out, "plain.c:7] two\nlines\n") != NULL);
  CHECK(len > 10000);
  free(big);
}

static void iso8601_format(void) {
  capture_t c;
  char out[4096];
  srv_log_set_format(SRV_LOG_FORMAT_ISO8601);
  capture_begin(&c);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_WARN, "iso.c", 8, "stamp");
  capture_end(&c, out, sizeof out);
  srv_log_set_format(SRV_LOG_FORMAT_DEFAULT);
  CHECK(unit_matches(out,
                "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z W [0-9]+ "
                "iso\\.c:8\\] stamp\n$"));
}

/* A path under the test's own folder. */
static void temp_path(char *path, size_t cap, const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(path, cap, "%s/%s", dir ? dir : "/tmp", name);
  unlink(path);
}

static void emit_to_a_file(void) {
  char path[4096];
  temp_path(path, sizeof path, "api_log_file.log");
  srv_status_t *st = srv_log_set_file(path);
  REQUIRE(st == NULL);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_ERROR, "fd.c", 9, "elsewhere");
  REQUIRE(srv_log_set_file("") == NULL);
  FILE *f = fopen(path, "r");
  REQUIRE(f != NULL);
  char out[512];
  size_t n = fread(out, 1, sizeof out - 1, f);
  fclose(f);
  out[n] = '\0';
  CHECK(unit_matches(out, "^E[0-9]{4} [^\n]* fd\\.c:9\\] elsewhere\n$"));
}

/* ---- Concurrent writers: every line arrives whole ------------------------- */

enum { WRITERS = 4, LINES_PER_WRITER = 500 };

static void *writer(void *arg) {
  long id = (long)arg;
  char msg[128];
  for (int i = 0; i < LINES_PER_WRITER; i++) {
    snprintf(msg, sizeof msg, "writer=%ld line=%d payload=%s", id, i,
             "abcdefghijklmnopqrstuvwxyz0123456789");
    TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, "mt.c", (int)id, msg);
  }
  return NULL;
}

static void concurrent_lines_stay_whole(void) {
  /* A file, not a pipe: nothing drains the output while the threads run. */
  char path[4096];
  temp_path(path, sizeof path, "api_log_threads.log");
  REQUIRE(srv_log_set_file(path) == NULL);
  pthread_t threads[WRITERS];
  for (long i = 0; i < WRITERS; i++) pthread_create(&threads[i], NULL, writer, (void *)i);
  for (int i = 0; i < WRITERS; i++) pthread_join(threads[i], NULL);
  REQUIRE(srv_log_set_file("") == NULL);
  FILE *f = fopen(path, "r");
  REQUIRE(f != NULL);
  char line[512];
  int seen[WRITERS] = {0}, bad = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    long id;
    int n;
    if (!unit_matches(line,
                 "^I[0-9]{4} [0-9:.]+ [0-9]+ mt\\.c:[0-9]\\] writer=[0-9] line=[0-9]+ "
                 "payload=abcdefghijklmnopqrstuvwxyz0123456789\n$") ||
        sscanf(strstr(line, "writer="), "writer=%ld line=%d", &id, &n) != 2 || id < 0 ||
        id >= WRITERS || n != seen[id]) {
      bad++;
      continue;
    }
    seen[id]++;
  }
  fclose(f);
  CHECK_EQ_U64(bad, 0);
  for (int i = 0; i < WRITERS; i++) CHECK_EQ_U64(seen[i], LINES_PER_WRITER);
}

UNIT_MAIN("api_log", UNIT_CASE(default_line_format), UNIT_CASE(severity_letters),
          UNIT_CASE(verbose_needs_a_level), UNIT_CASE(levels_can_be_switched_off),
          UNIT_CASE(unknown_level_is_an_error), UNIT_CASE(long_and_odd_messages),
          UNIT_CASE(iso8601_format), UNIT_CASE(emit_to_a_file),
          UNIT_CASE(concurrent_lines_stay_whole))
