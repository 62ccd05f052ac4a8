/* Actor tests through the whole runtime: fan-in from outside threads and
 * from actors (exact count, per-sender order), rings of actors, stop after
 * messages in flight, embedded actors freed in their stop handler, heap
 * actors, act_self, stops an actor sends itself (act_send_stop_self). */
#include "actors/actor.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/inline.h"

#include "actors/runtime.h"
#include "actors/testing.h"
#include "test/unit/unit.h"

enum {
  SENDERS = 8, /* half threads outside the runtime, half actors */
  PER_SENDER = ACT_TEST_N(400000, 100000),
  WINDOW = 8192, /* messages a sender may be ahead of the sink */
  CHUNK = 128,   /* messages a sender actor sends per turn */
  RING = 64,
  TOKENS = 32,
  HOPS = ACT_TEST_N(20000, 5000),
};

typedef struct {
  act_msg_t hdr;
  uint32_t sender;
  uint32_t seq;
} seq_msg_t;

/* The sink: an embedded actor in a malloc'd owner that frees itself in its
 * stop handler. Behaviour-only fields are plain; others atomic. */
typedef struct {
  act_actor_t actor;
  uint32_t next_seq[SENDERS];
  unsigned long long received;
  unsigned long long bad_order;
  bool self_ok;
  atomic_ullong progress;
} sink_t;

/* What the sink reports when it stops (it is gone afterwards). */
static struct {
  atomic_ullong received_at_stop;
  atomic_ullong bad_order;
  atomic_int stopped;
  atomic_int self_ok;
} report;

static void sink_fn(act_actor_t *self, act_msg_t *m) {
  sink_t *s = act_actor_state(self);
  if (act_self() != self) s->self_ok = false;
  if (m->flags & ACT_MSG_STOP) {
    atomic_store(&report.received_at_stop, s->received);
    atomic_store(&report.bad_order, s->bad_order);
    atomic_store(&report.self_ok, s->self_ok);
    act_msg_free(m);
    free(s); /* the owner frees the actor inside the stop behaviour */
    atomic_store(&report.stopped, 1);
    return;
  }
  seq_msg_t *sm = (seq_msg_t *)m;
  if (sm->sender >= SENDERS || sm->seq != s->next_seq[sm->sender]) s->bad_order++;
  else s->next_seq[sm->sender] = sm->seq + 1;
  s->received++;
  act_msg_free(m);
  /* release: senders pace themselves on it. */
  atomic_store_explicit(&s->progress, s->received, memory_order_release);
}

static sink_t *sink_new(act_runtime_t *rt) {
  sink_t *s = calloc(1, sizeof *s);
  s->self_ok = true;
  memset(&report, 0, sizeof report);
  act_actor_init(&s->actor, rt, sink_fn, s);
  return s;
}

static void send_seq(sink_t *s, uint32_t sender, uint32_t seq) {
  seq_msg_t *m = act_msg_alloc(sizeof *m);
  m->sender = sender;
  m->seq = seq;
  act_send(&s->actor, &m->hdr);
}

/* Flow control so the torture does not queue gigabytes. */
static bool too_far_ahead(sink_t *s, uint32_t seq) {
  unsigned long long done =
      atomic_load_explicit(&s->progress, memory_order_acquire);
  return (unsigned long long)seq * SENDERS > done + (unsigned long long)WINDOW * SENDERS;
}

typedef struct {
  sink_t *sink;
  uint32_t id;
  uint32_t seq;
  act_actor_t *self;
  atomic_int *finished;
} sender_t;

static void *sender_thread(void *arg) {
  sender_t *p = arg;
  for (uint32_t i = 0; i < PER_SENDER; i++) {
    if ((i & 255) == 0)
      while (too_far_ahead(p->sink, i)) sched_yield();
    send_seq(p->sink, p->id, i);
  }
  atomic_fetch_add(p->finished, 1);
  return NULL;
}

/* A sender actor sends CHUNK messages per turn, then re-sends its "go"
 * message to itself; at the end it sends itself the stop message. */
static void sender_actor_fn(act_actor_t *self, act_msg_t *m) {
  sender_t *p = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  if (!too_far_ahead(p->sink, p->seq))
    for (int i = 0; i < CHUNK && p->seq < PER_SENDER; i++)
      send_seq(p->sink, p->id, p->seq++);
  if (p->seq < PER_SENDER) {
    act_send(self, m);
    return;
  }
  atomic_fetch_add(p->finished, 1);
  act_send_stop(self, m); /* its own final message */
}

static void fan_in_from_threads_and_actors(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  sink_t *sink = sink_new(rt);
  atomic_int finished = 0;
  sender_t senders[SENDERS];
  pthread_t th[SENDERS / 2];
  for (uint32_t i = 0; i < SENDERS; i++)
    senders[i] = (sender_t){sink, i, 0, NULL, &finished};
  for (uint32_t i = SENDERS / 2; i < SENDERS; i++) {
    senders[i].self = act_spawn(rt, sender_actor_fn, &senders[i]);
    act_send(senders[i].self, act_msg_alloc(sizeof(act_msg_t)));
  }
  act_test_start(th, SENDERS / 2, sender_thread, senders, sizeof senders[0]);
  act_test_join(th, SENDERS / 2);
  uint64_t give_up = act_now_ns() + 50ull * 1000000000u;
  while (atomic_load(&finished) < SENDERS && act_now_ns() < give_up) sched_yield();
  REQUIRE(atomic_load(&finished) == SENDERS);
  act_send_stop(&sink->actor, act_msg_alloc(sizeof(act_msg_t)));
  act_runtime_quiesce(rt);
  CHECK_EQ_U64(atomic_load(&report.stopped), 1);
  CHECK_EQ_U64(atomic_load(&report.received_at_stop),
               (unsigned long long)SENDERS * PER_SENDER);
  CHECK_EQ_U64(atomic_load(&report.bad_order), 0);
  CHECK(atomic_load(&report.self_ok));
  act_runtime_free(rt);
}

/* Senders blast without pacing, then the stop goes in at once: it must be
 * handled after the whole backlog. */
static void *blast_thread(void *arg) {
  sender_t *p = arg;
  for (uint32_t i = 0; i < PER_SENDER / 8; i++) send_seq(p->sink, p->id, i);
  return NULL;
}

static void stop_waits_for_messages_in_flight(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2, .batch = 5});
  REQUIRE(rt != NULL);
  for (int round = 0; round < 3; round++) {
    sink_t *sink = sink_new(rt);
    sender_t senders[SENDERS];
    pthread_t th[SENDERS];
    for (uint32_t i = 0; i < SENDERS; i++)
      senders[i] = (sender_t){sink, i, 0, NULL, NULL};
    act_test_start(th, SENDERS, blast_thread, senders, sizeof senders[0]);
    act_test_join(th, SENDERS);
    act_send_stop(&sink->actor, act_msg_alloc(sizeof(act_msg_t)));
    act_runtime_quiesce(rt);
    CHECK_EQ_U64(atomic_load(&report.stopped), 1);
    CHECK_EQ_U64(atomic_load(&report.received_at_stop),
                 (unsigned long long)SENDERS * (PER_SENDER / 8));
    CHECK_EQ_U64(atomic_load(&report.bad_order), 0);
  }
  act_runtime_free(rt);
}

/* A ring: each actor forwards tokens to the next until their hops run
 * out. Half the actors are embedded, half spawned. */
typedef struct {
  act_msg_t hdr;
  uint32_t hops_left;
} token_t;

typedef struct {
  act_actor_t *next;
  atomic_ullong *arrived;
  unsigned long long forwarded;
} ring_node_t;

static atomic_ullong ring_forwarded_total;

static void ring_fn(act_actor_t *self, act_msg_t *m) {
  ring_node_t *n = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    atomic_fetch_add(&ring_forwarded_total, n->forwarded);
    act_msg_free(m);
    return;
  }
  token_t *t = (token_t *)m;
  if (t->hops_left == 0) {
    act_msg_free(m);
    atomic_fetch_add(n->arrived, 1);
    return;
  }
  t->hops_left--;
  n->forwarded++;
  act_send(n->next, m);
}

static void ring_of_actors_passes_tokens(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  static act_actor_t embedded[RING / 2];
  static ring_node_t nodes[RING];
  act_actor_t *ring[RING];
  atomic_ullong arrived = 0;
  atomic_store(&ring_forwarded_total, 0);
  for (int i = 0; i < RING; i++) {
    nodes[i] = (ring_node_t){NULL, &arrived, 0};
    if (i % 2 == 0) {
      ring[i] = &embedded[i / 2];
      act_actor_init(ring[i], rt, ring_fn, &nodes[i]);
    } else {
      ring[i] = act_spawn(rt, ring_fn, &nodes[i]);
    }
  }
  for (int i = 0; i < RING; i++) nodes[i].next = ring[(i + 1) % RING];
  for (int i = 0; i < TOKENS; i++) {
    token_t *t = act_msg_alloc(sizeof *t);
    t->hops_left = HOPS;
    act_send(ring[(i * 7) % RING], &t->hdr);
  }
  CHECK(act_test_wait_ge(&arrived, TOKENS, 50));
  for (int i = 0; i < RING; i++)
    act_send_stop(ring[i], act_msg_alloc(sizeof(act_msg_t)));
  act_runtime_quiesce(rt);
  CHECK_EQ_U64(atomic_load(&ring_forwarded_total),
               (unsigned long long)TOKENS * HOPS);
  act_runtime_free(rt);
}

/* Many spawned actors, each with a few messages from two threads and then
 * a stop from a third party, all at once. */
enum { MANY = ACT_TEST_N(5000, 2000), MANY_MSGS = 6 };
static act_actor_t *many[MANY];
static atomic_ullong many_seen, many_stopped;

static void counting_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP)
    atomic_fetch_add(&many_stopped, 1);
  else
    atomic_fetch_add(&many_seen, 1);
  act_msg_free(m);
}

static void *many_sender(void *arg) {
  (void)arg;
  for (int k = 0; k < MANY_MSGS / 2; k++)
    for (int i = 0; i < MANY; i++) act_send(many[i], act_msg_alloc(64));
  return NULL;
}

static void many_heap_actors_stop(void) {
  act_runtime_t *rt = act_runtime_new(NULL);
  REQUIRE(rt != NULL);
  atomic_store(&many_seen, 0);
  atomic_store(&many_stopped, 0);
  for (int i = 0; i < MANY; i++) many[i] = act_spawn(rt, counting_fn, NULL);
  pthread_t th[2];
  act_test_start(th, 2, many_sender, NULL, 0);
  act_test_join(th, 2);
  for (int i = 0; i < MANY; i++)
    act_send_stop(many[i], act_msg_alloc(64));
  act_runtime_quiesce(rt);
  CHECK_EQ_U64(atomic_load(&many_seen), (unsigned long long)MANY * MANY_MSGS);
  CHECK_EQ_U64(atomic_load(&many_stopped), MANY);
  act_runtime_free(rt);
}

static void self_is_null_outside_behaviours(void) {
  CHECK(act_self() == NULL);
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
  REQUIRE(rt != NULL);
  int state = 5;
  act_actor_t *a = act_spawn(rt, counting_fn, &state);
  CHECK(act_actor_state(a) == &state);
  CHECK(act_actor_runtime(a) == rt);
  CHECK_EQ_U64(act_runtime_workers(rt), 1);
  act_send_stop(a, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  CHECK(act_self() == NULL);
}


/* act_send_stop_self. Each actor counts its messages; SS_STOP stops it
 * from its own behaviour, which then still writes its state: the stop must
 * come after the behaviour returns, with everything sent before it handled
 * first, and the owner frees the memory in the stop behaviour. */
enum { SS_DATA = 1, SS_STOP, SS_HOLD, SS_STOP_AND_FORWARD };
enum { SS_ACTORS = ACT_TEST_N(2000, 500), SS_MSGS = 5 };

typedef struct {
  act_actor_t actor;
  unsigned long long seen; /* behaviour-only */
  bool after_stop;         /* written after act_send_stop_self returned */
  act_actor_t *forward_to; /* SS_STOP_AND_FORWARD: stopped after we stop */
} ss_t;

static struct {
  atomic_ullong seen_total;
  atomic_ullong stops;
  atomic_ullong bad; /* a stop before the behaviour returned, or early */
  atomic_int release;
} ss_report;

static void ss_fn(act_actor_t *self, act_msg_t *m) {
  ss_t *s = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    if (act_self() != self || (m->kind != SS_DATA && !s->after_stop))
      atomic_fetch_add(&ss_report.bad, 1);
    atomic_fetch_add(&ss_report.seen_total, s->seen);
    atomic_fetch_add(&ss_report.stops, 1);
    act_msg_free(m);
    free(s); /* an embedded actor's owner frees it in its stop behaviour */
    return;
  }
  s->seen++;
  switch (m->kind) {
    case SS_HOLD: /* keeps the actor busy while the test queues more */
      while (!atomic_load(&ss_report.release)) sched_yield();
      act_msg_free(m);
      return;
    case SS_STOP:
      act_send_stop_self(self, m);
      s->after_stop = true; /* the state is ours until we return */
      return;
    case SS_STOP_AND_FORWARD: {
      act_send_stop_self(self, m);
      /* On a thread outside the workers this runs the next actor's turns
       * inside ours: its own stop cannot take the slot ours holds. */
      act_msg_t *f = act_msg_alloc(sizeof *f);
      f->kind = SS_STOP;
      act_send_inline(s->forward_to, f);
      s->after_stop = true;
      return;
    }
    default:
      act_msg_free(m);
      return;
  }
}

static ss_t *ss_new(act_runtime_t *rt, bool pinned) {
  ss_t *s = calloc(1, sizeof *s);
  if (s == NULL) abort();
  if (!pinned)
    act_actor_init(&s->actor, rt, ss_fn, s);
  else if (act_actor_init_pinned(&s->actor, rt, ss_fn, s, "ss") != 0)
    abort();
  return s;
}

static void ss_send(act_actor_t *to, uint32_t kind) {
  act_msg_t *m = act_msg_alloc(sizeof *m);
  m->kind = kind;
  act_send(to, m);
}

static void ss_reset(void) {
  atomic_store(&ss_report.seen_total, 0);
  atomic_store(&ss_report.stops, 0);
  atomic_store(&ss_report.bad, 0);
  atomic_store(&ss_report.release, 0);
}

/* What the stop tests' actors reported: their stops, the messages they
 * saw, and none after a stop. */
static void ss_check(unsigned long long stops, unsigned long long seen) {
  CHECK_EQ_U64(atomic_load(&ss_report.stops), stops);
  CHECK_EQ_U64(atomic_load(&ss_report.seen_total), seen);
  CHECK_EQ_U64(atomic_load(&ss_report.bad), 0);
}

/* The usual case: the stop comes last, with the mailbox drained, from
 * worker actors (embedded) and from pinned ones; quiesce counts them dead
 * and reap joins the pinned threads. */
static void stop_self_from_a_turn(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  ss_reset();
  enum { PINNED = 8 };
  for (int i = 0; i < SS_ACTORS + PINNED; i++) {
    ss_t *s = ss_new(rt, i >= SS_ACTORS);
    for (int k = 0; k < SS_MSGS; k++) ss_send(&s->actor, SS_DATA);
    ss_send(&s->actor, SS_STOP);
  }
  act_runtime_quiesce(rt);
  act_runtime_reap(rt);
  ss_check(SS_ACTORS + PINNED, (unsigned long long)(SS_ACTORS + PINNED) * (SS_MSGS + 1));
  act_runtime_free(rt);
}

/* Messages queued behind the one whose behaviour stops the actor were sent
 * before the stop: they are handled first (the stop is queued then). */
static void stop_self_after_queued_messages(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 2});
  REQUIRE(rt != NULL);
  ss_reset();
  ss_t *s = ss_new(rt, false);
  ss_send(&s->actor, SS_HOLD);
  ss_send(&s->actor, SS_STOP);
  for (int k = 0; k < SS_MSGS; k++) ss_send(&s->actor, SS_DATA);
  atomic_store(&ss_report.release, 1);
  act_runtime_quiesce(rt);
  ss_check(1, 2 + SS_MSGS);
  act_runtime_free(rt);
}

/* A pinned actor stops itself, then runs another actor's turn inline (its
 * thread is outside the workers), and that one stops itself too; and the
 * same from an inline run on a thread outside the runtime. */
static void stop_self_with_inline_turns_inside(void) {
  act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
  REQUIRE(rt != NULL);
  ss_reset();
  ss_t *p = ss_new(rt, true);
  p->forward_to = &ss_new(rt, false)->actor;
  ss_send(&p->actor, SS_STOP_AND_FORWARD);
  ss_t *a = ss_new(rt, false);
  a->forward_to = &ss_new(rt, false)->actor;
  act_inline_begin(rt);
  ss_send(&a->actor, SS_STOP_AND_FORWARD);
  act_inline_end();
  act_runtime_quiesce(rt);
  act_runtime_reap(rt);
  ss_check(4, 4);
  act_runtime_free(rt);
}

/* A message that reaches the actor after its stop is a contract violation:
 * debug builds abort at the stop (here: a send to itself after it). */
#ifndef NDEBUG
static void ss_late_fn(act_actor_t *self, act_msg_t *m) {
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  act_send_stop_self(self, m);
  act_send(self, act_msg_alloc(sizeof(act_msg_t)));
}
#endif

static void stop_self_then_a_late_message_aborts(void) {
#ifdef NDEBUG
  return; /* the check is an assert */
#else
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    act_runtime_t *rt = act_runtime_new(&(act_config_t){.workers = 1});
    if (rt == NULL) _exit(3);
    act_actor_t *a = act_spawn(rt, ss_late_fn, NULL);
    act_send(a, act_msg_alloc(sizeof(act_msg_t)));
    act_runtime_quiesce(rt);
    _exit(0); /* not reached when the assert works */
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
#endif
}

UNIT_MAIN("actor", UNIT_CASE(fan_in_from_threads_and_actors),
          UNIT_CASE(stop_waits_for_messages_in_flight),
          UNIT_CASE(ring_of_actors_passes_tokens),
          UNIT_CASE(many_heap_actors_stop),
          UNIT_CASE(self_is_null_outside_behaviours),
          UNIT_CASE(stop_self_from_a_turn),
          UNIT_CASE(stop_self_after_queued_messages),
          UNIT_CASE(stop_self_with_inline_turns_inside),
          UNIT_CASE(stop_self_then_a_late_message_aborts))
