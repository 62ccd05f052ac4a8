/* Response factories (issue 21): a request's first factory is the one
 * embedded in its state, later ones are their own; every live factory has
 * its own address, each holds the state, and concurrent first factories
 * claim the embedded one exactly once. */
#include <pthread.h>

#include "server/model/request.h"
#include "server/model/response.h"
#include "test/unit/unit.h"

static void first_factory_is_embedded_and_holds_the_state(void) {
  struct TRITONBACKEND_Request req = {.state = srv_infer_state_new(NULL)};
  srv_infer_state_t *s = req.state;
  TRITONBACKEND_ResponseFactory *a = NULL, *b = NULL;
  REQUIRE(TRITONBACKEND_ResponseFactoryNew(&a, &req) == NULL);
  REQUIRE(TRITONBACKEND_ResponseFactoryNew(&b, &req) == NULL);
  CHECK(a == &s->factory);
  CHECK(b != NULL && b != a);
  CHECK(a->state == s && b->state == s);
  CHECK(srv_infer_state_only_held(s, 3)); /* the request's and the two factories' */
  /* The request goes first: the factories keep the state (and the
   * embedded factory with it); under ASan a use after free would show. */
  srv_infer_state_unref(s);
  CHECK(srv_infer_state_only_held(a->state, 2));
  CHECK(TRITONBACKEND_ResponseFactoryDelete(a) == NULL);
  CHECK(srv_infer_state_only_held(b->state, 1));
  CHECK(TRITONBACKEND_ResponseFactoryDelete(b) == NULL); /* the last: frees the state */
}

static void a_later_factory_may_outlive_the_embedded_one(void) {
  struct TRITONBACKEND_Request req = {.state = srv_infer_state_new(NULL)};
  TRITONBACKEND_ResponseFactory *a = NULL, *b = NULL, *c = NULL;
  REQUIRE(TRITONBACKEND_ResponseFactoryNew(&a, &req) == NULL);
  REQUIRE(TRITONBACKEND_ResponseFactoryNew(&b, &req) == NULL);
  srv_infer_state_unref(req.state);
  CHECK(TRITONBACKEND_ResponseFactoryDelete(a) == NULL);
  /* The embedded one is never handed out twice, even once deleted. */
  TRITONBACKEND_Request *r = &req;
  REQUIRE(TRITONBACKEND_ResponseFactoryNew(&c, r) == NULL);
  CHECK(c != a && c != b);
  CHECK(TRITONBACKEND_ResponseFactoryDelete(c) == NULL);
  CHECK(TRITONBACKEND_ResponseFactoryDelete(b) == NULL);
  CHECK(TRITONBACKEND_ResponseFactoryDelete(NULL) == NULL);
}

enum { THREADS = 4, ROUNDS = 2000 };

static struct TRITONBACKEND_Request shared_req;
static TRITONBACKEND_ResponseFactory *made[THREADS];
static pthread_barrier_t start;

static void *make_one(void *arg) {
  uintptr_t t = (uintptr_t)arg;
  pthread_barrier_wait(&start);
  CHECK(TRITONBACKEND_ResponseFactoryNew(&made[t], &shared_req) == NULL);
  return NULL;
}

/* Under TSan this also checks that the claim publishes nothing racy. */
static void concurrent_first_factories_claim_once(void) {
  pthread_barrier_init(&start, NULL, THREADS + 1);
  for (int round = 0; round < ROUNDS; round++) {
    shared_req.state = srv_infer_state_new(NULL);
    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, make_one, (void *)t);
    pthread_barrier_wait(&start);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    int embedded = 0;
    for (int t = 0; t < THREADS; t++) {
      embedded += made[t] == &shared_req.state->factory;
      for (int u = t + 1; u < THREADS; u++) CHECK(made[t] != made[u]);
    }
    CHECK(embedded == 1);
    srv_infer_state_unref(shared_req.state);
    for (int t = 0; t < THREADS; t++) CHECK(TRITONBACKEND_ResponseFactoryDelete(made[t]) == NULL);
    if (embedded != 1) break;
  }
  pthread_barrier_destroy(&start);
}

UNIT_MAIN("response_factory", UNIT_CASE(first_factory_is_embedded_and_holds_the_state),
          UNIT_CASE(a_later_factory_may_outlive_the_embedded_one),
          UNIT_CASE(concurrent_first_factories_claim_once))
