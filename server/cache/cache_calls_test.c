/* The call threads' queue (cache_calls.h): every job pushed runs exactly
 * once, on a call thread, first in first run per thread; the job and byte
 * bounds refuse what does not fit; freeing runs what is queued. Pushers on
 * several threads at once (run under ASan and TSan). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "server/cache/cache_calls.h"
#include "test/unit/unit.h"

typedef struct {
  srv_cache_job_t job;
  atomic_int *ran;
  pthread_mutex_t *gate;  /* when set, the job waits on it: a slow library */
  atomic_bool *started;   /* set as it starts */
} job_t;

static void job_run(srv_cache_job_t *j) {
  job_t *x = (job_t *)j;
  if (x->started != NULL) atomic_store(x->started, true);
  if (x->gate != NULL) {
    pthread_mutex_lock(x->gate);
    pthread_mutex_unlock(x->gate);
  }
  atomic_fetch_add_explicit(x->ran, 1, memory_order_relaxed);
  free(x);
}

static job_t *job_new(atomic_int *ran, uint64_t bytes) {
  job_t *x = calloc(1, sizeof *x);
  x->job = (srv_cache_job_t){.run = job_run, .bytes = bytes};
  x->ran = ran;
  return x;
}

/* Pushes a new job of `bytes`; whether it was taken (else freed). */
static bool push(srv_cache_calls_t *q, atomic_int *ran, uint64_t bytes) {
  job_t *x = job_new(ran, bytes);
  if (srv_cache_calls_try_push(q, &x->job)) return true;
  free(x);
  return false;
}

static void test_bounds_and_drain(void) {
  atomic_int ran = 0;
  atomic_bool started = false;
  pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&gate);
  srv_cache_calls_t *q = srv_cache_calls_new(1, 3, 100);
  job_t *slow = job_new(&ran, 0);
  slow->gate = &gate;
  slow->started = &started;
  REQUIRE(srv_cache_calls_try_push(q, &slow->job));
  struct timespec ms = {0, 1000000};
  while (!atomic_load(&started)) nanosleep(&ms, NULL); /* the one thread is busy */
  CHECK(push(q, &ran, 0));
  CHECK(push(q, &ran, 60));
  CHECK(!push(q, &ran, 50)); /* 110 bytes > 100 */
  CHECK(push(q, &ran, 40));  /* exactly 100 bytes, 3 jobs */
  CHECK(!push(q, &ran, 0));  /* a fourth job */
  pthread_mutex_unlock(&gate);
  srv_cache_calls_free(q); /* runs what waits */
  CHECK_EQ_U64((uint64_t)atomic_load(&ran), 4);
  pthread_mutex_destroy(&gate);
}

enum { PUSHERS = 4, PER_PUSHER = 5000 };

typedef struct {
  srv_cache_calls_t *q;
  atomic_int *ran;
  int pushed;
} pusher_t;

static void *pusher(void *arg) {
  pusher_t *p = arg;
  for (int i = 0; i < PER_PUSHER; i++) {
    if (push(p->q, p->ran, 8)) p->pushed++;
  }
  return NULL;
}

static void test_threads(void) {
  atomic_int ran = 0;
  srv_cache_calls_t *q = srv_cache_calls_new(4, 64, 1 << 20);
  pthread_t t[PUSHERS];
  pusher_t p[PUSHERS];
  for (int i = 0; i < PUSHERS; i++) {
    p[i] = (pusher_t){.q = q, .ran = &ran};
    pthread_create(&t[i], NULL, pusher, &p[i]);
  }
  int pushed = 0;
  for (int i = 0; i < PUSHERS; i++) {
    pthread_join(t[i], NULL);
    pushed += p[i].pushed;
  }
  srv_cache_calls_free(q);
  CHECK(pushed > 0);
  CHECK_EQ_U64((uint64_t)atomic_load(&ran), (uint64_t)pushed);
}

UNIT_MAIN("cache_calls", UNIT_CASE(test_bounds_and_drain), UNIT_CASE(test_threads))
