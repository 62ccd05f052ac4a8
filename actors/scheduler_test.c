/* Scheduler tests: fairness (batch limit, stop at the newest message, a
 * self-flooding actor), stealing from a blocked worker, waking idle
 * workers, idle workers not burning CPU, local-queue overflow, several
 * runtimes talking, and more workers than cores. */
#include "actors/scheduler.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actors/runtime.h"
#include "actors/testing.h"
#include "test/unit/unit.h"

enum { LOG_MAX = 4096, OVERFLOW_ACTORS = 1000, PINGS = ACT_TEST_N(100000, 30000) };

/* Execution log: (actor tag, message kind) in the order behaviours ran. */
static struct {
  atomic_uint len;       /* entries claimed */
  atomic_uint committed; /* entries written (single worker: in order) */
  uint32_t tag[LOG_MAX];
  uint32_t kind[LOG_MAX];
} log_;

static atomic_int gate_open;

static void log_reset(void) {
  atomic_store(&log_.len, 0);
  atomic_store(&log_.committed, 0);
  atomic_store(&gate_open, 0);
}

static void log_fn(act_actor_t *self, act_msg_t *m) {
  uint32_t tag = (uint32_t)(uintptr_t)act_actor_state(self);
  if (!(m->flags & ACT_MSG_STOP)) {
    unsigned i = atomic_fetch_add(&log_.len, 1);
    if (i < LOG_MAX) {
      log_.tag[i] = tag;
      log_.kind[i] = m->kind;
    }
    atomic_fetch_add_explicit(&log_.committed, 1, memory_order_release);
    /* Actor 'S' answers each first-round message with one to itself. */
    if (tag == 'S' && m->kind < 100) {
      act_msg_t *x = act_msg_alloc(64);
      x->kind = m->kind + 100;
      act_send(self, x);
    }
  }
  act_msg_free(m);
}

/* Holds the (single) worker until the test has queued its messages. */
static void gate_fn(act_actor_t *self, act_msg_t *m) {
  if (!(m->flags & ACT_MSG_STOP))
    while (!atomic_load(&gate_open)) sched_yield();
  act_msg_free(m);
}

static bool wait_log(unsigned n) {
  uint64_t end = act_now_ns() + 10ull * 1000000000u;
  while (atomic_load_explicit(&log_.committed, memory_order_acquire) < n)
    if (act_now_ns() > end) return false;
    else sched_yield();
  return true;
}

static void send_kind(act_actor_t *a, uint32_t kind) {
  act_msg_t *m = act_msg_alloc(64);
  m->kind = kind;
  act_send(a, m);
}

static void stop_all(act_actor_t **as, int n) {
  for (int i = 0; i < n; i++) act_send_stop(as[i], act_msg_alloc(64));
}

static void batch_limit_interleaves_actors(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1, .batch = 4});
  REQUIRE(rt != NULL);
  log_reset();
  act_actor_t *g = act_spawn(rt, gate_fn, NULL);
  act_actor_t *a = act_spawn(rt, log_fn, (void *)(uintptr_t)'A');
  act_actor_t *b = act_spawn(rt, log_fn, (void *)(uintptr_t)'B');
  send_kind(g, 0);
  act_test_sleep_us(2000); /* the worker is now inside the gate */
  for (uint32_t i = 0; i < 20; i++) send_kind(a, i);
  for (uint32_t i = 0; i < 20; i++) send_kind(b, i);
  atomic_store(&gate_open, 1);
  act_actor_t *all[] = {g, a, b};
  stop_all(all, 3);
  act_runtime_quiesce(rt);
  unsigned n = atomic_load(&log_.len);
  CHECK_EQ_U64(n, 40);
  unsigned run = 0, longest = 0, switches = 0;
  uint32_t next[2] = {0, 0};
  for (unsigned i = 0; i < n && i < LOG_MAX; i++) {
    run = (i > 0 && log_.tag[i] == log_.tag[i - 1]) ? run + 1 : 1;
    if (i > 0 && log_.tag[i] != log_.tag[i - 1]) switches++;
    if (run > longest) longest = run;
    uint32_t *nx = &next[log_.tag[i] == 'B'];
    CHECK_EQ_U64(log_.kind[i], *nx);
    (*nx)++;
  }
  CHECK(longest <= 4);  /* never more than a batch per turn */
  CHECK(switches >= 9); /* and they really alternated */
  act_runtime_free(rt);
}

static void turn_stops_at_newest_message_seen(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1, .batch = 64});
  REQUIRE(rt != NULL);
  log_reset();
  act_actor_t *g = act_spawn(rt, gate_fn, NULL);
  act_actor_t *s = act_spawn(rt, log_fn, (void *)(uintptr_t)'S');
  act_actor_t *b = act_spawn(rt, log_fn, (void *)(uintptr_t)'B');
  send_kind(g, 0);
  act_test_sleep_us(2000);
  for (uint32_t i = 1; i <= 3; i++) send_kind(s, i);
  send_kind(b, 1);
  atomic_store(&gate_open, 1);
  REQUIRE(wait_log(7));
  /* S's own replies (101..103) come after B: they arrived during S's turn. */
  static const char want_tag[] = "SSSBSSS";
  static const uint32_t want_kind[] = {1, 2, 3, 1, 101, 102, 103};
  for (int i = 0; i < 7; i++) {
    CHECK_EQ_U64(log_.tag[i], (uint32_t)want_tag[i]);
    CHECK_EQ_U64(log_.kind[i], want_kind[i]);
  }
  act_actor_t *all[] = {g, s, b};
  stop_all(all, 3);
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

/* A flooder keeps two messages to itself in flight until told to halt;
 * another actor must still get its turns on the same single worker. The
 * flooder sends its own stop once both flood messages are back (nothing
 * may be sent to an actor after its stop message). */
enum { FLOOD = 0, HALT = 1 };
static atomic_ullong flood_count;
static int floods_alive; /* flooder's behaviour only */
static bool halted;      /* flooder's behaviour only */

static void flood_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  if (m->kind == HALT) {
    halted = true;
    act_msg_free(m);
  } else if (!halted) {
    atomic_fetch_add(&flood_count, 1);
    act_send(self, m);
    return;
  } else {
    act_msg_free(m);
    floods_alive--;
  }
  if (halted && floods_alive == 0) act_send_stop(self, act_msg_alloc(64));
}

static atomic_ullong pinged;
static void ping_fn(act_actor_t *self, act_msg_t *m) {
  if (!(m->flags & ACT_MSG_STOP)) atomic_fetch_add(&pinged, 1);
  act_msg_free(m);
}

static void self_flooding_actor_does_not_starve_others(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
  REQUIRE(rt != NULL);
  atomic_store(&flood_count, 0);
  atomic_store(&pinged, 0);
  floods_alive = 2;
  halted = false;
  act_actor_t *f = act_spawn(rt, flood_fn, NULL);
  act_actor_t *p = act_spawn(rt, ping_fn, NULL);
  send_kind(f, FLOOD);
  send_kind(f, FLOOD);
  CHECK(act_test_wait_ge(&flood_count, 1000, 10));
  for (int i = 0; i < 20; i++) {
    send_kind(p, 0); /* from outside: through the inject queue */
    CHECK(act_test_wait_ge(&pinged, (unsigned long long)i + 1, 10));
  }
  unsigned long long floods = atomic_load(&flood_count);
  send_kind(f, HALT);
  stop_all(&p, 1);
  act_runtime_quiesce(rt);
  CHECK(atomic_load(&flood_count) > floods); /* it was still flooding */
  act_runtime_free(rt);
}

/* X blocks its worker and meanwhile makes Y and Z runnable on that
 * worker's queue: the other worker must be woken and steal them. */
static atomic_int ran_y, ran_z;
static act_actor_t *y_actor, *z_actor;

static void flag_fn(act_actor_t *self, act_msg_t *m) {
  if (!(m->flags & ACT_MSG_STOP)) atomic_store((atomic_int *)act_actor_state(self), 1);
  act_msg_free(m);
}

static void blocker_fn(act_actor_t *self, act_msg_t *m) {
  if (!(m->flags & ACT_MSG_STOP)) {
    send_kind(y_actor, 0);
    send_kind(z_actor, 0);
    uint64_t end = act_now_ns() + 10ull * 1000000000u;
    while (!(atomic_load(&ran_y) && atomic_load(&ran_z)) && act_now_ns() < end)
      sched_yield();
  }
  act_msg_free(m);
}

static void idle_worker_steals_from_blocked_worker(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  atomic_store(&ran_y, 0);
  atomic_store(&ran_z, 0);
  act_actor_t *x = act_spawn(rt, blocker_fn, NULL);
  y_actor = act_spawn(rt, flag_fn, &ran_y);
  z_actor = act_spawn(rt, flag_fn, &ran_z);
  act_test_sleep_us(5000); /* both workers asleep */
  uint64_t start = act_now_ns();
  send_kind(x, 0);
  act_actor_t *all[] = {x, y_actor, z_actor};
  /* The blocker returns when both ran (or after 10 s). */
  uint64_t end = start + 12ull * 1000000000u;
  while (!(atomic_load(&ran_y) && atomic_load(&ran_z)) && act_now_ns() < end)
    sched_yield();
  CHECK(act_now_ns() - start < 5ull * 1000000000u);
  stop_all(all, 3);
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void idle_workers_sleep_and_wake(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  atomic_store(&pinged, 0);
  act_actor_t *p = act_spawn(rt, ping_fn, NULL);
  for (int i = 0; i < 20; i++) {
    act_test_sleep_us(3000); /* long enough for every worker to sleep */
    send_kind(p, 0);
    CHECK(act_test_wait_ge(&pinged, (unsigned long long)i + 1, 10));
  }
  /* Idle: no worker may keep spinning. */
  act_test_sleep_us(20000);
  double before = cpu_seconds();
  act_test_sleep_us(200000);
  double used = cpu_seconds() - before;
  CHECK(used < 0.02);
  if (used >= 0.02) fprintf(stderr, "  idle runtime used %.3f s of CPU in 0.2 s\n", used);
  act_send_stop(p, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

/* One behaviour makes 1000 actors runnable: more than a local queue holds. */
static act_actor_t *targets[OVERFLOW_ACTORS];
static void fan_out_fn(act_actor_t *self, act_msg_t *m) {
  if (!(m->flags & ACT_MSG_STOP))
    for (int i = 0; i < OVERFLOW_ACTORS; i++) send_kind(targets[i], 0);
  act_msg_free(m);
}

static void local_queue_overflow_goes_to_inject(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  atomic_store(&pinged, 0);
  for (int i = 0; i < OVERFLOW_ACTORS; i++) targets[i] = act_spawn(rt, ping_fn, NULL);
  act_actor_t *f = act_spawn(rt, fan_out_fn, NULL);
  for (int round = 1; round <= 3; round++) {
    send_kind(f, 0);
    CHECK(act_test_wait_ge(&pinged, (unsigned long long)round * OVERFLOW_ACTORS, 20));
  }
  stop_all(targets, OVERFLOW_ACTORS);
  stop_all(&f, 1);
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

/* Ping-pong between actors of two runtimes (each send crosses through the
 * other runtime's inject queue), on more workers than cores. */
typedef struct {
  act_actor_t *peer;
  atomic_ullong *count;
} pp_t;

static void pp_fn(act_actor_t *self, act_msg_t *m) {
  pp_t *p = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  if (atomic_fetch_add(p->count, 1) + 1 >= PINGS) {
    act_msg_free(m);
    return;
  }
  act_send(p->peer, m);
}

static void two_runtimes_ping_pong(void) {
  act_runtime_t *r1 = act_runtime_new(&(act_config_t){.workers = 3});
  act_runtime_t *r2 = act_runtime_new(&(act_config_t){.workers = 5});
  REQUIRE(r1 != NULL && r2 != NULL);
  atomic_ullong count = 0;
  pp_t s1 = {NULL, &count}, s2 = {NULL, &count};
  act_actor_t a, b;
  act_actor_init(&a, r1, pp_fn, &s1);
  act_actor_init(&b, r2, pp_fn, &s2);
  s1.peer = &b;
  s2.peer = &a;
  send_kind(&a, 0);
  CHECK(act_test_wait_ge(&count, PINGS, 50));
  act_send_stop(&a, act_msg_alloc(64));
  act_send_stop(&b, act_msg_alloc(64));
  act_runtime_quiesce(r1);
  act_runtime_quiesce(r2);
  act_runtime_free(r1);
  act_runtime_free(r2);
}

UNIT_MAIN("scheduler", UNIT_CASE(batch_limit_interleaves_actors),
          UNIT_CASE(turn_stops_at_newest_message_seen),
          UNIT_CASE(self_flooding_actor_does_not_starve_others),
          UNIT_CASE(idle_worker_steals_from_blocked_worker),
          UNIT_CASE(idle_workers_sleep_and_wake),
          UNIT_CASE(local_queue_overflow_goes_to_inject),
          UNIT_CASE(two_runtimes_ping_pong))
