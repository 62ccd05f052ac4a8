/* The rate limiter's actor on hand-made tickets. A stand-in "sink" actor
 * plays every runner and owner: it logs what reaches it (a grant, a done,
 * a withdrawal, a detach) and the test thread reads the log after a
 * semaphore post. The torture case lets the sink release and ask again by
 * itself, on several workers, and counts what is granted at once. */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actors/runtime.h"
#include "server/options.h"
#include "server/sched/rate_limiter.h"
#include "test/unit/unit.h"

enum { RUN = 0x7300, DONE, WITHDRAWN, DETACHED, SINK_STOP };
enum { TICKETS = 8, EVENTS = 64 };

typedef struct {
  int kind, ticket;
} event_t;

static act_runtime_t *rt;
static srv_rl_t *rl;
static srv_rl_ticket_t tickets[TICKETS];
static act_msg_t run_msgs[TICKETS], done_msgs[TICKETS];
static srv_rl_demand_t demands[TICKETS][2];
static act_msg_t detached_msg, sink_stop;

/* The sink's log: written by its behaviour, read after `logged`. */
static act_actor_t sink;
static event_t log_[EVENTS];
static unsigned logged_count, read_count;
static sem_t logged;

/* Torture mode: the sink releases each grant and asks again. */
static bool torture;
static unsigned rounds_left[TICKETS];
static uint64_t in_use, most_in_use; /* the sink's, of resource "T" */
static uint64_t torture_runs;
static sem_t torture_done;
static unsigned torture_running;

static int ticket_of(act_msg_t *m, act_msg_t *base) { return (int)(m - base); }

/* What the sink counts as granted is exactly the limiter's: it sends a
 * ticket's done before any grant that the release let through. */
static void torture_step(act_msg_t *msg) {
  if (msg->kind == RUN) {
    int i = ticket_of(msg, run_msgs);
    in_use += tickets[i].demands[0].count;
    torture_runs++;
    if (in_use > most_in_use) most_in_use = in_use;
    srv_rl_release(rl, &tickets[i]);
    return;
  }
  int i = ticket_of(msg, done_msgs);
  in_use -= tickets[i].demands[0].count;
  if (--rounds_left[i] > 0)
    srv_rl_ask(rl, &tickets[i]);
  else if (--torture_running == 0)
    sem_post(&torture_done);
}

static void sink_behaviour(act_actor_t *self, act_msg_t *msg) {
  (void)self;
  if (msg->kind == SINK_STOP) return;
  if (torture && (msg->kind == RUN || msg->kind == DONE)) {
    torture_step(msg);
    return;
  }
  event_t e = {.kind = (int)msg->kind, .ticket = -1};
  if (msg->kind == RUN) e.ticket = ticket_of(msg, run_msgs);
  if (msg->kind == DONE) e.ticket = ticket_of(msg, done_msgs);
  if (msg->kind == WITHDRAWN)
    e.ticket =
        (int)((srv_rl_ticket_t *)((char *)msg - offsetof(srv_rl_ticket_t, ask_msg)) -
              tickets);
  if (logged_count < EVENTS) log_[logged_count++] = e;
  sem_post(&logged);
}

/* The next event, or kind 0 after 5 s. */
static event_t next_event(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 5;
  while (sem_timedwait(&logged, &t) != 0)
    if (errno != EINTR) return (event_t){0, -1};
  return log_[read_count++];
}

#define EXPECT(k, i)                      \
  do {                                    \
    event_t e_ = next_event();            \
    CHECK_EQ_U64(e_.kind, (k));           \
    CHECK_EQ_U64(e_.ticket + 1, (i) + 1); \
  } while (0)

/* Nothing more arrives within 50 ms. */
static void expect_quiet(void) {
  usleep(50 * 1000);
  CHECK(sem_trywait(&logged) != 0);
}

static void start(char **resources, size_t count) {
  rt = act_runtime_new(&(act_config_t){.workers = 4});
  REQUIRE(rt != NULL);
  srv_status_t *st = srv_rl_new(rt, resources, count, &rl);
  REQUIRE(st == NULL);
  sem_init(&logged, 0, 0);
  sem_init(&torture_done, 0, 0);
  logged_count = read_count = 0;
  torture = false;
  act_actor_init(&sink, rt, sink_behaviour, NULL);
}

static void finish(void) {
  srv_rl_stop(rl);
  sink_stop.kind = SINK_STOP;
  act_send_stop(&sink, &sink_stop);
  act_runtime_quiesce(rt);
  act_runtime_free(rt);
  srv_rl_free(rl);
  sem_destroy(&logged);
  sem_destroy(&torture_done);
}

/* Ticket i on `device`, asking `count` of `name` (NULL: nothing). */
static srv_rl_ticket_t *ticket(int i, int32_t device, const char *name, bool global,
                               uint64_t count, uint32_t priority) {
  srv_rl_ticket_t *t = &tickets[i];
  memset(t, 0, sizeof *t);
  run_msgs[i].kind = RUN;
  done_msgs[i].kind = DONE;
  t->runner = &sink;
  t->run_msg = &run_msgs[i];
  t->owner = &sink;
  t->done_msg = &done_msgs[i];
  t->withdrawn_kind = WITHDRAWN;
  t->label = "t";
  t->device = device;
  t->priority = priority;
  if (name != NULL) {
    demands[i][0] = (srv_rl_demand_t){.name = name, .global = global, .count = count};
    t->demands = demands[i];
    t->demand_count = 1;
  }
  return t;
}

static srv_status_t *attach(int first, int count) {
  srv_rl_ticket_t *list[TICKETS];
  for (int i = 0; i < count; i++) list[i] = &tickets[first + i];
  return srv_rl_attach(rl, "m", list, (uint32_t)count);
}

static void detach(int first, int count) {
  static srv_rl_ticket_t *list[TICKETS];
  static srv_rl_detach_t d;
  for (int i = 0; i < count; i++) list[i] = &tickets[first + i];
  detached_msg.kind = DETACHED;
  memset(&d, 0, sizeof d);
  d.tickets = list;
  d.count = (uint32_t)count;
  d.to = &sink;
  d.done = &detached_msg;
  srv_rl_detach(rl, &d);
  EXPECT(DETACHED, -1);
}

/* a asks and runs; b asks and waits; a's release (a failed execute
 * releases the same way) lets b run. */
static void one_after_other(int a, int b) {
  srv_rl_ask(rl, &tickets[a]);
  EXPECT(RUN, a);
  srv_rl_ask(rl, &tickets[b]);
  expect_quiet();
  srv_rl_release(rl, &tickets[a]);
  EXPECT(DONE, a);
  EXPECT(RUN, b);
  srv_rl_release(rl, &tickets[b]);
  EXPECT(DONE, b);
}

/* Two instances on one device want R, of which there is one (the largest
 * ask): the second runs only once the first released. */
static void test_one_at_a_time(void) {
  start(NULL, 0);
  ticket(0, 0, "R", false, 1, 0);
  ticket(1, 0, "R", false, 1, 0);
  CHECK(attach(0, 2) == NULL);
  one_after_other(0, 1);
  detach(0, 2);
  finish();
}

/* A per-device resource has copies on each device; a global one has one
 * copy for all. */
static void test_device_and_global(void) {
  start(NULL, 0);
  ticket(0, 0, "R", false, 1, 0);
  ticket(1, 1, "R", false, 1, 0);
  ticket(2, 0, "G", true, 1, 0);
  ticket(3, 1, "G", true, 1, 0);
  CHECK(attach(0, 4) == NULL);
  srv_rl_ask(rl, &tickets[0]);
  EXPECT(RUN, 0);
  srv_rl_ask(rl, &tickets[1]);
  EXPECT(RUN, 1); /* device 1 has its own R */
  srv_rl_ask(rl, &tickets[2]);
  EXPECT(RUN, 2);
  srv_rl_ask(rl, &tickets[3]);
  expect_quiet(); /* one G for both devices */
  srv_rl_release(rl, &tickets[2]);
  EXPECT(DONE, 2);
  EXPECT(RUN, 3);
  srv_rl_release(rl, &tickets[0]);
  EXPECT(DONE, 0);
  srv_rl_release(rl, &tickets[1]);
  EXPECT(DONE, 1);
  srv_rl_release(rl, &tickets[3]);
  EXPECT(DONE, 3);
  detach(0, 4);
  finish();
}

static void run_once(int i) {
  srv_rl_ask(rl, &tickets[i]);
  EXPECT(RUN, i);
  srv_rl_release(rl, &tickets[i]);
  EXPECT(DONE, i);
}

/* Waiting asks go by runs so far times priority (0 counts as 1), lowest
 * first; equal weights go by arrival. */
static void test_priority_then_arrival(void) {
  start(NULL, 0);
  ticket(0, 0, "R", false, 1, 1);
  ticket(1, 0, "R", false, 1, 2);
  ticket(2, 0, "R", false, 1, 0);
  ticket(3, 0, "R", false, 1, 1);
  CHECK(attach(0, 4) == NULL);
  run_once(0);
  run_once(1);
  run_once(3);
  srv_rl_ask(rl, &tickets[2]); /* holds R */
  EXPECT(RUN, 2);
  srv_rl_ask(rl, &tickets[1]); /* weight 2 */
  srv_rl_ask(rl, &tickets[0]); /* weight 1, asked after 1 */
  srv_rl_ask(rl, &tickets[3]); /* weight 1, asked after 0 */
  expect_quiet();
  srv_rl_release(rl, &tickets[2]);
  EXPECT(DONE, 2);
  EXPECT(RUN, 0);
  srv_rl_release(rl, &tickets[0]);
  EXPECT(DONE, 0);
  EXPECT(RUN, 3);
  srv_rl_release(rl, &tickets[3]);
  EXPECT(DONE, 3);
  EXPECT(RUN, 1);
  srv_rl_release(rl, &tickets[1]);
  EXPECT(DONE, 1);
  detach(0, 4);
  finish();
}

/* Triton's load-time refusals, each leaving nothing attached. */
static void test_refusals(void) {
  char *given[] = {"R:1", "g:2:0", "g:3:1"};
  start(given, 3);
  ticket(0, 0, "R", false, 2, 0);
  srv_status_t *st = attach(0, 1);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st),
              "model 'm': Resource count for \"R\" is limited to 1 which will prevent "
              "scheduling of one or more model instances, the minimum required count "
              "is 2");
  srv_status_free(st);
  ticket(0, 0, "S", false, 1, 0);
  st = attach(0, 1);
  REQUIRE(st != NULL);
  CHECK(unit_matches(srv_status_message(st), "\"S\" is limited to 0 which"));
  srv_status_free(st);
  ticket(0, 0, "R", false, 1, 0);
  ticket(1, 0, "R", true, 1, 0);
  st = attach(0, 2);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st),
              "model 'm': Resource \"R\" is present as both global and device-specific "
              "resource in the model configuration.");
  srv_status_free(st);
  /* A global resource takes the largest count given for its name (G:3),
   * the flag's name compared without case. */
  ticket(0, 0, "G", true, 3, 0);
  CHECK(attach(0, 1) == NULL);
  ticket(1, 0, "G", true, 1, 0);
  CHECK(attach(1, 1) == NULL);
  one_after_other(0, 1); /* 3 of 3 granted to 0 */
  detach(0, 2);
  finish();
}

/* A waiting ask comes back when withdrawn; a granted one runs on. After a
 * detach the counts follow the tickets that stay. */
static void test_withdraw_and_detach(void) {
  start(NULL, 0);
  ticket(0, 0, "R", false, 4, 0);
  ticket(1, 0, "R", false, 1, 0);
  ticket(2, 0, "R", false, 1, 0);
  CHECK(attach(0, 1) == NULL);
  CHECK(attach(1, 2) == NULL); /* R: 4 */
  srv_rl_ask(rl, &tickets[0]);
  EXPECT(RUN, 0);
  srv_rl_ask(rl, &tickets[1]);
  srv_rl_withdraw(rl, &tickets[1]);
  EXPECT(WITHDRAWN, 1);
  srv_rl_withdraw(rl, &tickets[0]); /* running: nothing */
  expect_quiet();
  srv_rl_release(rl, &tickets[0]);
  EXPECT(DONE, 0);
  detach(0, 1); /* R: 1 now */
  one_after_other(1, 2);
  detach(1, 2);
  finish();
}

/* Eight tickets asking 1 to 3 of T (3 copies) ask, run and release 10000
 * times each, from the workers at once: never more than 3 granted, and
 * every ask is granted in the end. */
static void test_torture(void) {
  start(NULL, 0);
  for (int i = 0; i < TICKETS; i++)
    ticket(i, 0, "T", false, (uint64_t)(1 + i % 3), i % 4);
  CHECK(attach(0, TICKETS) == NULL);
  torture = true;
  torture_running = TICKETS;
  in_use = most_in_use = torture_runs = 0;
  for (int i = 0; i < TICKETS; i++) rounds_left[i] = 10000;
  for (int i = 0; i < TICKETS; i++) srv_rl_ask(rl, &tickets[i]);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 60;
  int rc;
  while ((rc = sem_timedwait(&torture_done, &t)) != 0 && errno == EINTR) {
  }
  REQUIRE(rc == 0);
  CHECK(most_in_use <= 3);
  CHECK_EQ_U64(torture_runs, TICKETS * 10000);
  fprintf(stderr, "  most granted at once: %llu of 3\n", (unsigned long long)most_in_use);
  torture = false;
  detach(0, TICKETS);
  finish();
}

static void test_flag_texts(void) {
  size_t len;
  uint64_t count;
  int32_t device;
  CHECK(srv_options_rate_resource_parse("R1:4", &len, &count, &device));
  CHECK_EQ_U64(len, 2);
  CHECK_EQ_U64(count, 4);
  CHECK(device == -1);
  CHECK(srv_options_rate_resource_parse("R1:4:2", &len, &count, &device));
  CHECK(device == 2);
  CHECK(srv_options_rate_resource_parse("R1:0:-1", &len, &count, &device));
  CHECK(device == -1);
  CHECK(!srv_options_rate_resource_parse("R1", &len, &count, &device));
  CHECK(!srv_options_rate_resource_parse(":4", &len, &count, &device));
  CHECK(!srv_options_rate_resource_parse("R1:-4", &len, &count, &device));
  CHECK(!srv_options_rate_resource_parse("R1:4:1:2", &len, &count, &device));
  CHECK(!srv_options_rate_resource_parse("R1:4:-2", &len, &count, &device));
  CHECK(!srv_options_rate_resource_parse("R1:2147483648", &len, &count, &device));
  CHECK(!srv_options_rate_resource_parse("R1:x", &len, &count, &device));
}

UNIT_MAIN("rate_limiter", UNIT_CASE(test_one_at_a_time),
          UNIT_CASE(test_device_and_global), UNIT_CASE(test_priority_then_arrival),
          UNIT_CASE(test_refusals), UNIT_CASE(test_withdraw_and_detach),
          UNIT_CASE(test_torture), UNIT_CASE(test_flag_texts))
