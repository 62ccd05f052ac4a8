/* Minimal unit-test harness for Nereid's C tests: named cases, CHECK macros
 * that record failures and continue, and a closing line "unit: N passed,
 * N failed" that tools/test adds up. Single-threaded use: the runner calls
 * cases one after another; CHECK may be used from other threads (atomic). */
#ifndef NEREID_TEST_UNIT_H
#define NEREID_TEST_UNIT_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  void (*fn)(void);
} unit_case_t;

/* Failures seen in the running case; a case passes when it adds none. */
extern atomic_int unit_failures;

#define UNIT_CASE(fn) \
  { #fn, fn }

/* Records a failure with its location and keeps going. */
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      atomic_fetch_add_explicit(&unit_failures, 1, memory_order_relaxed);        \
    }                                                                            \
  } while (0)

#define CHECK_EQ_U64(a, b)                                                          \
  do {                                                                              \
    unsigned long long a_ = (unsigned long long)(a);                                \
    unsigned long long b_ = (unsigned long long)(b);                                \
    if (a_ != b_) {                                                                 \
      fprintf(stderr, "  %s:%d: CHECK failed: %s == %s (%llu != %llu)\n", __FILE__, \
              __LINE__, #a, #b, a_, b_);                                            \
      atomic_fetch_add_explicit(&unit_failures, 1, memory_order_relaxed);           \
    }                                                                               \
  } while (0)

#define CHECK_STREQ(a, b)                                                               \
  do {                                                                                  \
    const char *a_ = (a), *b_ = (b);                                                    \
    if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {                              \
      fprintf(stderr, "  %s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", __FILE__, \
              __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                \
      atomic_fetch_add_explicit(&unit_failures, 1, memory_order_relaxed);               \
    }                                                                                   \
  } while (0)

/* A check whose failure makes the rest of the case meaningless. */
#define REQUIRE(cond)                                                              \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "  %s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
      atomic_fetch_add_explicit(&unit_failures, 1, memory_order_relaxed);          \
      return;                                                                      \
    }                                                                              \
  } while (0)

/* Whether `text` holds a match of the POSIX extended regular expression
 * `pattern`, '^' and '$' matching at line ends (0 when it does not compile). */
int unit_matches(const char *text, const char *pattern);

/* How many times slower this build runs: $NEREID_TEST_SLOWDOWN (the
 * sanitizer configs set it, .bazelrc), 1 when unset or not positive.
 * Tests divide their rounds or multiply their waits by it. */
int unit_slowdown(void);

/* Runs every case, prints one line per case and the closing summary line.
 * Returns the process exit status (0 when every case passed). */
int unit_run(const char *suite, const unit_case_t *cases, size_t count);

#define UNIT_MAIN(suite, ...)                                         \
  int main(void) {                                                    \
    static const unit_case_t cases_[] = {__VA_ARGS__};                \
    return unit_run(suite, cases_, sizeof cases_ / sizeof cases_[0]); \
  }

#endif
