/* The model's send gate (sched/gate.c) under a race: more sender threads
 * than writer slots send to a model actor while it closes the gate and
 * sends itself its final message. Every send that the gate accepted must
 * reach the actor before that final message, and every send after the
 * close must be refused: a model retired while a frontend is between its
 * lookup and its send. The actor here stands in for the scheduler's stop
 * (srv_scheduler_close): close, retry while a send is under way, stop. */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actors/runtime.h"
#include "server/model/model.h"
#include "test/unit/unit.h"

enum { SENDERS = SRV_THREAD_SLOTS + 4, ROUNDS = 100, BEFORE_STOP = 2000 };
/* Fewer rounds under a sanitizer (NEREID_TEST_SLOWDOWN, .bazelrc). */
static int rounds(void) {
  int slow = unit_slowdown();
  return slow > 1 ? ROUNDS / (2 * slow) : ROUNDS;
}
enum { TEST_MSG = 0x7300 };

typedef struct {
  srv_model_t *m;
  _Atomic uint64_t *accepted_total;
  uint64_t accepted, refused;
} sender_t;

/* The actor's alone until `stopped` is posted. Messages the gate took
 * before it closed may still come after the close (they were queued
 * behind the stop); none may come after the final message, which the
 * runtime would never deliver: received == accepted says so. */
static uint64_t received;

static void behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_model_t *m = act_actor_state(self);
  switch (msg->kind) {
    case TEST_MSG:
      received++;
      act_msg_free(msg);
      return;
    case SRV_MODEL_STOP:
    case SRV_MODEL_STOP_RETRY:
      if (!srv_model_gate_close(m)) {
        act_send(&m->actor, &m->stop_retry_msg); /* a send is under way */
        return;
      }
      act_send_stop(&m->actor, &m->stopped_msg);
      return;
    case SRV_MODEL_STOPPED:
      sem_post(&m->stopped);
      return;
    default:
      abort();
  }
}

static void *sender(void *arg) {
  sender_t *s = arg;
  /* Until refused: at full speed for a while, then slower, so that the
   * actor's mailbox drains and it gets to its stop (a gate that never
   * closed makes the test time out). */
  for (uint64_t i = 0;; i++) {
    if (i > 1000) nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
    act_msg_t *msg = act_msg_alloc(sizeof *msg);
    msg->kind = TEST_MSG;
    if (!srv_model_send(s->m, msg)) {
      act_msg_free(msg);
      s->refused++;
      break;
    }
    s->accepted++;
    /* Relaxed: the main thread only waits for some progress. */
    atomic_fetch_add_explicit(s->accepted_total, 1, memory_order_relaxed);
  }
  /* Closed for good: every later send is refused too. */
  for (int j = 0; j < 10; j++) {
    act_msg_t *again = act_msg_alloc(sizeof *again);
    again->kind = TEST_MSG;
    if (srv_model_send(s->m, again)) {
      s->accepted++; /* counted: the final check catches it */
    } else {
      act_msg_free(again);
      s->refused++;
    }
  }
  act_msg_cache_flush();
  return NULL;
}

static void one_round(act_runtime_t *rt) {
  srv_model_t *m = aligned_alloc(_Alignof(srv_model_t), sizeof *m);
  REQUIRE(m != NULL);
  memset(m, 0, sizeof *m);
  m->stop_msg.kind = SRV_MODEL_STOP;
  m->stop_retry_msg.kind = SRV_MODEL_STOP_RETRY;
  m->stopped_msg.kind = SRV_MODEL_STOPPED;
  sem_init(&m->stopped, 0, 0);
  received = 0;
  act_actor_init(&m->actor, rt, behaviour, m);
  _Atomic uint64_t total = 0;
  sender_t s[SENDERS];
  pthread_t th[SENDERS];
  for (int i = 0; i < SENDERS; i++) {
    s[i] = (sender_t){.m = m, .accepted_total = &total};
    REQUIRE(pthread_create(&th[i], NULL, sender, &s[i]) == 0);
  }
  /* Stop while the senders are at full speed. */
  while (atomic_load_explicit(&total, memory_order_relaxed) < BEFORE_STOP) sched_yield();
  act_send(&m->actor, &m->stop_msg);
  uint64_t accepted = 0, refused = 0;
  for (int i = 0; i < SENDERS; i++) {
    pthread_join(th[i], NULL);
    accepted += s[i].accepted;
    refused += s[i].refused;
  }
  sem_wait(&m->stopped);
  act_runtime_quiesce(rt);
  /* The semaphore orders the actor's counts before these reads. */
  CHECK_EQ_U64(received, accepted);
  CHECK_EQ_U64(refused, SENDERS * 11); /* each sender: its first refusal and 10 more */
  sem_destroy(&m->stopped);
  free(m);
}

static act_runtime_t *runtime;

static void test_no_send_after_the_final_message(void) {
  for (int r = 0, n = rounds(); r < n; r++) one_round(runtime);
}

int main(void) {
  act_config_t config = {.workers = 2, .batch = 0};
  runtime = act_runtime_new(&config);
  if (runtime == NULL) return 1;
  static const unit_case_t cases[] = {UNIT_CASE(test_no_send_after_the_final_message)};
  int rc = unit_run("gate", cases, sizeof cases / sizeof cases[0]);
  act_runtime_free(runtime);
  return rc;
}
