/* Mailbox tests: the push/pop/unschedule protocol single-threaded, then a
 * torture with producer threads and consumer threads that hand the runner
 * role to each other exactly as workers do. */
#include "actors/mailbox.h"

#include <stdlib.h>

#include "actors/testing.h"
#include "test/unit/unit.h"

enum {
  PRODUCERS = 8,
  CONSUMERS = 2,
  PER_PRODUCER = ACT_TEST_N(250000, 150000),
  TURN_BATCH = 7,
};

typedef struct {
  act_msg_t hdr;
  uint32_t producer;
  uint32_t seq;
} item_t;

static void empty_mailbox_schedules_on_first_push(void) {
  act_mailbox_t mb;
  act_mailbox_init(&mb);
  item_t it[3] = {0};
  CHECK(act_mailbox_pop(&mb) == NULL);
  CHECK(act_mailbox_push(&mb, &it[0].hdr));  /* idle: caller schedules */
  CHECK(!act_mailbox_push(&mb, &it[1].hdr)); /* already scheduled */
  CHECK(!act_mailbox_push(&mb, &it[2].hdr));
  CHECK(act_mailbox_newest(&mb) == &it[2].hdr);
  CHECK(!act_mailbox_try_unschedule(&mb)); /* not empty */
  CHECK(act_mailbox_pop(&mb) == &it[0].hdr);
  CHECK(act_mailbox_pop(&mb) == &it[1].hdr);
  CHECK(act_mailbox_pop(&mb) == &it[2].hdr);
  CHECK(act_mailbox_pop(&mb) == NULL);
  CHECK(act_mailbox_is_drained(&mb));
  CHECK(act_mailbox_try_unschedule(&mb));
  /* Unscheduled again: the next push must schedule again. */
  CHECK(act_mailbox_push(&mb, &it[0].hdr));
  CHECK(act_mailbox_pop(&mb) == &it[0].hdr);
  CHECK(act_mailbox_try_unschedule(&mb));
}

static void popped_message_is_detached(void) {
  /* A popped message may be reused at once (embedded message re-sent). */
  act_mailbox_t mb;
  act_mailbox_init(&mb);
  item_t a = {0}, b = {0};
  CHECK(act_mailbox_push(&mb, &a.hdr));
  CHECK(act_mailbox_pop(&mb) == &a.hdr);
  CHECK(!act_mailbox_push(&mb, &a.hdr)); /* still scheduled: we run it */
  CHECK(!act_mailbox_push(&mb, &b.hdr));
  CHECK(act_mailbox_pop(&mb) == &a.hdr);
  CHECK(act_mailbox_pop(&mb) == &b.hdr);
  CHECK(act_mailbox_pop(&mb) == NULL);
  CHECK(act_mailbox_try_unschedule(&mb));
}

/* Shared by the torture's threads. `last_seq` and `received` are plain
 * memory touched only by the current runner: TSan checks that the mailbox
 * hands the runner role over with proper happens-before edges. */
typedef struct {
  act_mailbox_t mb;
  atomic_int tokens;  /* "scheduled" hand-offs outstanding: 0 or 1 */
  atomic_int runq;    /* the token as a one-slot run queue */
  atomic_ullong done; /* messages consumed (for termination only) */
  atomic_int bad_double_schedule;
  uint32_t last_seq[PRODUCERS];
  unsigned long long received;
  unsigned long long out_of_order;
  item_t *items;
} torture_t;

typedef struct {
  torture_t *t;
  uint32_t id;
} producer_arg_t;

static void *producer_main(void *arg) {
  producer_arg_t *p = arg;
  torture_t *t = p->t;
  for (uint32_t s = 1; s <= PER_PRODUCER; s++) {
    item_t *it = &t->items[(size_t)p->id * PER_PRODUCER + (s - 1)];
    it->producer = p->id;
    it->seq = s;
    if (act_mailbox_push(&t->mb, &it->hdr)) {
      if (atomic_fetch_add(&t->tokens, 1) != 0)
        atomic_fetch_add(&t->bad_double_schedule, 1);
      atomic_store_explicit(&t->runq, 1, memory_order_release);
    }
  }
  return NULL;
}

/* One turn as a worker runs it; returns true if the mailbox stays ours. */
static bool consumer_turn(torture_t *t) {
  for (int n = 0; n < TURN_BATCH; n++) {
    act_msg_t *m = act_mailbox_pop(&t->mb);
    if (m == NULL) break;
    item_t *it = (item_t *)m;
    if (it->seq != t->last_seq[it->producer] + 1) t->out_of_order++;
    t->last_seq[it->producer] = it->seq;
    t->received++;
    atomic_fetch_add_explicit(&t->done, 1, memory_order_relaxed);
  }
  /* Give the token back before unscheduling: once the CAS succeeds a
   * producer may schedule at once. Failure means no producer could have
   * seen the bit, so taking the token again cannot overlap with one. */
  atomic_fetch_sub(&t->tokens, 1);
  if (act_mailbox_try_unschedule(&t->mb)) return false;
  atomic_fetch_add(&t->tokens, 1);
  return true;
}

static void *consumer_main(void *arg) {
  torture_t *t = arg;
  const unsigned long long total = (unsigned long long)PRODUCERS * PER_PRODUCER;
  uint64_t give_up = act_now_ns() + 40ull * 1000000000u; /* lost messages */
  while (atomic_load_explicit(&t->done, memory_order_relaxed) < total &&
         act_now_ns() < give_up) {
    int one = 1;
    /* acquire: take the runner role from whoever released it. */
    if (!atomic_compare_exchange_weak_explicit(&t->runq, &one, 0,
                                               memory_order_acquire,
                                               memory_order_relaxed)) {
      sched_yield();
      continue;
    }
    /* Still ours after a turn: put it back so the other consumer may run
     * it next (the "rescheduled on another worker" case). */
    if (consumer_turn(t)) atomic_store_explicit(&t->runq, 1, memory_order_release);
  }
  return NULL;
}

static void torture_many_producers_migrating_consumer(void) {
  torture_t *t = calloc(1, sizeof *t);
  REQUIRE(t != NULL);
  t->items = calloc((size_t)PRODUCERS * PER_PRODUCER, sizeof(item_t));
  REQUIRE(t->items != NULL);
  act_mailbox_init(&t->mb);
  producer_arg_t pa[PRODUCERS];
  pthread_t pt[PRODUCERS], ct[CONSUMERS];
  for (uint32_t i = 0; i < PRODUCERS; i++) pa[i] = (producer_arg_t){t, i};
  for (unsigned i = 0; i < CONSUMERS; i++)
    pthread_create(&ct[i], NULL, consumer_main, t);
  act_test_start(pt, PRODUCERS, producer_main, pa, sizeof pa[0]);
  act_test_join(pt, PRODUCERS);
  act_test_join(ct, CONSUMERS);
  CHECK_EQ_U64(t->received, (unsigned long long)PRODUCERS * PER_PRODUCER);
  CHECK_EQ_U64(t->out_of_order, 0);
  CHECK_EQ_U64(atomic_load(&t->bad_double_schedule), 0);
  for (int i = 0; i < PRODUCERS; i++) CHECK_EQ_U64(t->last_seq[i], PER_PRODUCER);
  CHECK(act_mailbox_is_drained(&t->mb));
  CHECK_EQ_U64(atomic_load(&t->tokens), 0);
  free(t->items);
  free(t);
}

UNIT_MAIN("mailbox", UNIT_CASE(empty_mailbox_schedules_on_first_push),
          UNIT_CASE(popped_message_is_detached),
          UNIT_CASE(torture_many_producers_migrating_consumer))
