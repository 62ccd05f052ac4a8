/* Timer tests: delivery in deadline order and never early, cancel before
 * and after firing, a cancel racing the firing (exactly one outcome), many
 * timers armed from several threads, re-arming, and timers to a pinned
 * actor. */
#include "actors/timer.h"

#include <stdlib.h>

#include "actors/runtime.h"
#include "actors/testing.h"
#include "test/unit/unit.h"

enum {
  ORDERED = 300,
  RACES = ACT_TEST_N(3000, 2000),
  MANY_THREADS = 4,
  MANY_PER_THREAD = ACT_TEST_N(25000, 10000),
};

typedef struct {
  act_msg_t hdr;
  act_timer_t timer;
  uint64_t deadline;
  uint32_t id;
  atomic_int delivered;
} tmsg_t;

/* Receiver: records arrival order and lateness; frees nothing (the test
 * owns the messages, which embed their timers). */
static struct {
  atomic_uint n;
  uint32_t order[ORDERED];
  atomic_ullong early;
  atomic_ullong delivered;
} rx;

static void rx_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  tmsg_t *t = (tmsg_t *)m;
  if (act_now_ns() < t->deadline) atomic_fetch_add(&rx.early, 1);
  unsigned i = atomic_fetch_add(&rx.n, 1);
  if (i < ORDERED) rx.order[i] = t->id;
  atomic_store(&t->delivered, 1);
  atomic_fetch_add(&rx.delivered, 1);
}

static void rx_reset(void) {
  atomic_store(&rx.n, 0);
  atomic_store(&rx.early, 0);
  atomic_store(&rx.delivered, 0);
}

static void arm(act_runtime_t *rt, tmsg_t *t, uint64_t deadline, act_actor_t *to) {
  t->deadline = deadline;
  atomic_store(&t->delivered, 0);
  act_timer_arm(rt, &t->timer, deadline, to, &t->hdr);
}

static void fire_in_deadline_order(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  rx_reset();
  act_actor_t *r = act_spawn(rt, rx_fn, NULL);
  static tmsg_t t[ORDERED];
  uint64_t base = act_now_ns() + 20000000; /* +20 ms: all armed before any fires */
  unsigned rng = 99;
  for (uint32_t i = 0; i < ORDERED; i++) {
    rng = rng * 1103515245u + 12345u;
    t[i].id = i;
    act_timer_init(&t[i].timer);
    /* Deadlines 0.2 ms apart in shuffled arm order; every 10th shares a
     * deadline with its neighbour to check arm order breaks ties. */
    uint32_t slot = (rng >> 8) % 50;
    arm(rt, &t[i], base + (uint64_t)slot * 200000, r);
  }
  CHECK(act_test_wait_ge(&rx.delivered, ORDERED, 10));
  CHECK_EQ_U64(atomic_load(&rx.early), 0);
  unsigned long long bad = 0;
  for (unsigned i = 1; i < ORDERED; i++) {
    tmsg_t *a = &t[rx.order[i - 1]], *b = &t[rx.order[i]];
    if (a->deadline > b->deadline || (a->deadline == b->deadline && a->id > b->id))
      bad++;
  }
  CHECK_EQ_U64(bad, 0);
  act_send_stop(r, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

static void cancel_before_and_after_firing(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
  REQUIRE(rt != NULL);
  rx_reset();
  act_actor_t *r = act_spawn(rt, rx_fn, NULL);
  static tmsg_t t;
  act_timer_init(&t.timer);
  CHECK(!act_timer_cancel(rt, &t.timer)); /* never armed */
  arm(rt, &t, act_now_ns() + 1000000000ull, r);
  CHECK(act_timer_cancel(rt, &t.timer)); /* before firing: msg is ours */
  CHECK(!act_timer_cancel(rt, &t.timer)); /* already cancelled */
  act_test_sleep_us(2000);
  CHECK_EQ_U64(atomic_load(&t.delivered), 0);
  arm(rt, &t, act_now_ns(), r); /* re-armed, due now */
  CHECK(act_test_wait_ge(&rx.delivered, 1, 10));
  CHECK(!act_timer_cancel(rt, &t.timer)); /* after firing */
  arm(rt, &t, act_now_ns() + 1000, r); /* fired timers can be re-armed */
  CHECK(act_test_wait_ge(&rx.delivered, 2, 10));
  act_send_stop(r, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

static void cancel_racing_fire_has_one_outcome(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  rx_reset();
  act_actor_t *r = act_spawn(rt, rx_fn, NULL);
  static tmsg_t t[RACES];
  static bool was_cancelled[RACES];
  unsigned long long cancelled = 0, not_exactly_one = 0;
  for (int i = 0; i < RACES; i++) {
    act_timer_init(&t[i].timer);
    arm(rt, &t[i], act_now_ns() + (uint64_t)(i % 40) * 1000, r);
    if (i % 3 == 0) act_test_sleep_us(i % 30);
    was_cancelled[i] = act_timer_cancel(rt, &t[i].timer);
    cancelled += was_cancelled[i];
  }
  /* Everything not cancelled is delivered; wait for it, then check that
   * each timer had exactly one fate. */
  CHECK(act_test_wait_ge(&rx.delivered, RACES - cancelled, 10));
  act_test_sleep_us(5000);
  for (int i = 0; i < RACES; i++)
    not_exactly_one += (atomic_load(&t[i].delivered) != 0) == was_cancelled[i];
  CHECK_EQ_U64(atomic_load(&rx.delivered) + cancelled, RACES);
  CHECK_EQ_U64(not_exactly_one, 0);
  CHECK(cancelled > 0 && cancelled < RACES); /* both outcomes happened */
  act_send_stop(r, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

typedef struct {
  act_runtime_t *rt;
  act_actor_t *to;
  tmsg_t *t;
  unsigned long long cancelled;
} armer_t;

static void *armer_main(void *arg) {
  armer_t *a = arg;
  uint64_t now = act_now_ns();
  for (int i = 0; i < MANY_PER_THREAD; i++) {
    act_timer_init(&a->t[i].timer);
    arm(a->rt, &a->t[i], now + (uint64_t)((i * 7919) % 20000) * 1000, a->to);
  }
  for (int i = 0; i < MANY_PER_THREAD; i += 5)
    a->cancelled += act_timer_cancel(a->rt, &a->t[i].timer);
  return NULL;
}

static void many_timers_from_many_threads(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  rx_reset();
  act_actor_t *r = act_spawn(rt, rx_fn, NULL);
  armer_t armers[MANY_THREADS];
  tmsg_t *all = calloc((size_t)MANY_THREADS * MANY_PER_THREAD, sizeof *all);
  REQUIRE(all != NULL);
  for (int i = 0; i < MANY_THREADS; i++)
    armers[i] = (armer_t){rt, r, all + (size_t)i * MANY_PER_THREAD, 0};
  pthread_t th[MANY_THREADS];
  act_test_start(th, MANY_THREADS, armer_main, armers, sizeof armers[0]);
  act_test_join(th, MANY_THREADS);
  unsigned long long cancelled = 0;
  for (int i = 0; i < MANY_THREADS; i++) cancelled += armers[i].cancelled;
  unsigned long long want = (unsigned long long)MANY_THREADS * MANY_PER_THREAD - cancelled;
  CHECK(act_test_wait_ge(&rx.delivered, want, 30));
  act_test_sleep_us(2000);
  CHECK_EQ_U64(atomic_load(&rx.delivered), want);
  CHECK_EQ_U64(atomic_load(&rx.early), 0);
  act_send_stop(r, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  free(all);
}

static void timer_to_pinned_actor_and_dropped_at_free(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
  REQUIRE(rt != NULL);
  rx_reset();
  act_actor_t pinned;
  REQUIRE(act_actor_init_pinned(&pinned, rt, rx_fn, NULL, "pin-timer") == 0);
  static tmsg_t t, late;
  act_timer_init(&t.timer);
  act_timer_init(&late.timer);
  arm(rt, &t, act_now_ns() + 2000000, &pinned);
  CHECK(act_test_wait_ge(&rx.delivered, 1, 10));
  CHECK_EQ_U64(atomic_load(&rx.early), 0);
  act_send_stop(&pinned, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  /* Still armed at free: dropped, never delivered (its target is gone). */
  arm(rt, &late, act_now_ns() + 3600ull * 1000000000u, &pinned);
  act_runtime_free(rt);
  CHECK_EQ_U64(atomic_load(&late.delivered), 0);
}

UNIT_MAIN("timer", UNIT_CASE(fire_in_deadline_order),
          UNIT_CASE(cancel_before_and_after_firing),
          UNIT_CASE(cancel_racing_fire_has_one_outcome),
          UNIT_CASE(many_timers_from_many_threads),
          UNIT_CASE(timer_to_pinned_actor_and_dropped_at_free))
