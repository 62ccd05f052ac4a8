/* The harness counts a failing CHECK against its case and no other. */
#include "test/unit/unit.h"

static void failing_check_is_counted(void) {
  int before = atomic_load(&unit_failures);
  CHECK(1 + 1 == 3);
  int seen = atomic_load(&unit_failures) - before;
  atomic_store(&unit_failures, before); /* undo: this case must pass */
  CHECK(seen == 1);
}

static void passing_checks_add_nothing(void) {
  CHECK(1 + 1 == 2);
  CHECK_EQ_U64(7, 7);
  CHECK_STREQ("a", "a");
  CHECK(atomic_load(&unit_failures) == 0);
}

UNIT_MAIN("unit", UNIT_CASE(failing_check_is_counted),
          UNIT_CASE(passing_checks_add_nothing))
