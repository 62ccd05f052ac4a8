/* Tests of the server log's settings: level switches, formats, and the log
 * file changing while threads write (every line whole, none lost, in one of
 * the files). Main thread, plus writer threads in the swap case. */
#include "server/common/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/unit/unit.h"

static void temp_path(char *path, size_t cap, const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(path, cap, "%s/%s", dir ? dir : "/tmp", name);
  unlink(path);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  size_t r;
  while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
  }
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

static void switches_and_layouts(void) {
  char path[4096];
  temp_path(path, sizeof path, "switches.log");
  REQUIRE(srv_log_set_file(path) == NULL);
  srv_log_set_info(false);
  SRV_INFO("info off");
  srv_log_set_info(true);
  srv_log_set_warning(false);
  SRV_WARN("warning off");
  srv_log_set_warning(true);
  srv_log_set_error(false);
  SRV_ERROR("error off");
  CHECK(!srv_log_is_on(SRV_LOG_ERROR));
  srv_log_set_error(true);
  SRV_VERBOSE(1, "verbose off");
  srv_log_set_verbose(2);
  SRV_VERBOSE(2, "verbose on");
  SRV_VERBOSE(3, "too verbose");
  srv_log_set_verbose(-5);
  CHECK_EQ_U64(srv_log_verbose_level(), 0);
  srv_log_set_format(SRV_LOG_FORMAT_ISO8601);
  SRV_WARN("iso line");
  srv_log_set_format(SRV_LOG_FORMAT_DEFAULT);
  SRV_ERROR("default line");
  REQUIRE(srv_log_set_file("") == NULL);
  size_t len;
  char *out = slurp(path, &len);
  REQUIRE(out != NULL);
  CHECK(strstr(out, "off") == NULL);
  CHECK(strstr(out, "too verbose") == NULL);
  CHECK(unit_matches(out, "^I[0-9]{4} [0-9:.]{15} [0-9]+ log_test\\.c:[0-9]+\\] verbose on$"));
  CHECK(unit_matches(out, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z W [0-9]+ "
                     "log_test\\.c:[0-9]+\\] iso line$"));
  CHECK(unit_matches(out, "^E[0-9]{4} [^\n]* log_test\\.c:[0-9]+\\] default line$"));
  free(out);
}

static void format_names(void) {
  srv_log_format_t f = SRV_LOG_FORMAT_DEFAULT;
  CHECK(srv_log_format_parse("ISO8601", &f) && f == SRV_LOG_FORMAT_ISO8601);
  CHECK(srv_log_format_parse("default", &f) && f == SRV_LOG_FORMAT_DEFAULT);
  CHECK(!srv_log_format_parse("iso8601", &f));
  CHECK(!srv_log_format_parse("", &f));
  CHECK_STREQ(srv_log_format_name(SRV_LOG_FORMAT_ISO8601), "ISO8601");
  CHECK_STREQ(srv_log_format_name(SRV_LOG_FORMAT_DEFAULT), "default");
}

static void bad_files_change_nothing(void) {
  char path[4096];
  temp_path(path, sizeof path, "kept.log");
  REQUIRE(srv_log_set_file(path) == NULL);
  srv_status_t *st = srv_log_set_file("/nonexistent-dir/x/y.log");
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(srv_status_message(st),
              "failed to open log file '/nonexistent-dir/x/y.log': No such file or "
              "directory");
  srv_status_free(st);
  char *longpath = malloc(SRV_LOG_FILE_MAX + 2);
  memset(longpath, 'a', SRV_LOG_FILE_MAX + 1);
  longpath[SRV_LOG_FILE_MAX + 1] = '\0';
  st = srv_log_set_file(longpath);
  free(longpath);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st), "log file path is 4096 bytes long, more than 4095");
  srv_status_free(st);
  char name[4096];
  srv_log_file(name, sizeof name);
  CHECK_STREQ(name, path);
  SRV_ERROR("still here");
  REQUIRE(srv_log_set_file("") == NULL);
  srv_log_file(name, sizeof name);
  CHECK_STREQ(name, "");
  size_t len;
  char *out = slurp(path, &len);
  REQUIRE(out != NULL);
  CHECK(strstr(out, "] still here\n") != NULL);
  free(out);
}

/* ---- The file changes under concurrent writers --------------------------- */

enum { WRITERS = 4, LINES_PER_WRITER = 3000, FILES = 3 };

static atomic_bool writers_go;

static void *writer(void *arg) {
  long id = (long)arg;
  while (!atomic_load_explicit(&writers_go, memory_order_acquire)) {
  }
  for (int i = 0; i < LINES_PER_WRITER; i++)
    SRV_ERROR("writer=%ld line=%d payload=abcdefghijklmnopqrstuvwxyz0123456789", id, i);
  return NULL;
}

/* Counts well-formed lines per writer in `text`; any other line is bad. */
static int count_lines(char *text, int seen[WRITERS]) {
  int bad = 0;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    const char *w = strstr(line, "] writer=");
    long id;
    int n;
    if (w == NULL || !unit_matches(line, "^E[0-9]{4} [0-9:.]+ [0-9]+ log_test\\.c:[0-9]+\\] "
                                    "writer=[0-9] line=[0-9]+ payload="
                                    "abcdefghijklmnopqrstuvwxyz0123456789$") ||
        sscanf(w, "] writer=%ld line=%d", &id, &n) != 2 || id < 0 || id >= WRITERS) {
      bad++;
      continue;
    }
    seen[id]++;
  }
  return bad;
}

static void file_swaps_lose_no_line(void) {
  char paths[FILES][4096];
  for (int i = 0; i < FILES; i++) {
    char name[64];
    snprintf(name, sizeof name, "swap%d.log", i);
    temp_path(paths[i], sizeof paths[i], name);
  }
  REQUIRE(srv_log_set_file(paths[0]) == NULL);
  pthread_t threads[WRITERS];
  atomic_store_explicit(&writers_go, false, memory_order_relaxed);
  for (long i = 0; i < WRITERS; i++) pthread_create(&threads[i], NULL, writer, (void *)i);
  atomic_store_explicit(&writers_go, true, memory_order_release);
  /* Swap back and forth among the files while the writers run. */
  for (int k = 1; k < 200; k++) {
    REQUIRE(srv_log_set_file(paths[k % FILES]) == NULL);
    usleep(100);
  }
  for (int i = 0; i < WRITERS; i++) pthread_join(threads[i], NULL);
  REQUIRE(srv_log_set_file("") == NULL);
  int seen[WRITERS] = {0}, bad = 0;
  for (int i = 0; i < FILES; i++) {
    size_t len;
    char *text = slurp(paths[i], &len);
    REQUIRE(text != NULL);
    bad += count_lines(text, seen);
    free(text);
  }
  CHECK_EQ_U64(bad, 0);
  for (int i = 0; i < WRITERS; i++) CHECK_EQ_U64(seen[i], LINES_PER_WRITER);
}

UNIT_MAIN("common_log", UNIT_CASE(switches_and_layouts), UNIT_CASE(format_names),
          UNIT_CASE(bad_files_change_nothing), UNIT_CASE(file_swaps_lose_no_line))
