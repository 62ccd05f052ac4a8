/* The correlation ID map: get/put/remove, removal that keeps colliding keys
 * findable (checked against a plain array over many random operations),
 * and eviction of the sequence stepped least recently when full. */
#include "backends/sequence/seq_corrid_map.h"

#include <stdlib.h>

#include "test/unit/unit.h"

static void basics(void) {
  seq_corrid_map_t *m = seq_corrid_map_new(4);
  REQUIRE(m != NULL);
  int32_t acc = 77;
  CHECK(!seq_corrid_map_get(m, 1000, &acc) && acc == 77);
  CHECK(!seq_corrid_map_put(m, 1000, 5));
  CHECK(!seq_corrid_map_put(m, 0, -1)); /* 0 and UINT64_MAX are keys like any */
  CHECK(!seq_corrid_map_put(m, UINT64_MAX, 9));
  CHECK(seq_corrid_map_get(m, 1000, &acc) && acc == 5);
  CHECK(seq_corrid_map_get(m, 0, &acc) && acc == -1);
  CHECK(seq_corrid_map_get(m, UINT64_MAX, &acc) && acc == 9);
  CHECK(!seq_corrid_map_put(m, 1000, 6)); /* update, not a new entry */
  CHECK_EQ_U64(seq_corrid_map_count(m), 3);
  seq_corrid_map_remove(m, 1000);
  seq_corrid_map_remove(m, 1000); /* absent: nothing happens */
  CHECK(!seq_corrid_map_get(m, 1000, &acc));
  CHECK_EQ_U64(seq_corrid_map_count(m), 2);
  seq_corrid_map_free(m);
  seq_corrid_map_free(NULL);
}

/* Random puts and removes over a small key range (many collisions in a
 * table of 64), compared with the truth after every operation. */
static void matches_reference(void) {
  enum { KEYS = 40, OPS = 20000 };
  seq_corrid_map_t *m = seq_corrid_map_new(KEYS);
  REQUIRE(m != NULL);
  int32_t truth[KEYS];
  bool present[KEYS] = {false};
  unsigned seed = 12345;
  uint32_t count = 0;
  for (int op = 0; op < OPS; op++) {
    seed = seed * 1103515245u + 12345u;
    uint32_t k = (seed >> 16) % KEYS;
    uint64_t key = (uint64_t)k * 0x100000000ull; /* differ only in high bits */
    if ((seed >> 8) % 3 == 0) {
      seq_corrid_map_remove(m, key);
      count -= present[k];
      present[k] = false;
    } else {
      CHECK(!seq_corrid_map_put(m, key, op)); /* never full: KEYS fit */
      count += !present[k];
      present[k] = true;
      truth[k] = op;
    }
    if (op % 97 != 0) continue;
    for (uint32_t j = 0; j < KEYS; j++) {
      int32_t acc = -1;
      bool got = seq_corrid_map_get(m, (uint64_t)j * 0x100000000ull, &acc);
      if (got != present[j] || (got && acc != truth[j])) {
        CHECK(got == present[j]);
        CHECK(!got || acc == truth[j]);
        seq_corrid_map_free(m);
        return;
      }
    }
    CHECK_EQ_U64(seq_corrid_map_count(m), count);
  }
  seq_corrid_map_free(m);
}

static void evicts_least_recently_stepped(void) {
  seq_corrid_map_t *m = seq_corrid_map_new(3);
  REQUIRE(m != NULL);
  CHECK(!seq_corrid_map_put(m, 1, 10));
  CHECK(!seq_corrid_map_put(m, 2, 20));
  CHECK(!seq_corrid_map_put(m, 3, 30));
  CHECK(!seq_corrid_map_put(m, 1, 11)); /* 1 stepped again: 2 is now oldest */
  CHECK(seq_corrid_map_put(m, 4, 40));  /* full: 2 goes */
  int32_t acc = 0;
  CHECK(!seq_corrid_map_get(m, 2, &acc));
  CHECK(seq_corrid_map_get(m, 1, &acc) && acc == 11);
  CHECK(seq_corrid_map_get(m, 3, &acc) && acc == 30);
  CHECK(seq_corrid_map_get(m, 4, &acc) && acc == 40);
  CHECK_EQ_U64(seq_corrid_map_count(m), 3);
  CHECK(seq_corrid_map_put(m, 5, 50)); /* then 3 */
  CHECK(!seq_corrid_map_get(m, 3, &acc));
  seq_corrid_map_remove(m, 1); /* an END frees room: no eviction */
  CHECK(!seq_corrid_map_put(m, 6, 60));
  CHECK(seq_corrid_map_get(m, 4, &acc) && seq_corrid_map_get(m, 5, &acc));
  seq_corrid_map_free(m);
}

static void capacity_is_bounded(void) {
  seq_corrid_map_t *m = seq_corrid_map_new(UINT32_MAX); /* clamped, not 2^33 slots */
  REQUIRE(m != NULL);
  for (uint64_t k = 0; k < SEQ_CORRID_MAP_MAX; k++) seq_corrid_map_put(m, k, (int32_t)k);
  CHECK(seq_corrid_map_put(m, SEQ_CORRID_MAP_MAX, 1)); /* the next one evicts key 0 */
  int32_t acc = 0;
  CHECK(!seq_corrid_map_get(m, 0, &acc));
  CHECK_EQ_U64(seq_corrid_map_count(m), SEQ_CORRID_MAP_MAX);
  seq_corrid_map_free(m);
  m = seq_corrid_map_new(0); /* at least one */
  REQUIRE(m != NULL);
  CHECK(!seq_corrid_map_put(m, 8, 1));
  CHECK(seq_corrid_map_put(m, 9, 2));
  CHECK(seq_corrid_map_get(m, 9, &acc) && acc == 2);
  seq_corrid_map_free(m);
}

UNIT_MAIN("seq_corrid_map", UNIT_CASE(basics), UNIT_CASE(matches_reference),
          UNIT_CASE(evicts_least_recently_stepped), UNIT_CASE(capacity_is_bounded))
