/* Stopping a server the API made while requests run: ServerStop waits for
 * them within the exit timeout; past it every request is cancelled and the
 * stop says so; calls from other threads during the stop answer "Server
 * exiting" and never touch a freed server. Uses the recorder test backend
 * (a sleep in Execute that watches for cancellation). The main thread
 * drives; a caller thread and the server's threads run beside it. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/embed/embed.h"
#include "server/embed/embed_testing.h"

static char repo[PATH_MAX], backends[PATH_MAX];

/* A recorder model that sleeps `delay_ms` in every Execute. */
static bool slow_model_add(const char *name, int delay_ms) {
  char config[1024];
  snprintf(config, sizeof config,
           "backend: \"recorder\"\nmax_batch_size: 8\n"
           "input [{ name: \"INPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n"
           "output [{ name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n"
           "instance_group [{ count: 1 kind: KIND_CPU }]\n"
           "parameters [{ key: \"execute_delay_ms\" value: { string_value: \"%d\" } }]\n",
           delay_ms);
  return embed_model_add(repo, name, config);
}

static TRITONSERVER_Server *server_new(unsigned exit_timeout) {
  TRITONSERVER_ServerOptions *o = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerOptionsNew(&o)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, repo)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetBackendDirectory(o, backends)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetExitTimeout(o, exit_timeout)));
  TRITONSERVER_Server *s = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerNew(&s, o)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsDelete(o)));
  return s;
}

static const char *const kInput[] = {"INPUT0"};
static const int32_t kValues[4] = {7, 8, 9, 10};
static const int32_t *const kData[] = {kValues};

/* The stop waits for the request that runs: it succeeds, then the stop. */
static void test_stop_waits_for_requests(void) {
  TRITONSERVER_Server *s = server_new(10);
  REQUIRE(s != NULL);
  embed_call_t c;
  REQUIRE(embed_call_send(&c, s, "slow", kInput, kData, 1, 4));
  OK(TRITONSERVER_ServerStop(s));
  CHECK(sem_trywait(&c.final) == 0); /* answered before the stop returned */
  sem_post(&c.final);
  embed_call_wait(&c);
  CHECK(!c.failed);
  const int32_t *out = embed_call_output(&c, "OUTPUT0");
  CHECK(out != NULL && out[0] == 7 && out[3] == 10);
  OK(TRITONSERVER_ServerDelete(s));
}

/* Past the exit timeout the request is cancelled and the stop says so; the
 * models stop, so the delete frees the server. */
static void test_exit_timeout_cancels(void) {
  TRITONSERVER_Server *s = server_new(10);
  REQUIRE(s != NULL);
  OK(TRITONSERVER_ServerSetExitTimeout(s, 0));
  embed_call_t c;
  REQUIRE(embed_call_send(&c, s, "very_slow", kInput, kData, 1, 4));
  FAILS(TRITONSERVER_ServerStop(s), INTERNAL, "Exit timeout expired (0 s)");
  embed_call_wait(&c);
  CHECK(c.failed && c.code == TRITONSERVER_ERROR_CANCELLED);
  OK(TRITONSERVER_ServerDelete(s));
}

/* ServerDelete of a running server stops it first; when that stop's exit
 * timeout expires it answers the error and keeps the server, as Triton's
 * Delete; the next Delete frees it. */
static void test_delete_past_timeout(void) {
  TRITONSERVER_Server *s = server_new(0);
  REQUIRE(s != NULL);
  embed_call_t c;
  REQUIRE(embed_call_send(&c, s, "very_slow", kInput, kData, 1, 4));
  FAILS(TRITONSERVER_ServerDelete(s), INTERNAL, "Exit timeout expired");
  embed_call_wait(&c);
  CHECK(c.failed && c.code == TRITONSERVER_ERROR_CANCELLED);
  bool live = true;
  FAILS(TRITONSERVER_ServerIsLive(s, &live), UNAVAILABLE, "Server exiting");
  OK(TRITONSERVER_ServerDelete(s));
}

/* A thread asking questions while the server stops: each answer is the
 * answer or "Server exiting", never a crash. */
static void *asker(void *arg) {
  TRITONSERVER_Server *s = arg;
  for (;;) {
    TRITONSERVER_Message *m = NULL;
    TRITONSERVER_Metrics *metrics = NULL;
    TRITONSERVER_Error *err = TRITONSERVER_ServerModelStatistics(s, "", -1, &m);
    if (err == NULL) TRITONSERVER_MessageDelete(m);
    if (err == NULL) err = TRITONSERVER_ServerMetrics(s, &metrics);
    if (err == NULL) TRITONSERVER_MetricsDelete(metrics);
    if (err != NULL) {
      bool exiting = strstr(TRITONSERVER_ErrorMessage(err), "Server exiting") != NULL;
      CHECK(exiting);
      TRITONSERVER_ErrorDelete(err);
      return NULL;
    }
  }
}

static void test_calls_during_stop(void) {
  TRITONSERVER_Server *s = server_new(10);
  REQUIRE(s != NULL);
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, asker, s) == 0);
  embed_call_t c;
  REQUIRE(embed_call_send(&c, s, "slow", kInput, kData, 1, 4));
  OK(TRITONSERVER_ServerStop(s));
  pthread_join(t, NULL); /* before the delete: the handle dies with it */
  embed_call_wait(&c);
  OK(TRITONSERVER_ServerDelete(s));
}

int main(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(repo, sizeof repo, "%s/embed_stop_XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(repo) == NULL || realpath("test/backends", backends) == NULL ||
      !slow_model_add("slow", 300) || !slow_model_add("very_slow", 60000)) {
    fprintf(stderr, "embed_stop_test: cannot make the repository\n");
    return 1;
  }
  static const unit_case_t cases[] = {
      UNIT_CASE(test_stop_waits_for_requests),
      UNIT_CASE(test_exit_timeout_cancels),
      UNIT_CASE(test_delete_past_timeout),
      UNIT_CASE(test_calls_during_stop),
  };
  return unit_run("embed_stop_test", cases, sizeof cases / sizeof cases[0]);
}
