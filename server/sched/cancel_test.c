/* srv_request_cancel's round trip through the real scheduler behaviour, on
 * a stand-in model with no instances (a request stays queued): the owner
 * gets the final response and the release *before* its cancel comes back,
 * so having both must not let it drop the request's state (issue 15, F1;
 * model/README.md, "Cancelling a request"). The test thread starts each
 * case and waits; the owner and the model actor run on the workers. */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>

#include "server/core/server.h"
#include "server/model/model.h"
#include "server/model/response.h"
#include "server/sched/scheduler.h"
#include "test/unit/unit.h"

#define ROUNDS 100

enum { OWNER_GO = 0x7200, OWNER_STOP };
enum { GOT_FINAL = 1, GOT_RELEASE, GOT_CANCEL_BACK };

static srv_server_t srv;
static srv_model_t model; /* the scheduler, no instances: nothing runs */

typedef struct {
  act_actor_t actor;
  TRITONBACKEND_Request request;
  act_msg_t go, stop;
  sem_t back; /* posted when the cancel came back */
  /* The owner's behaviour's alone until `back` is posted. */
  int got[4];
  unsigned got_count;
  TRITONSERVER_Error_Code final_code;
  bool first, second;     /* what srv_request_cancel returned, twice */
  bool out_when_answered; /* srv_request_cancel_out once final and release were in */
} owner_t;

static void got(owner_t *o, int what) {
  if (o->got_count < 4) o->got[o->got_count++] = what;
  bool final = false, released = false;
  for (unsigned i = 0; i < o->got_count; i++) {
    final |= o->got[i] == GOT_FINAL;
    released |= o->got[i] == GOT_RELEASE;
  }
  /* The moment ModelInfer used to drop the state. */
  if (final && released && what != GOT_CANCEL_BACK)
    o->out_when_answered = srv_request_cancel_out(&o->request);
}

static void owner_behaviour(act_actor_t *self, act_msg_t *msg) {
  owner_t *o = act_actor_state(self);
  switch (msg->kind) {
    case OWNER_GO: /* as a call does: enqueue, later the client cancels */
      srv_model_enqueue(&model, &o->request);
      o->first = srv_request_cancel(&o->request);
      o->second = srv_request_cancel(&o->request);
      return;
    case SRV_MSG_INFER_RESPONSE: {
      TRITONBACKEND_Response *r = (TRITONBACKEND_Response *)msg;
      CHECK(r->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL);
      o->final_code = r->error != NULL ? TRITONSERVER_ErrorCode(r->error) : 0;
      srv_response_free(r);
      got(o, GOT_FINAL);
      return;
    }
    case SRV_MSG_INFER_RELEASED:
      got(o, GOT_RELEASE);
      return;
    case SRV_MSG_INFER_CANCEL_DONE:
      CHECK(srv_request_cancel_back(msg) == &o->request);
      CHECK(!srv_request_cancel_out(&o->request));
      got(o, GOT_CANCEL_BACK);
      sem_post(&o->back);
      return;
    case OWNER_STOP:
      return;
  }
}

/* Every owner, freed once the runtime is quiet (an owner's stop turn may
 * still run when the test thread moves on). */
static owner_t *owners[ROUNDS + 1];
static unsigned owner_count;

/* One request, enqueued and cancelled by its owner; waits for the cancel
 * to come back. */
static owner_t *run(void) {
  owner_t *o = calloc(1, sizeof *o);
  if (o == NULL) abort();
  owners[owner_count++] = o;
  sem_init(&o->back, 0, 0);
  act_actor_init(&o->actor, srv.runtime, owner_behaviour, o);
  o->request.model = &model;
  o->request.id = "c";
  o->request.state = srv_infer_state_new(&o->actor);
  o->go.kind = OWNER_GO;
  act_send(&o->actor, &o->go);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 30;
  while (sem_timedwait(&o->back, &t) != 0)
    if (errno != EINTR) return NULL;
  return o;
}

/* The cancel is back: the owner may drop the state now. */
static void done(owner_t *o) {
  srv_infer_state_unref(o->request.state);
  o->stop.kind = OWNER_STOP;
  act_send_stop(&o->actor, &o->stop);
}

static void check_order(owner_t *o, TRITONSERVER_Error_Code code) {
  CHECK(o->first);
  CHECK(!o->second); /* one cancel per request */
  CHECK_EQ_U64(o->got_count, 3);
  CHECK_EQ_U64(o->got[2], GOT_CANCEL_BACK); /* last, after final and release */
  CHECK(o->out_when_answered);
  CHECK_EQ_U64(o->final_code, code);
  /* Released unexecuted: out of the pending gauge; out of the queue. The
   * cancel's return orders both before this thread's reads. */
  srv_stats_totals_t t;
  srv_stats_totals(&model.stats, &t);
  CHECK_EQ_U64(t.pending, 0);
  CHECK(o->request.pending == NULL);
  CHECK_EQ_U64(atomic_load(&model.queue.depth[0]), 0);
}

/* The depth per level that the queue publishes for the metrics page. */
static void test_queue_publishes_depth(void) {
  srv_queue_t q;
  srv_queue_policy_t policy = {0};
  srv_queue_init(&q, 2, 1, &policy);
  TRITONBACKEND_Request r[3] = {{.priority = 1}, {.priority = 0}, {.priority = 2}};
  for (int i = 0; i < 3; i++) REQUIRE(srv_queue_push(&q, &r[i], 0));
  CHECK_EQ_U64(atomic_load(&q.depth[0]), 1);
  CHECK_EQ_U64(atomic_load(&q.depth[1]), 2); /* priority 0: the default level 2 */
  srv_queue_remove(&q, &r[2]);
  CHECK_EQ_U64(atomic_load(&q.depth[1]), 1);
  srv_queue_remove(&q, &r[0]);
  srv_queue_remove(&q, &r[1]);
  CHECK_EQ_U64(atomic_load(&q.depth[0]) + atomic_load(&q.depth[1]), 0);
  srv_queue_free(&q);
}

static void test_queued_request_cancel_comes_back_last(void) {
  for (int i = 0; i < ROUNDS; i++) {
    owner_t *o = run();
    REQUIRE(o != NULL);
    check_order(o, TRITONSERVER_ERROR_CANCELLED);
    done(o);
  }
}

static void test_closed_gate_still_answers_by_message(void) {
  atomic_store(&model.closed, true);
  owner_t *o = run(); /* refused at enqueue; the cancel too, by message */
  REQUIRE(o != NULL);
  check_order(o, TRITONSERVER_ERROR_UNAVAILABLE);
  done(o);
  atomic_store(&model.closed, false);
}

int main(void) {
  act_config_t config = {.workers = 2, .batch = 0};
  srv.runtime = act_runtime_new(&config);
  if (srv.runtime == NULL) return 1;
  model.name = "stand_in";
  model.server = &srv;
  srv_stats_init(&model.stats, 1);
  srv_queue_policy_t policy = {0};
  srv_queue_init(&model.queue, 1, 0, &policy);
  sem_init(&model.stopped, 0, 0);
  model.stopped_msg.kind = SRV_MODEL_STOPPED;
  act_actor_init(&model.actor, srv.runtime, srv_scheduler_behaviour, &model);
  static const unit_case_t cases[] = {
      UNIT_CASE(test_queued_request_cancel_comes_back_last),
      UNIT_CASE(test_closed_gate_still_answers_by_message),
      UNIT_CASE(test_queue_publishes_depth),
  };
  int rc = unit_run("cancel", cases, sizeof cases / sizeof cases[0]);
  act_send_stop(&model.actor, &model.stopped_msg);
  sem_wait(&model.stopped);
  act_runtime_quiesce(srv.runtime);
  act_runtime_free(srv.runtime);
  srv_queue_free(&model.queue);
  srv_stats_free(&model.stats);
  sem_destroy(&model.stopped);
  for (unsigned i = 0; i < owner_count; i++) {
    sem_destroy(&owners[i]->back);
    free(owners[i]);
  }
  return rc;
}
