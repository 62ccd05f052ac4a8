/* Shutdown tests: new/free cycles, quiesce waiting for slow stop handlers
 * and for children spawned by stopping parents, reuse after quiesce, and
 * free joining every thread (LSan checks that nothing is left). */
#include "actors/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "actors/testing.h"
#include "test/unit/unit.h"

enum { SLOW = 40, PARENTS = ACT_TEST_N(300, 200), CHILD_MSGS = 50 };

static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  if (f != NULL) fclose(f);
  return n;
}

/* The thread count once it reaches `want`, or after 2 s the last one read:
 * a joined thread has finished, but the kernel may still count it for a
 * moment after its join returns (it clears the join word before it leaves
 * the thread group). */
static int thread_count_settled(int want) {
  int n = thread_count();
  for (int i = 0; i < 200 && n != want; i++) {
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    nanosleep(&ms10, NULL);
    n = thread_count();
  }
  return n;
}

static void new_free_cycles_leave_no_threads(void) {
  /* A first cycle lets sanitizers start their own background threads. */
  act_runtime_free(act_runtime_new(&(act_config_t){.workers = 1}));
  int baseline = thread_count();
  for (unsigned i = 0; i < 20; i++) {
    act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1 + i % 4});
    REQUIRE(rt != NULL);
    CHECK_EQ_U64(act_runtime_workers(rt), 1 + i % 4);
    CHECK_EQ_U64(thread_count(), baseline + 2 + (int)(i % 4)); /* + timer */
    act_runtime_quiesce(rt); /* nothing alive: returns at once */
    act_runtime_free(rt);
    CHECK_EQ_U64(thread_count_settled(baseline), baseline);
  }
  act_runtime_t *rt = act_runtime_new(NULL); /* defaults: one per core */
  REQUIRE(rt != NULL);
  CHECK(act_runtime_workers(rt) >= 1);
  act_runtime_free(rt);
}

/* Stop handlers that take a while: quiesce must wait for all of them. */
static atomic_int slow_done;

static void slow_stop_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP) {
    uint64_t end = act_now_ns() + 1000000; /* 1 ms of "work" */
    while (act_now_ns() < end) {
    }
    atomic_fetch_add(&slow_done, 1);
  }
  act_msg_free(m);
}

static void quiesce_waits_for_slow_stop_handlers(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  atomic_store(&slow_done, 0);
  for (int i = 0; i < SLOW; i++) {
    act_actor_t *a = act_spawn(rt, slow_stop_fn, NULL);
    act_send(a, act_msg_alloc(64));
    act_send_stop(a, act_msg_alloc(64));
  }
  act_runtime_quiesce(rt);
  CHECK_EQ_U64(atomic_load(&slow_done), SLOW);
  act_runtime_free(rt);
}

/* A parent spawns a child, feeds it, stops it, and stops itself; the
 * child outlives the parent. quiesce must wait for the children too. */
static atomic_ullong child_msgs, children_stopped;

static void child_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP)
    atomic_fetch_add(&children_stopped, 1);
  else
    atomic_fetch_add(&child_msgs, 1);
  act_msg_free(m);
}

static void parent_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  act_actor_t *child = act_spawn(act_actor_runtime(self), child_fn, NULL);
  for (int i = 0; i < CHILD_MSGS; i++) act_send(child, act_msg_alloc(128));
  act_send_stop(child, act_msg_alloc(64));
  act_send_stop(self, m);
}

static void quiesce_waits_for_children_of_stopped_parents(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  for (int round = 0; round < 2; round++) { /* reusable after quiesce */
    atomic_store(&child_msgs, 0);
    atomic_store(&children_stopped, 0);
    for (int i = 0; i < PARENTS; i++)
      act_send(act_spawn(rt, parent_fn, NULL), act_msg_alloc(64));
    act_runtime_quiesce(rt);
    CHECK_EQ_U64(atomic_load(&children_stopped), PARENTS);
    CHECK_EQ_U64(atomic_load(&child_msgs), (unsigned long long)PARENTS * CHILD_MSGS);
  }
  act_runtime_free(rt);
}

/* free joins pinned threads nobody reaped, and the timer thread. */
static void noop_fn(act_actor_t *self, act_msg_t *m) { act_msg_free(m); }

static void free_joins_unreaped_pinned_threads(void) {
  int baseline = thread_count();
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  static act_actor_t pins[5];
  for (int i = 0; i < 5; i++) {
    REQUIRE(act_actor_init_pinned(&pins[i], rt, noop_fn, NULL, "pin-shut") == 0);
    act_send(&pins[i], act_msg_alloc(64));
  }
  CHECK_EQ_U64(thread_count(), baseline + 3 + 5);
  for (int i = 0; i < 5; i++) act_send_stop(&pins[i], act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  CHECK_EQ_U64(thread_count_settled(baseline), baseline);
}

UNIT_MAIN("shutdown", UNIT_CASE(new_free_cycles_leave_no_threads),
          UNIT_CASE(quiesce_waits_for_slow_stop_handlers),
          UNIT_CASE(quiesce_waits_for_children_of_stopped_parents),
          UNIT_CASE(free_joins_unreaped_pinned_threads))
