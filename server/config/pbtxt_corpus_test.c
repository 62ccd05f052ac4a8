/* Corpus tests of cfg_pbtxt_parse over test/data/pbtxt: valid files parse
 * and survive a print/parse round trip; invalid files fail with the error on
 * their "# expect:" line; every prefix of every file fails cleanly. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "all_types.upbdefs.h"
#include "model_config.upbdefs.h"
#include "server/config/pbtxt.h"
#include "server/config/round_trip.h"
#include "test/unit/unit.h"
#include "upb/reflection.h"

#define DATA "test/data/pbtxt/"

typedef struct {
  const char *dir;
  const char *type;
  bool valid;
} folder_t;

static const folder_t folders[] = {
    {DATA "valid", "inference.ModelConfig", true},
    {DATA "invalid", "inference.ModelConfig", false},
    {DATA "types/valid", "nereid.test.AllTypes", true},
    {DATA "types/invalid", "nereid.test.AllTypes", false},
};

static upb_DefPool *pool;

static const upb_MessageDef *def_of(const char *type) {
  if (pool == NULL) {
    pool = upb_DefPool_New();
    inference_ModelConfig_getmsgdef(pool);
    nereid_test_AllTypes_getmsgdef(pool);
  }
  return upb_DefPool_FindMessageByName(pool, type);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(size > 0 ? (size_t)size : 1);
  *len = fread(buf, 1, (size_t)size, f);
  fclose(f);
  return buf;
}

/* Calls fn(path, name, folder) for each .pbtxt file of each folder and
 * returns how many there were. */
static size_t for_each_file(void (*fn)(const char *, const char *, const folder_t *)) {
  size_t count = 0;
  for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
    DIR *d = opendir(folders[i].dir);
    if (d == NULL) {
      fprintf(stderr, "  cannot open %s\n", folders[i].dir);
      CHECK(d != NULL);
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      size_t n = strlen(e->d_name);
      if (n < 6 || strcmp(e->d_name + n - 6, ".pbtxt") != 0) continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", folders[i].dir, e->d_name);
      fn(path, e->d_name, &folders[i]);
      count++;
    }
    closedir(d);
  }
  return count;
}

static bool parse(const char *text, size_t len, const char *name, const upb_MessageDef *m,
                  upb_Arena *a, upb_Message **out, char *err, size_t err_len) {
  *out = upb_Message_New(m, a);
  return cfg_pbtxt_parse(text, len, name, *out, m, a, err, err_len);
}

/* Our parse of upb's own text rendering gives the same bytes again. */
static void check_round_trip(const char *name, const upb_Message *msg,
                             const upb_MessageDef *m, upb_Arena *a) {
  char err[1024];
  cfg_round_trip_t r = cfg_round_trip_check(msg, m, a, err, sizeof err);
  if (r != CFG_ROUND_TRIP_OK && r != CFG_ROUND_TRIP_SKIPPED)
    fprintf(stderr, "  %s: round trip failed: %s\n", name, err);
  CHECK(r == CFG_ROUND_TRIP_OK || r == CFG_ROUND_TRIP_SKIPPED);
}

/* The text after "# expect: " on the first line, NUL-terminated in place. */
static const char *expectation(char *text, size_t len) {
  static const char key[] = "# expect: ";
  if (len < sizeof key || memcmp(text, key, sizeof key - 1) != 0) return NULL;
  char *end = memchr(text, '\n', len);
  if (end == NULL) return NULL;
  *end = '\0';
  return text + sizeof key - 1;
}

static void check_file(const char *path, const char *name, const folder_t *f) {
  size_t len;
  char *text = read_file(path, &len), err[1024];
  REQUIRE(text != NULL);
  const upb_MessageDef *m = def_of(f->type);
  upb_Arena *a = upb_Arena_New();
  upb_Message *msg;
  bool ok = parse(text, len, name, m, a, &msg, err, sizeof err);
  if (ok != f->valid) fprintf(stderr, "  %s: %s\n", path, ok ? "accepted" : err);
  CHECK(ok == f->valid);
  if (ok && f->valid) check_round_trip(name, msg, m, a);
  if (!ok && !f->valid) {
    const char *want = expectation(text, len);
    CHECK(want != NULL && strncmp(err, name, strlen(name)) == 0);
    if (want && !strstr(err, want))
      fprintf(stderr, "  %s: got %s\n  want %s\n", path, err, want);
    CHECK(want != NULL && strstr(err, want) != NULL);
  }
  upb_Arena_Free(a);
  free(text);
}

static void test_corpus(void) {
  size_t n = for_each_file(check_file);
  printf("  %zu corpus files\n", n);
  CHECK(n >= 100);
}

/* "<name>:<line>:<col>: <message>" with positive numbers. */
static bool well_formed(const char *err, const char *name) {
  size_t n = strlen(name);
  if (strncmp(err, name, n) != 0 || err[n] != ':') return false;
  char *end;
  unsigned long line = strtoul(err + n + 1, &end, 10);
  if (line == 0 || *end != ':') return false;
  unsigned long col = strtoul(end + 1, &end, 10);
  return col > 0 && end[0] == ':' && end[1] == ' ' && end[2] != '\0';
}

/* Every prefix of every file, from an exactly-sized buffer: never a crash
 * or an over-read (ASan), always a well-formed error when it fails. */
static void check_prefixes(const char *path, const char *name, const folder_t *f) {
  size_t len;
  char *text = read_file(path, &len), err[1024];
  REQUIRE(text != NULL);
  const upb_MessageDef *m = def_of(f->type);
  for (size_t cut = 0; cut <= len; cut++) {
    char *prefix = malloc(cut ? cut : 1);
    memcpy(prefix, text, cut);
    upb_Arena *a = upb_Arena_New();
    upb_Message *msg;
    if (!parse(prefix, cut, name, m, a, &msg, err, sizeof err) &&
        !well_formed(err, name)) {
      fprintf(stderr, "  %s[0:%zu]: malformed error %s\n", path, cut, err);
      CHECK(false);
    }
    upb_Arena_Free(a);
    free(prefix);
  }
  free(text);
}

static void test_prefixes(void) { for_each_file(check_prefixes); }

static void test_cleanup(void) {
  upb_DefPool_Free(pool);
  pool = NULL;
}

UNIT_MAIN("pbtxt_corpus", UNIT_CASE(test_corpus), UNIT_CASE(test_prefixes),
          UNIT_CASE(test_cleanup))
