/* Pinned-actor tests: many senders into one pinned actor (count, order,
 * same thread, its name), blocking without stalling workers, ping-pong with
 * a worker actor (sleep/wake every message), stop/free/reap cycles. */
#define _GNU_SOURCE /* pthread_getname_np */
#include "actors/pinned.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/runtime.h"
#include "actors/testing.h"
#include "test/unit/unit.h"

enum {
  SENDERS = 8,
  PER_SENDER = ACT_TEST_N(100000, 30000),
  ROUND_TRIPS = ACT_TEST_N(50000, 20000),
  CYCLES = ACT_TEST_N(60, 20),
};

typedef struct {
  act_msg_t hdr;
  uint32_t sender;
  uint32_t seq;
} seq_msg_t;

typedef struct {
  act_actor_t actor;
  uint32_t next_seq[SENDERS];
  unsigned long long received, bad;
  pthread_t thread;
  bool have_thread;
  atomic_ullong progress;
  atomic_ullong bad_report;
  atomic_int done;
} sink_t;

static void sink_fn(act_actor_t *self, act_msg_t *m) {
  sink_t *s = act_actor_state(self);
  if (!s->have_thread) {
    s->thread = pthread_self();
    s->have_thread = true;
    char name[32] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    if (strcmp(name, "pin-sink") != 0) s->bad++;
  }
  if (!pthread_equal(s->thread, pthread_self()) || act_self() != self) s->bad++;
  if (m->flags & ACT_MSG_STOP) {
    atomic_store(&s->bad_report, s->bad);
    act_msg_free(m);
    atomic_store(&s->done, 1);
    return;
  }
  seq_msg_t *sm = (seq_msg_t *)m;
  if (sm->seq != s->next_seq[sm->sender]) s->bad++;
  s->next_seq[sm->sender] = sm->seq + 1;
  s->received++;
  act_msg_free(m);
  atomic_store_explicit(&s->progress, s->received, memory_order_release);
}

typedef struct {
  sink_t *sink;
  uint32_t id;
  uint32_t seq;
  atomic_int *finished;
} sender_t;

static void send_seq(sender_t *p) {
  seq_msg_t *m = act_msg_alloc(sizeof *m);
  m->sender = p->id;
  m->seq = p->seq++;
  act_send(&p->sink->actor, &m->hdr);
}

static void *sender_thread(void *arg) {
  sender_t *p = arg;
  while (p->seq < PER_SENDER) send_seq(p);
  atomic_fetch_add(p->finished, 1);
  return NULL;
}

static void sender_actor_fn(act_actor_t *self, act_msg_t *m) {
  sender_t *p = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  for (int i = 0; i < 64 && p->seq < PER_SENDER; i++) send_seq(p);
  if (p->seq < PER_SENDER) {
    act_send(self, m);
  } else {
    atomic_fetch_add(p->finished, 1);
    act_send_stop(self, m);
  }
}

static void pinned_receives_from_threads_and_actors(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  sink_t *sink = calloc(1, sizeof *sink);
  REQUIRE(act_actor_init_pinned(&sink->actor, rt, sink_fn, sink, "pin-sink") == 0);
  atomic_int finished = 0;
  sender_t senders[SENDERS];
  pthread_t th[SENDERS / 2];
  for (uint32_t i = 0; i < SENDERS; i++) senders[i] = (sender_t){sink, i, 0, &finished};
  for (uint32_t i = SENDERS / 2; i < SENDERS; i++)
    act_send(act_spawn(rt, sender_actor_fn, &senders[i]), act_msg_alloc(64));
  act_test_start(th, SENDERS / 2, sender_thread, senders, sizeof senders[0]);
  act_test_join(th, SENDERS / 2);
  uint64_t give_up = act_now_ns() + 50ull * 1000000000u;
  while (atomic_load(&finished) < SENDERS && act_now_ns() < give_up) sched_yield();
  REQUIRE(atomic_load(&finished) == SENDERS);
  act_send_stop(&sink->actor, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  CHECK_EQ_U64(atomic_load(&sink->done), 1);
  CHECK_EQ_U64(sink->received, (unsigned long long)SENDERS * PER_SENDER);
  CHECK_EQ_U64(atomic_load(&sink->bad_report), 0);
  act_runtime_free(rt); /* joins the pinned thread */
  free(sink);
}

/* A pinned actor blocks for 100 ms while worker actors keep running. */
static atomic_ullong ticks;
static atomic_int sleeper_done;

static void sleeper_fn(act_actor_t *self, act_msg_t *m) {
  if (!(m->flags & ACT_MSG_STOP)) {
    act_test_sleep_us(100000);
    atomic_store(&sleeper_done, 1);
  }
  act_msg_free(m);
}

static void ticker_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  atomic_fetch_add(&ticks, 1);
  if (atomic_load(&sleeper_done)) {
    act_send_stop(self, m);
    return;
  }
  act_send(self, m);
}

static void pinned_blocking_does_not_stall_workers(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
  REQUIRE(rt != NULL);
  atomic_store(&ticks, 0);
  atomic_store(&sleeper_done, 0);
  act_actor_t sleeper;
  REQUIRE(act_actor_init_pinned(&sleeper, rt, sleeper_fn, NULL, NULL) == 0);
  act_send(&sleeper, act_msg_alloc(64));
  act_send(act_spawn(rt, ticker_fn, NULL), act_msg_alloc(64));
  act_test_sleep_us(50000);
  CHECK(!atomic_load(&sleeper_done));
  CHECK(atomic_load(&ticks) > 100); /* the worker kept going meanwhile */
  act_send_stop(&sleeper, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

/* Ping-pong between a pinned actor and a worker actor: every message finds
 * the other side idle, so each one exercises a sleep and a wake. */
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
  if (atomic_fetch_add(p->count, 1) + 1 >= 2 * ROUND_TRIPS) {
    act_msg_free(m);
    return;
  }
  act_send(p->peer, m);
}

static void pinned_ping_pong_with_worker_actor(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  atomic_ullong count = 0;
  pp_t ps = {NULL, &count}, ws = {NULL, &count};
  act_actor_t pinned, worker;
  REQUIRE(act_actor_init_pinned(&pinned, rt, pp_fn, &ps, "pin-pp") == 0);
  act_actor_init(&worker, rt, pp_fn, &ws);
  ps.peer = &worker;
  ws.peer = &pinned;
  act_send(&pinned, act_msg_alloc(64));
  CHECK(act_test_wait_ge(&count, 2 * ROUND_TRIPS, 50));
  act_send_stop(&pinned, act_msg_alloc(64));
  act_send_stop(&worker, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
}

/* Pinned actors embedded in malloc'd owners that free themselves in their
 * stop handler; reap joins their threads so none accumulate. */
typedef struct {
  act_actor_t actor;
  unsigned received;
} owner_t;

static atomic_ullong owners_freed, owners_received;

static void owner_fn(act_actor_t *self, act_msg_t *m) {
  owner_t *o = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    atomic_fetch_add(&owners_received, o->received);
    act_msg_free(m);
    free(o); /* ASan: the runtime must not touch the actor after this */
    atomic_fetch_add(&owners_freed, 1);
    return;
  }
  o->received++;
  act_msg_free(m);
}

static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  if (f != NULL) fclose(f);
  return n;
}

static void pinned_stop_free_and_reap_cycles(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  atomic_store(&owners_freed, 0);
  atomic_store(&owners_received, 0);
  int baseline = thread_count();
  for (int c = 0; c < CYCLES; c++) {
    owner_t *batch[4];
    for (int i = 0; i < 4; i++) {
      batch[i] = calloc(1, sizeof(owner_t));
      REQUIRE(act_actor_init_pinned(&batch[i]->actor, rt, owner_fn, batch[i],
                                    "pin-owner") == 0);
    }
    for (int k = 0; k < 10; k++)
      for (int i = 0; i < 4; i++) act_send(&batch[i]->actor, act_msg_alloc(64));
    for (int i = 0; i < 4; i++) act_send_stop(&batch[i]->actor, act_msg_alloc(64));
    if (c % 7 == 0) act_runtime_reap(rt);
  }
  act_runtime_quiesce(rt);
  CHECK_EQ_U64(atomic_load(&owners_freed), 4ull * CYCLES);
  CHECK_EQ_U64(atomic_load(&owners_received), 40ull * CYCLES);
  act_runtime_reap(rt);
  CHECK_EQ_U64(thread_count(), baseline); /* every pinned thread joined */
  act_runtime_free(rt);
}

UNIT_MAIN("pinned", UNIT_CASE(pinned_receives_from_threads_and_actors),
          UNIT_CASE(pinned_blocking_does_not_stall_workers),
          UNIT_CASE(pinned_ping_pong_with_worker_actor),
          UNIT_CASE(pinned_stop_free_and_reap_cycles))
