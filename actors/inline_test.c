/* Inline runs (inline.h): the caller runs the actors its sends schedule,
 * chains of sends stay on it, the budget hands the rest to the workers,
 * pinned actors keep their thread, and turns stay exclusive when outside
 * threads and workers send to the same actors at once. */
#include "actors/inline.h"

#include <stdlib.h>

#include "actors/runtime.h"
#include "actors/testing.h"
#include "test/unit/unit.h"

enum {
  STRESS_THREADS = 4,
  STRESS_ACTORS = 8,
  STRESS_ROUNDS = ACT_TEST_N(20000, 3000),
  SELF_SENDS = 2000,
};

/* ---- where behaviours run ---- */

typedef struct {
  act_actor_t actor;
  act_actor_t *forward_to; /* pass each message on, or free it */
  pthread_t ran_on;
  atomic_ullong handled;
} hop_t;

static void hop_fn(act_actor_t *self, act_msg_t *m) {
  hop_t *h = act_actor_state(self);
  h->ran_on = pthread_self();
  if (m->flags & ACT_MSG_STOP) return;
  if (h->forward_to != NULL)
    act_send(h->forward_to, m);
  else
    act_msg_free(m);
  atomic_fetch_add(&h->handled, 1);
}

static void stop_hop(act_runtime_t *rt, hop_t *h) {
  act_msg_t stop = {0};
  act_send_stop(&h->actor, &stop);
  act_runtime_quiesce(rt);
}

static void inline_runs_chain_on_caller(void) {
  act_runtime_t *rt = act_runtime_new(NULL);
  hop_t *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
  act_actor_init(&b->actor, rt, hop_fn, b);
  act_actor_init(&a->actor, rt, hop_fn, a);
  a->forward_to = &b->actor;
  act_inline_begin(rt);
  act_send(&a->actor, act_msg_alloc(sizeof(act_msg_t)));
  /* Nothing runs before the end of the inline section. */
  CHECK_EQ_U64(atomic_load(&a->handled), 0);
  act_inline_end();
  CHECK_EQ_U64(atomic_load(&a->handled), 1);
  CHECK_EQ_U64(atomic_load(&b->handled), 1);
  CHECK(pthread_equal(a->ran_on, pthread_self()));
  CHECK(pthread_equal(b->ran_on, pthread_self()));
  act_msg_t sa = {0}, sb = {0};
  act_send_stop(&a->actor, &sa);
  act_send_stop(&b->actor, &sb);
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  free(a);
  free(b);
}

/* An actor that sends itself SELF_SENDS messages, one per turn: the
 * budget ends the inline run and the workers finish the rest. */
typedef struct {
  act_actor_t actor;
  unsigned left;
  atomic_ullong on_caller, elsewhere;
  pthread_t caller;
  atomic_int done;
} looper_t;

static void looper_fn(act_actor_t *self, act_msg_t *m) {
  looper_t *l = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) return;
  if (pthread_equal(pthread_self(), l->caller))
    atomic_fetch_add(&l->on_caller, 1);
  else
    atomic_fetch_add(&l->elsewhere, 1);
  if (--l->left > 0) {
    act_send(self, m);
  } else {
    act_msg_free(m);
    atomic_store(&l->done, 1);
  }
}

static void inline_budget_hands_over(void) {
  act_runtime_t *rt = act_runtime_new(NULL);
  looper_t *l = calloc(1, sizeof *l);
  l->left = SELF_SENDS;
  l->caller = pthread_self();
  act_actor_init(&l->actor, rt, looper_fn, l);
  act_inline_begin(rt);
  act_send(&l->actor, act_msg_alloc(sizeof(act_msg_t)));
  act_inline_end();
  uint64_t end = act_now_ns() + 10000000000ull;
  while (!atomic_load(&l->done) && act_now_ns() < end) sched_yield();
  CHECK(atomic_load(&l->done));
  CHECK(atomic_load(&l->on_caller) > 0);
  CHECK(atomic_load(&l->on_caller) < SELF_SENDS); /* the budget stopped it */
  CHECK_EQ_U64(atomic_load(&l->on_caller) + atomic_load(&l->elsewhere), SELF_SENDS);
  act_msg_t stop = {0};
  act_send_stop(&l->actor, &stop);
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  free(l);
}

static void inline_leaves_pinned_actors_alone(void) {
  act_runtime_t *rt = act_runtime_new(NULL);
  hop_t *p = calloc(1, sizeof *p);
  REQUIRE(act_actor_init_pinned(&p->actor, rt, hop_fn, p, "pin-inline") == 0);
  act_inline_begin(rt);
  act_send(&p->actor, act_msg_alloc(sizeof(act_msg_t)));
  act_inline_end();
  REQUIRE(act_test_wait_ge(&p->handled, 1, 10));
  CHECK(!pthread_equal(p->ran_on, pthread_self()));
  stop_hop(rt, p);
  act_runtime_free(rt);
  free(p);
}

/* ---- exclusivity under contention ---- */

typedef struct {
  act_actor_t actor;
  atomic_int inside;
  unsigned long long count; /* the actor's own: a race here is a TSan report */
  atomic_ullong seen, overlaps;
} counter_t;

static void counter_fn(act_actor_t *self, act_msg_t *m) {
  counter_t *c = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) return;
  if (atomic_exchange(&c->inside, 1) != 0) atomic_fetch_add(&c->overlaps, 1);
  c->count++;
  atomic_store(&c->seen, c->count);
  atomic_store(&c->inside, 0);
  act_msg_free(m);
}

typedef struct {
  act_runtime_t *rt;
  counter_t *actors;
  unsigned seed;
} stress_arg_t;

static void *stress_thread(void *p) {
  stress_arg_t *arg = p;
  for (int i = 0; i < STRESS_ROUNDS; i++) {
    act_inline_begin(arg->rt);
    for (int k = 0; k < 3; k++) {
      arg->seed = arg->seed * 1103515245u + 12345u;
      act_send(&arg->actors[(arg->seed >> 16) % STRESS_ACTORS].actor,
               act_msg_alloc(sizeof(act_msg_t)));
    }
    act_inline_end();
  }
  return NULL;
}

static void inline_turns_stay_exclusive(void) {
  act_runtime_t *rt = act_runtime_new(NULL);
  counter_t *actors = calloc(STRESS_ACTORS, sizeof *actors);
  for (int i = 0; i < STRESS_ACTORS; i++)
    act_actor_init(&actors[i].actor, rt, counter_fn, &actors[i]);
  pthread_t threads[STRESS_THREADS];
  stress_arg_t args[STRESS_THREADS];
  for (int t = 0; t < STRESS_THREADS; t++) {
    args[t] = (stress_arg_t){rt, actors, (unsigned)t * 7919u + 1u};
    REQUIRE(pthread_create(&threads[t], NULL, stress_thread, &args[t]) == 0);
  }
  /* Plain sends from this thread too: they go to the workers. */
  for (int i = 0; i < STRESS_ROUNDS; i++)
    act_send(&actors[i % STRESS_ACTORS].actor, act_msg_alloc(sizeof(act_msg_t)));
  for (int t = 0; t < STRESS_THREADS; t++) pthread_join(threads[t], NULL);
  unsigned long long want = (unsigned long long)STRESS_ROUNDS * (3 * STRESS_THREADS + 1);
  uint64_t end = act_now_ns() + 30000000000ull;
  unsigned long long total = 0, overlaps = 0;
  while (act_now_ns() < end) {
    total = 0;
    for (int i = 0; i < STRESS_ACTORS; i++) total += atomic_load(&actors[i].seen);
    if (total == want) break;
    sched_yield();
  }
  for (int i = 0; i < STRESS_ACTORS; i++) overlaps += atomic_load(&actors[i].overlaps);
  CHECK_EQ_U64(total, want);
  CHECK_EQ_U64(overlaps, 0);
  act_msg_t stops[STRESS_ACTORS];
  for (int i = 0; i < STRESS_ACTORS; i++) {
    stops[i] = (act_msg_t){0};
    act_send_stop(&actors[i].actor, &stops[i]);
  }
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  free(actors);
}

UNIT_MAIN("inline", UNIT_CASE(inline_runs_chain_on_caller),
          UNIT_CASE(inline_budget_hands_over), UNIT_CASE(inline_leaves_pinned_actors_alone),
          UNIT_CASE(inline_turns_stay_exclusive))
