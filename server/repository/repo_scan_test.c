/* Model folders of the repository roots, the tree fingerprint that poll
 * mode compares, and version folders. Trees live under $TEST_TMPDIR. */
#define _GNU_SOURCE /* nftw */
#include "server/repository/repo_scan.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/unit.h"

static char root[PATH_MAX];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void tmp_begin(void) {
  const char *base = getenv("TEST_TMPDIR");
  if (base == NULL || base[0] == '\0') base = "/tmp";
  snprintf(root, sizeof root, "%s/repo_scan-XXXXXX", base);
  if (mkdtemp(root) == NULL) {
    perror("mkdtemp");
    abort();
  }
}

static void tmp_end(void) { nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* root + "/" + printf(fmt, ...) in one of four static buffers, so that a
 * call may take a few of them as arguments. */
static const char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *at(const char *fmt, ...) {
  static char paths[4][PATH_MAX];
  static unsigned next;
  char *path = paths[next++ % 4];
  char rel[PATH_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rel, sizeof rel, fmt, ap);
  va_end(ap);
  snprintf(path, PATH_MAX, "%s/%s", root, rel);
  return path;
}

static void make_dir(const char *path) {
  if (mkdir(path, 0700) != 0) {
    perror(path);
    CHECK(!"mkdir");
  }
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    perror(path);
    CHECK(!"fopen");
    return;
  }
  fputs(text, f);
  fclose(f);
}

/* Sets a file's mtime to a fixed value far from "now", so that a change
 * is seen whatever the file system's timestamp granularity. */
static void set_mtime(const char *path, time_t sec) {
  struct timespec ts[2] = {{sec, 0}, {sec, 0}};
  CHECK(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

/* ---- scan ---------------------------------------------------------------- */

static void scan_lists_model_folders_of_all_roots(void) {
  tmp_begin();
  make_dir(at("r1"));
  make_dir(at("r2"));
  make_dir(at("r1/beta"));
  make_dir(at("r1/dup"));
  make_dir(at("r1/.hidden"));
  write_file(at("r1/README.md"), "not a model");
  make_dir(at("elsewhere"));
  CHECK(symlink(at("elsewhere"), at("r1/linked")) == 0); /* a link to a folder counts */
  CHECK(symlink(at("r1/README.md"), at("r1/filelink")) == 0);
  make_dir(at("r2/alpha"));
  make_dir(at("r2/dup"));
  make_dir(at("r2/.git"));
  write_file(at("r2/alpha/config.pbtxt"), "backend: \"identity\"\n");

  char r1[PATH_MAX], r2[PATH_MAX], missing[PATH_MAX];
  snprintf(r1, sizeof r1, "%s", at("r1"));
  snprintf(r2, sizeof r2, "%s", at("r2"));
  snprintf(missing, sizeof missing, "%s", at("no-such-root"));
  char *roots[] = {r1, missing, r2};

  srv_repo_listing_t l;
  srv_repo_scan(roots, 3, false, &l);
  REQUIRE(l.count == 4);
  static const char *const want[] = {"alpha", "beta", "dup", "linked"};
  for (size_t i = 0; i < 4; i++) {
    CHECK_STREQ(l.models[i].name, want[i]);
    CHECK(l.models[i].fingerprint == 0); /* not asked for */
    CHECK(l.models[i].duplicate == (i == 2));
  }
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/alpha", r2);
  CHECK_STREQ(l.models[0].dir, dir);
  snprintf(dir, sizeof dir, "%s/dup", r1); /* the first root's */
  CHECK_STREQ(l.models[2].dir, dir);

  const srv_repo_model_t *m = srv_repo_listing_find(&l, "dup");
  CHECK(m == &l.models[2]);
  CHECK(srv_repo_listing_find(&l, "linked") == &l.models[3]);
  CHECK(srv_repo_listing_find(&l, "alpha") == &l.models[0]);
  CHECK(srv_repo_listing_find(&l, "gamma") == NULL);
  CHECK(srv_repo_listing_find(&l, ".hidden") == NULL);
  CHECK(srv_repo_listing_find(&l, "README.md") == NULL);
  srv_repo_listing_free(&l);
  CHECK(l.count == 0 && l.models == NULL);

  srv_repo_scan(roots, 3, true, &l);
  REQUIRE(l.count == 4);
  for (size_t i = 0; i < l.count; i++) {
    CHECK(l.models[i].fingerprint != 0);
    CHECK(l.models[i].fingerprint == srv_repo_fingerprint(l.models[i].dir));
  }
  CHECK(l.models[0].fingerprint != l.models[1].fingerprint);
  srv_repo_listing_free(&l);

  /* No readable root: an empty listing. */
  srv_repo_scan(roots + 1, 1, true, &l);
  CHECK(l.count == 0);
  CHECK(srv_repo_listing_find(&l, "alpha") == NULL);
  srv_repo_listing_free(&l);
  srv_repo_scan(NULL, 0, false, &l);
  CHECK(l.count == 0);
  srv_repo_listing_free(&l);

  /* With namespaces: a name in two roots is listed once per root, by name
   * then root, and is no duplicate. */
  srv_repo_scan_ns(roots, 3, false, &l);
  REQUIRE(l.count == 5);
  static const char *const want_ns[] = {"alpha", "beta", "dup", "dup", "linked"};
  const char *want_root[] = {r2, r1, r1, r2, r1}; /* ".../r1" < ".../r2" */
  for (size_t i = 0; i < 5; i++) {
    CHECK_STREQ(l.models[i].name, want_ns[i]);
    CHECK_STREQ(l.models[i].ns, want_root[i]);
    CHECK(!l.models[i].duplicate);
  }
  CHECK(srv_repo_listing_find_ns(&l, r2, "dup")->ns != NULL);
  CHECK_STREQ(srv_repo_listing_find_ns(&l, r2, "dup")->ns, r2);
  CHECK_STREQ(srv_repo_listing_find_ns(&l, r1, "dup")->ns, r1);
  CHECK(srv_repo_listing_find_ns(&l, r1, "alpha") == NULL);
  CHECK(srv_repo_listing_find_ns(&l, NULL, "alpha") == NULL);
  srv_repo_listing_free(&l);
  tmp_end();
}

/* ---- fingerprint --------------------------------------------------------- */

static uint64_t fp(void) { return srv_repo_fingerprint(at("m")); }

/* The fingerprint now differs from *last; *last becomes it. */
static bool changed(uint64_t *last) {
  uint64_t now = fp();
  bool differs = now != *last && now != 0;
  *last = now;
  return differs;
}

static void fingerprint_sees_every_kind_of_change(void) {
  tmp_begin();
  make_dir(at("m"));
  make_dir(at("m/1"));
  write_file(at("m/config.pbtxt"), "backend: \"identity\"\n");
  write_file(at("m/1/model.bin"), "0123456789");
  uint64_t last = fp();
  CHECK(last != 0);
  CHECK(fp() == last); /* nothing changed */
  CHECK(fp() == last);

  /* modified in place, same size: the mtime tells */
  write_file(at("m/1/model.bin"), "abcdefghij");
  set_mtime(at("m/1/model.bin"), 1000000000);
  CHECK(changed(&last));
  CHECK(fp() == last);
  set_mtime(at("m/1/model.bin"), 1000000001);
  CHECK(changed(&last));

  /* resized */
  CHECK(truncate(at("m/1/model.bin"), 4) == 0);
  CHECK(changed(&last));

  /* a file added, at the top and deep below */
  write_file(at("m/labels.txt"), "a\n");
  CHECK(changed(&last));
  make_dir(at("m/1/a"));
  CHECK(changed(&last));
  make_dir(at("m/1/a/b"));
  write_file(at("m/1/a/b/weights"), "w");
  CHECK(changed(&last));

  /* renamed (same contents, same times) */
  CHECK(rename(at("m/labels.txt"), at("m/labels2.txt")) == 0);
  CHECK(changed(&last));
  /* a version folder renamed */
  CHECK(rename(at("m/1"), at("m/2")) == 0);
  CHECK(changed(&last));

  /* removed */
  CHECK(unlink(at("m/2/a/b/weights")) == 0);
  CHECK(changed(&last));
  CHECK(unlink(at("m/labels2.txt")) == 0);
  CHECK(changed(&last));

  /* a link is part of the tree; what it points to is not */
  make_dir(at("outside"));
  write_file(at("outside/big.bin"), "x");
  CHECK(symlink(at("outside"), at("m/2/shared")) == 0);
  CHECK(changed(&last));
  set_mtime(at("outside/big.bin"), 1200000000);
  write_file(at("outside/new"), "n");
  CHECK(fp() == last);
  CHECK(fp() == last);

  /* unreadable: 0 */
  CHECK(srv_repo_fingerprint(at("no-such-model")) == 0);
  write_file(at("plain-file"), "x");
  CHECK(srv_repo_fingerprint(at("plain-file")) == 0);
  tmp_end();
}

static void fingerprint_stops_at_depth_limit(void) {
  tmp_begin();
  make_dir(at("m"));
  char rel[PATH_MAX] = "m";
  for (int level = 1; level <= SRV_REPO_FINGERPRINT_DEPTH + 2; level++) {
    size_t n = strlen(rel);
    snprintf(rel + n, sizeof rel - n, "/d%d", level);
    make_dir(at("%s", rel));
  }
  /* rel is at level DEPTH + 2: below what the walk visits */
  char deep[PATH_MAX];
  snprintf(deep, sizeof deep, "%s/file", at("%s", rel));
  write_file(deep, "x");
  uint64_t last = fp();
  set_mtime(deep, 1000000000);
  CHECK(fp() == last);
  /* ...while a change at a visited level is seen */
  set_mtime(at("m/d1/d2"), 1000000000);
  CHECK(changed(&last));
  tmp_end();
}

/* ---- versions ------------------------------------------------------------ */

static void versions_lists_numeric_folders_ascending(void) {
  tmp_begin();
  make_dir(at("m"));
  static const char *const dirs[] = {
      "10", "1", "3", "0", "abc", "-1", "01", "+2", " 4", "1e3", "99999999999999999999",
      ".5"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) make_dir(at("m/%s", dirs[i]));
  write_file(at("m/5"), "a file, not a version");
  make_dir(at("v7"));
  CHECK(symlink(at("v7"), at("m/7")) == 0);  /* a link to a folder is one */
  CHECK(symlink(at("m/5"), at("m/8")) == 0); /* a link to a file is not */

  int64_t v[16];
  size_t n = srv_repo_versions(at("m"), v, 16);
  REQUIRE(n == 5);
  CHECK(v[0] == 0 && v[1] == 1 && v[2] == 3 && v[3] == 7 && v[4] == 10);
  /* over the cap: the highest */
  n = srv_repo_versions(at("m"), v, 2);
  REQUIRE(n == 2);
  CHECK(v[0] == 7 && v[1] == 10);
  CHECK(srv_repo_versions(at("m"), v, 0) == 0);
  CHECK(srv_repo_versions(at("no-such-model"), v, 16) == 0);
  make_dir(at("empty"));
  CHECK(srv_repo_versions(at("empty"), v, 16) == 0);
  tmp_end();
}

/* ---- concurrency --------------------------------------------------------- */

/* Scans from several loader threads at once agree with a lone one. */
enum { THREADS = 4, ROUNDS = 20 };

static srv_repo_listing_t baseline;
static char *scan_roots[1];

static void *scanner(void *arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; i++) {
    srv_repo_listing_t l;
    srv_repo_scan(scan_roots, 1, true, &l);
    CHECK(l.count == baseline.count);
    for (size_t m = 0; m < l.count && m < baseline.count; m++) {
      CHECK(strcmp(l.models[m].name, baseline.models[m].name) == 0);
      CHECK(l.models[m].fingerprint == baseline.models[m].fingerprint);
    }
    int64_t v[4];
    CHECK(srv_repo_versions(baseline.models[0].dir, v, 4) == 2);
    srv_repo_listing_free(&l);
  }
  return NULL;
}

static void scans_run_concurrently(void) {
  tmp_begin();
  make_dir(at("repo"));
  for (int m = 0; m < 8; m++) {
    make_dir(at("repo/model%d", m));
    make_dir(at("repo/model%d/1", m));
    make_dir(at("repo/model%d/2", m));
    write_file(at("repo/model%d/1/model.bin", m), "weights");
  }
  char repo[PATH_MAX];
  snprintf(repo, sizeof repo, "%s", at("repo"));
  scan_roots[0] = repo;
  srv_repo_scan(scan_roots, 1, true, &baseline);
  REQUIRE(baseline.count == 8);
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, scanner, NULL);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  srv_repo_listing_free(&baseline);
  tmp_end();
}

UNIT_MAIN("repo_scan", UNIT_CASE(scan_lists_model_folders_of_all_roots),
          UNIT_CASE(fingerprint_sees_every_kind_of_change),
          UNIT_CASE(fingerprint_stops_at_depth_limit),
          UNIT_CASE(versions_lists_numeric_folders_ascending),
          UNIT_CASE(scans_run_concurrently))
