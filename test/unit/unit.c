/* Runner of the unit-test harness (see unit.h). Main thread only. */
#include "test/unit/unit.h"

#include <regex.h>
#include <time.h>

atomic_int unit_failures;

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int unit_matches(const char *text, const char *pattern) {
  regex_t re;
  if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE) != 0) return 0;
  int ok = regexec(&re, text, 0, NULL, 0) == 0;
  regfree(&re);
  return ok;
}

int unit_slowdown(void) {
  const char *s = getenv("NEREID_TEST_SLOWDOWN");
  int k = s != NULL ? atoi(s) : 0;
  return k > 0 ? k : 1;
}

int unit_run(const char *suite, const unit_case_t *cases, size_t count) {
  size_t passed = 0, failed = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (size_t i = 0; i < count; i++) {
    atomic_store(&unit_failures, 0);
    double start = seconds_now();
    cases[i].fn();
    double took = seconds_now() - start;
    fflush(stderr);
    if (atomic_load(&unit_failures) == 0) {
      passed++;
      printf("%s.%s ok (%.3fs)\n", suite, cases[i].name, took);
    } else {
      failed++;
      printf("%s.%s FAILED (%.3fs)\n", suite, cases[i].name, took);
    }
  }
  printf("unit: %zu passed, %zu failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
