/* Timer-heap tests: random inserts and removals against a brute-force
 * model; the minimum is always the earliest (deadline, arm order). */
#include "actors/timer_heap.h"

#include <stdlib.h>

#include "actors/testing.h"
#include "test/unit/unit.h"

enum { TIMERS = 2000, STEPS = ACT_TEST_N(200000, 40000) };

static act_timer_t *model_min(act_timer_t *t, int n) {
  act_timer_t *best = NULL;
  for (int i = 0; i < n; i++) {
    if (t[i].slot == 0) continue;
    if (best == NULL || t[i].deadline_ns < best->deadline_ns ||
        (t[i].deadline_ns == best->deadline_ns && t[i].seq < best->seq))
      best = &t[i];
  }
  return best;
}

static void random_ops_match_model(void) {
  static act_timer_t t[TIMERS];
  act_timer_heap_t h;
  act_timer_heap_init(&h);
  for (int i = 0; i < TIMERS; i++) act_timer_init(&t[i]);
  unsigned rng = 12345, seq = 0;
  unsigned long long mismatches = 0;
  for (int step = 0; step < STEPS; step++) {
    rng = rng * 1103515245u + 12345u;
    act_timer_t *x = &t[(rng >> 8) % TIMERS];
    if (x->slot == 0) {
      x->deadline_ns = (rng >> 4) % 500; /* many equal deadlines */
      x->seq = seq++;
      act_timer_heap_insert(&h, x);
    } else if ((rng & 3) == 0) {
      act_timer_heap_remove(&h, act_timer_heap_min(&h));
    } else {
      act_timer_heap_remove(&h, x);
    }
    if (act_timer_heap_min(&h) != model_min(t, TIMERS)) mismatches++;
    if (step % 1000 == 0) {
      for (uint32_t i = 0; i < h.len; i++)
        if (h.items[i]->slot != i + 1) mismatches++;
    }
  }
  CHECK_EQ_U64(mismatches, 0);
  act_timer_heap_free(&h);
}

static void drains_in_order(void) {
  static act_timer_t t[TIMERS];
  act_timer_heap_t h;
  act_timer_heap_init(&h);
  for (int i = 0; i < TIMERS; i++) {
    act_timer_init(&t[i]);
    t[i].deadline_ns = (uint64_t)((i * 7919) % 101);
    t[i].seq = (uint64_t)i;
    act_timer_heap_insert(&h, &t[i]);
  }
  uint64_t last_d = 0, last_s = 0;
  unsigned long long bad = 0, n = 0;
  act_timer_t *m;
  while ((m = act_timer_heap_min(&h)) != NULL) {
    if (n > 0 && (m->deadline_ns < last_d ||
                  (m->deadline_ns == last_d && m->seq < last_s)))
      bad++;
    last_d = m->deadline_ns;
    last_s = m->seq;
    act_timer_heap_remove(&h, m);
    CHECK_EQ_U64(m->slot, 0);
    n++;
  }
  CHECK_EQ_U64(n, TIMERS);
  CHECK_EQ_U64(bad, 0);
  act_timer_heap_free(&h);
}

UNIT_MAIN("timer_heap", UNIT_CASE(random_ops_match_model),
          UNIT_CASE(drains_in_order))
