/* Replays fuzz inputs without libFuzzer: every regular file named on the
 * command line, or found under a named folder (recursively), goes once
 * through LLVMFuzzerTestOneInput. Used by the replay tests (under ASan in
 * --config=asan) and to reproduce a crash. Single-threaded. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test/fuzz/fuzz.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return 1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t n;
  while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (buf == NULL) return 1;
  /* An exactly-sized copy, so that ASan sees reads past the end. */
  uint8_t *exact = malloc(len ? len : 1);
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

/* Returns the number of files run, or -1 on an unreadable path. */
static long run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return run_file(path) == 0 ? 1 : -1;
  DIR *d = opendir(path);
  if (d == NULL) {
    perror(path);
    return -1;
  }
  long count = 0;
  struct dirent *e;
  while (count >= 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char child[4096];
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    long n = run_path(child);
    count = n < 0 ? -1 : count + n;
  }
  closedir(d);
  return count;
}

int main(int argc, char **argv) {
  long total = 0;
  for (int i = 1; i < argc; i++) {
    long n = run_path(argv[i]);
    if (n < 0) return 1;
    total += n;
  }
  printf("fuzz_driver: %ld inputs ran without a crash\n", total);
  return total > 0 ? 0 : 1;
}
