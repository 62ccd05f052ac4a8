/* The flight (bls_infer.c) against backends that bend the rules: a stand-in
 * model actor plays the backend, answering in orders a real backend may
 * use (release before responses, flags after a factory's last response)
 * and one it must not (release without any answer). It also checks that
 * a request's sequence flags and correlation ID reach the backend, and that
 * TRITONSERVER_InferenceRequestCancel reaches a request the model holds
 * and races an answer safely (the flight stays until its cancel is back).
 * The main thread sends requests and waits; the stand-in and the flights
 * run on the workers. */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/bls/bls.h"
#include "server/core/server.h"
#include "server/model/response.h"
#include "test/unit/unit.h"

#define OK(call) CHECK((call) == NULL)
#define FINAL TRITONSERVER_RESPONSE_COMPLETE_FINAL

enum { SILENT, LATE_ANSWERS, TWO_ANSWERS, SEQUENCE, HOLD, AT_ONCE };

static srv_server_t srv;
static srv_model_t stand_in; /* no inputs, no outputs */
static int mode;             /* how the stand-in answers; set before a request */
static const char *no_outputs[1];
static TRITONSERVER_ResponseAllocator *allocator;

/* SEQUENCE: what the request carries, and what the backend saw of it (read
 * by the main thread after the final response's semaphore). */
static uint32_t sent_flags;
static uint64_t sent_id;
static const char *sent_id_string; /* NULL: sent_id is the ID */
static uint32_t seen_flags;
static uint64_t seen_id;
static char seen_id_string[256];
static bool seen_string;

static void sequence_record(TRITONBACKEND_Request *req) {
  OK(TRITONBACKEND_RequestFlags(req, &seen_flags));
  const char *s = NULL;
  TRITONSERVER_Error *err = TRITONBACKEND_RequestCorrelationIdString(req, &s);
  seen_string = err == NULL;
  if (err == NULL) {
    snprintf(seen_id_string, sizeof seen_id_string, "%s", s);
  } else {
    TRITONSERVER_ErrorDelete(err);
    OK(TRITONBACKEND_RequestCorrelationId(req, &seen_id));
  }
}

static void send_response(TRITONBACKEND_Response *r, uint32_t flags) {
  TRITONSERVER_Error *err = TRITONBACKEND_ResponseSend(r, flags, NULL);
  CHECK(err == NULL);
}

/* HOLD: the request the stand-in keeps until its cancel comes; what the
 * backend saw of the cancel then. The stand-in's alone, then the main
 * thread's after the final response. */
static TRITONBACKEND_Request *held;
static bool held_saw_cancel;

/* A request's cancel, as the model actor handles one: a held request is
 * answered CANCELLED and released, then the cancel goes back. */
static void stand_in_cancel(act_msg_t *msg) {
  TRITONBACKEND_Request *req =
      (TRITONBACKEND_Request *)((char *)msg - offsetof(TRITONBACKEND_Request, cancel_msg));
  act_actor_t *owner = req->state->owner;
  if (req == held) {
    held = NULL;
    OK(TRITONBACKEND_RequestIsCancelled(req, &held_saw_cancel));
    TRITONBACKEND_Response *r = NULL;
    OK(TRITONBACKEND_ResponseNew(&r, req));
    TRITONSERVER_Error *err =
        TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_CANCELLED, "cancelled while held");
    OK(TRITONBACKEND_ResponseSend(r, FINAL, err));
    TRITONSERVER_ErrorDelete(err);
    OK(TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL));
  }
  msg->kind = SRV_MSG_INFER_CANCEL_DONE;
  act_send(owner, msg);
}

/* The stand-in's behaviour: one request per message, answered at once. */
static void stand_in_behaviour(act_actor_t *self, act_msg_t *msg) {
  if (msg->kind == SRV_MODEL_CANCEL) {
    stand_in_cancel(msg);
    return;
  }
  if (msg->kind != SRV_MODEL_REQUEST) return; /* the stop message */
  TRITONBACKEND_Request *req = (TRITONBACKEND_Request *)msg;
  TRITONBACKEND_ResponseFactory *factory = NULL;
  TRITONBACKEND_Response *r = NULL;
  switch (mode) {
    case SILENT: /* released, never answered */
      OK(TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL));
      break;
    case LATE_ANSWERS: /* decoupled: release first, answer from a factory */
      OK(TRITONBACKEND_ResponseFactoryNew(&factory, req));
      OK(TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL));
      OK(TRITONBACKEND_ResponseNewFromFactory(&r, factory));
      send_response(r, 0);
      OK(TRITONBACKEND_ResponseFactorySendFlags(factory, FINAL));
      OK(TRITONBACKEND_ResponseFactoryDelete(factory));
      break;
    case HOLD: /* answered when its cancel comes */
      held = req;
      break;
    case AT_ONCE:
      OK(TRITONBACKEND_ResponseNew(&r, req));
      send_response(r, FINAL);
      OK(TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL));
      break;
    case SEQUENCE: /* records what it sees, answers once */
      sequence_record(req);
      OK(TRITONBACKEND_ResponseNew(&r, req));
      send_response(r, FINAL);
      OK(TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL));
      break;
    case TWO_ANSWERS: /* not decoupled, yet two answers without FINAL */
      OK(TRITONBACKEND_ResponseNew(&r, req));
      send_response(r, 0);
      OK(TRITONBACKEND_ResponseNew(&r, req));
      send_response(r, 0);
      OK(TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL));
      break;
  }
}

static TRITONSERVER_Error *never_alloc(TRITONSERVER_ResponseAllocator *a, const char *n,
                                       size_t size, TRITONSERVER_MemoryType mt,
                                       int64_t id, void *userp, void **buffer,
                                       void **buffer_userp, TRITONSERVER_MemoryType *amt,
                                       int64_t *aid) {
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "no output was asked for");
}

typedef struct {
  sem_t done;
  atomic_int responses, releases;
  TRITONSERVER_InferenceResponse *resp[4];
  uint32_t flags[4];
  bool keep; /* the test deletes the request (it cancels it after the send) */
} call_t;

static void on_response(TRITONSERVER_InferenceResponse *resp, const uint32_t flags,
                        void *userp) {
  call_t *c = userp;
  int n = atomic_fetch_add(&c->responses, 1);
  if (n < 4) {
    c->resp[n] = resp;
    c->flags[n] = flags;
  }
  if (flags & FINAL) sem_post(&c->done);
}

static void on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                       void *userp) {
  call_t *c = userp;
  atomic_fetch_add(&c->releases, 1);
  if (!c->keep) TRITONSERVER_InferenceRequestDelete(request);
  sem_post(&c->done);
}

/* Sends a request to the stand-in answering in `how`. */
static TRITONSERVER_InferenceRequest *send_one(int how, bool decoupled, call_t *c) {
  bool keep = c->keep;
  memset(c, 0, sizeof *c);
  c->keep = keep;
  sem_init(&c->done, 0, 0);
  mode = how;
  stand_in.decoupled = decoupled;
  TRITONSERVER_InferenceRequest *r = calloc(1, sizeof *r);
  r->server = &srv;
  r->model = &stand_in;
  srv_model_ref(&stand_in); /* as TRITONSERVER_InferenceRequestNew takes one */
  r->id = strdup("odd");
  if (how == SEQUENCE) {
    OK(TRITONSERVER_InferenceRequestSetFlags(r, sent_flags));
    if (sent_id_string != NULL)
      OK(TRITONSERVER_InferenceRequestSetCorrelationIdString(r, sent_id_string));
    else
      OK(TRITONSERVER_InferenceRequestSetCorrelationId(r, sent_id));
  }
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, allocator, NULL, on_response,
                                                      c));
  OK(TRITONSERVER_ServerInferAsync((TRITONSERVER_Server *)&srv, r, NULL));
  return r;
}

/* Waits for c's final response and release, and a moment for anything
 * extra. */
static bool wait_both(call_t *c) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 30;
  for (int i = 0; i < 2; i++)
    while (sem_timedwait(&c->done, &t) != 0)
      if (errno != EINTR) return false;
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  return true;
}

/* Sends a request to the stand-in answering in `how`, waits for its final
 * response and its release (and a moment for anything extra). */
static bool run(int how, bool decoupled, call_t *c) {
  c->keep = false; /* the release callback deletes the request */
  send_one(how, decoupled, c);
  return wait_both(c);
}

static void call_free(call_t *c) {
  for (int i = 0; i < atomic_load(&c->responses) && i < 4; i++)
    if (c->resp[i] != NULL) TRITONSERVER_InferenceResponseDelete(c->resp[i]);
  sem_destroy(&c->done);
}

static void test_release_without_answer(void) {
  call_t c;
  REQUIRE(run(SILENT, false, &c));
  CHECK_EQ_U64(atomic_load(&c.releases), 1);
  REQUIRE(atomic_load(&c.responses) == 1);
  CHECK_EQ_U64(c.flags[0], FINAL);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(c.resp[0]);
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_INTERNAL);
  CHECK_STREQ(TRITONSERVER_ErrorMessage(err),
              "model 'stand_in' released request 'odd' without sending its final "
              "response");
  call_free(&c);
  REQUIRE(run(SILENT, true, &c)); /* the same for a decoupled model */
  CHECK_EQ_U64(atomic_load(&c.responses), 1);
  call_free(&c);
}

static void test_answers_after_release(void) {
  for (int i = 0; i < 50; i++) { /* the flags race the release: both orders */
    call_t c;
    REQUIRE(run(LATE_ANSWERS, true, &c));
    CHECK_EQ_U64(atomic_load(&c.releases), 1);
    REQUIRE(atomic_load(&c.responses) == 2);
    CHECK(c.resp[0] != NULL && c.flags[0] == 0);
    CHECK(TRITONSERVER_InferenceResponseError(c.resp[0]) == NULL);
    CHECK(c.resp[1] == NULL && c.flags[1] == FINAL);
    call_free(&c);
  }
}

static void test_one_answer_when_not_decoupled(void) {
  call_t c;
  REQUIRE(run(TWO_ANSWERS, false, &c));
  CHECK_EQ_U64(atomic_load(&c.releases), 1);
  REQUIRE(atomic_load(&c.responses) == 1); /* the second was dropped */
  CHECK_EQ_U64(c.flags[0], FINAL);
  uint32_t n = 1;
  OK(TRITONSERVER_InferenceResponseOutputCount(c.resp[0], &n));
  CHECK_EQ_U64(n, 0);
  call_free(&c);
}

/* The sequence fields a BLS request carries reach TRITONBACKEND_Request as
 * they were set (bls_infer.c copies them into the flight's request). */
static void test_sequence_fields_reach_backend(void) {
  call_t c;
  sent_flags = TRITONSERVER_REQUEST_FLAG_SEQUENCE_START;
  sent_id = 0xFEEDFACECAFEull;
  sent_id_string = NULL;
  REQUIRE(run(SEQUENCE, false, &c));
  CHECK_EQ_U64(seen_flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_START);
  CHECK(!seen_string);
  CHECK_EQ_U64(seen_id, 0xFEEDFACECAFEull);
  REQUIRE(atomic_load(&c.responses) == 1);
  CHECK(TRITONSERVER_InferenceResponseError(c.resp[0]) == NULL);
  call_free(&c);
  sent_flags =
      TRITONSERVER_REQUEST_FLAG_SEQUENCE_START | TRITONSERVER_REQUEST_FLAG_SEQUENCE_END;
  sent_id_string = "dialogue-9";
  REQUIRE(run(SEQUENCE, false, &c));
  CHECK_EQ_U64(seen_flags, sent_flags);
  CHECK(seen_string);
  CHECK_STREQ(seen_id_string, "dialogue-9");
  call_free(&c);
  sent_flags = TRITONSERVER_REQUEST_FLAG_SEQUENCE_END;
  sent_id_string = NULL;
  sent_id = 3;
  REQUIRE(run(SEQUENCE, false, &c));
  CHECK_EQ_U64(seen_flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_END);
  CHECK_EQ_U64(seen_id, 3);
  call_free(&c);
}

/* The cancel reaches the request the model holds, and its backend sees it;
 * the user's request says so; a second cancel is a success that sends
 * nothing. */
static void test_cancel_reaches_held_request(void) {
  call_t c = {.keep = true};
  TRITONSERVER_InferenceRequest *r = send_one(HOLD, false, &c);
  bool cancelled = true;
  OK(TRITONSERVER_InferenceRequestIsCancelled(r, &cancelled));
  CHECK(!cancelled);
  OK(TRITONSERVER_InferenceRequestCancel(r));
  OK(TRITONSERVER_InferenceRequestCancel(r));
  OK(TRITONSERVER_InferenceRequestIsCancelled(r, &cancelled));
  CHECK(cancelled);
  REQUIRE(wait_both(&c));
  CHECK(held_saw_cancel);
  REQUIRE(atomic_load(&c.responses) == 1);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(c.resp[0]);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_CANCELLED);
  OK(TRITONSERVER_InferenceRequestCancel(r)); /* the flight is gone: nothing to do */
  OK(TRITONSERVER_InferenceRequestDelete(r));
  call_free(&c);
}

/* Cancels racing an answer: before the flight has it, between the response
 * and the release, after both, after the flight stopped. Whichever comes
 * first, every call completes once and nothing is read after it is freed
 * (ASan, TSan). */
static void test_cancel_races_answer(void) {
  for (int i = 0; i < 150; i++) {
    call_t c = {.keep = true};
    TRITONSERVER_InferenceRequest *r = send_one(AT_ONCE, i % 2 == 0, &c);
    if (i % 3 != 0) OK(TRITONSERVER_InferenceRequestCancel(r));
    REQUIRE(wait_both(&c));
    OK(TRITONSERVER_InferenceRequestCancel(r));
    CHECK_EQ_U64(atomic_load(&c.releases), 1);
    CHECK_EQ_U64(atomic_load(&c.responses), 1);
    /* The same request flies again: the link moves to its new flight. */
    if (i % 10 == 0) {
      call_free(&c);
      memset(&c.resp, 0, sizeof c.resp);
      atomic_store(&c.responses, 0);
      atomic_store(&c.releases, 0);
      sem_init(&c.done, 0, 0);
      OK(TRITONSERVER_ServerInferAsync((TRITONSERVER_Server *)&srv, r, NULL));
      OK(TRITONSERVER_InferenceRequestCancel(r));
      REQUIRE(wait_both(&c));
    }
    OK(TRITONSERVER_InferenceRequestDelete(r));
    call_free(&c);
  }
}

int main(void) {
  act_config_t config = {.workers = 2, .batch = 0};
  srv.runtime = act_runtime_new(&config);
  if (srv.runtime == NULL) return 1;
  atomic_store(&srv.state, SRV_STATE_READY);
  stand_in.name = "stand_in";
  /* The registry's reference, never dropped: requests take and drop theirs. */
  atomic_init(&stand_in.refs, 1);
  stand_in.output_names = no_outputs;
  srv_stats_init(&stand_in.stats, 1); /* enqueue counts into its pending gauge */
  act_actor_init(&stand_in.actor, srv.runtime, stand_in_behaviour, &stand_in);
  TRITONSERVER_ResponseAllocatorNew(&allocator, never_alloc, NULL, NULL);
  static const unit_case_t cases[] = {
      UNIT_CASE(test_release_without_answer),
      UNIT_CASE(test_answers_after_release),
      UNIT_CASE(test_one_answer_when_not_decoupled),
      UNIT_CASE(test_sequence_fields_reach_backend),
      UNIT_CASE(test_cancel_reaches_held_request),
      UNIT_CASE(test_cancel_races_answer),
  };
  int rc = unit_run("bls_flight", cases, sizeof cases / sizeof cases[0]);
  act_send_stop(&stand_in.actor, &stand_in.stop_msg);
  act_runtime_quiesce(srv.runtime);
  act_runtime_free(srv.runtime);
  TRITONSERVER_ResponseAllocatorDelete(allocator);
  srv_stats_free(&stand_in.stats);
  return rc;
}
