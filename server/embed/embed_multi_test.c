/* Several servers made by TRITONSERVER_ServerNew in one process at once,
 * as Triton allows (its L0_multi_server): each serves its own repository,
 * both infer, load and unload, and are deleted in either order; the
 * recorder backend they share is initialized once and finalized after the
 * last of them is deleted (its record file says when); threads that each
 * create, use and delete servers run side by side. The main thread drives
 * the first cases; the last runs worker threads of its own. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/embed/embed.h"
#include "server/embed/embed_testing.h"

#define THREADS 3
#define ROUNDS 2

static char repos[THREADS][PATH_MAX], beta_repo[PATH_MAX], backends[PATH_MAX],
    record[PATH_MAX];

/* A recorder model (it echoes INPUT0 as OUTPUT0) named `name` in `root`. */
static bool echo_model_add(const char *root, const char *name) {
  return embed_model_add(
      root, name,
      "backend: \"recorder\"\nmax_batch_size: 8\n"
      "input [{ name: \"INPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n"
      "output [{ name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n"
      "instance_group [{ count: 1 kind: KIND_CPU }]\n");
}

/* Explicit mode on `root`, the recorder writing its backend's lines to
 * the record file. NULL (and a CHECK failure) when ServerNew fails. */
static TRITONSERVER_Server *server_new(const char *root) {
  TRITONSERVER_ServerOptions *o = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerOptionsNew(&o)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, root)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetBackendDirectory(o, backends)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetModelControlMode(
      o, TRITONSERVER_MODEL_CONTROL_EXPLICIT)));
  CHECK(embed_ok(
      TRITONSERVER_ServerOptionsSetBackendConfig(o, "recorder", "record_file", record)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsSetExitTimeout(o, 10)));
  TRITONSERVER_Server *s = NULL;
  CHECK(embed_ok(TRITONSERVER_ServerNew(&s, o)));
  CHECK(embed_ok(TRITONSERVER_ServerOptionsDelete(o)));
  return s;
}

/* One request to `model`; whether it came back with the input echoed. */
static bool echoes(TRITONSERVER_Server *s, const char *model, int32_t first) {
  static const char *const names[] = {"INPUT0"};
  int32_t values[4] = {first, first + 1, first + 2, first + 3};
  const int32_t *const data[] = {values};
  embed_call_t c;
  if (!embed_call_send(&c, s, model, names, data, 1, 4)) return false;
  embed_call_wait(&c);
  const int32_t *out = embed_call_output(&c, "OUTPUT0");
  return !c.failed && out != NULL && out[0] == first && out[3] == first + 3;
}

static bool model_ready(TRITONSERVER_Server *s, const char *name) {
  bool ready = false;
  TRITONSERVER_Error *err = TRITONSERVER_ServerModelIsReady(s, name, -1, &ready);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  return ready;
}

/* How many lines of the record file start with `prefix`. */
static int record_count(const char *prefix) {
  FILE *f = fopen(record, "r");
  if (f == NULL) return 0;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, prefix, strlen(prefix)) == 0) n++;
  fclose(f);
  return n;
}

/* Two servers at once, each with its own models; the first one deleted
 * is `first`. The shared backend is initialized once and finalized only
 * with the last server. */
static void two_servers(int first) {
  int inits = record_count("initialize backend=recorder");
  int finis = record_count("finalize backend=recorder");
  TRITONSERVER_Server *s[2] = {server_new(repos[0]), server_new(beta_repo)};
  REQUIRE(s[0] != NULL && s[1] != NULL && s[0] != s[1]);
  OK(TRITONSERVER_ServerLoadModel(s[0], "alpha"));
  OK(TRITONSERVER_ServerLoadModel(s[1], "beta"));
  CHECK(record_count("initialize backend=recorder") == inits + 1);
  /* Each its own repository: neither finds the other's model. */
  FAILS(TRITONSERVER_ServerLoadModel(s[0], "beta"), INTERNAL, "beta");
  FAILS(TRITONSERVER_ServerLoadModel(s[1], "alpha"), INTERNAL, "alpha");
  CHECK(model_ready(s[0], "alpha") && !model_ready(s[0], "beta"));
  CHECK(model_ready(s[1], "beta") && !model_ready(s[1], "alpha"));
  CHECK(echoes(s[0], "alpha", 10));
  CHECK(echoes(s[1], "beta", 20));
  OK(TRITONSERVER_ServerUnloadModel(s[0], "alpha"));
  CHECK(!model_ready(s[0], "alpha"));
  CHECK(echoes(s[1], "beta", 30)); /* the other server's model still serves */
  OK(TRITONSERVER_ServerLoadModel(s[0], "alpha"));
  CHECK(echoes(s[0], "alpha", 40));
  OK(TRITONSERVER_ServerDelete(s[first]));
  CHECK(record_count("finalize backend=recorder") == finis); /* still used */
  const char *left = first == 0 ? "beta" : "alpha";
  CHECK(echoes(s[1 - first], left, 50));
  OK(TRITONSERVER_ServerDelete(s[1 - first]));
  CHECK(record_count("finalize backend=recorder") == finis + 1);
  CHECK(record_count("initialize backend=recorder") == inits + 1);
}

static void test_delete_first_made_first(void) { two_servers(0); }

static void test_delete_last_made_first(void) { two_servers(1); }

/* After the last server went, a new one initializes the backend afresh. */
static void test_backend_again(void) {
  int inits = record_count("initialize backend=recorder");
  TRITONSERVER_Server *s = server_new(repos[0]);
  REQUIRE(s != NULL);
  OK(TRITONSERVER_ServerLoadModel(s, "alpha"));
  CHECK(echoes(s, "alpha", 1));
  CHECK(record_count("initialize backend=recorder") == inits + 1);
  OK(TRITONSERVER_ServerDelete(s));
}

/* Triton's L0_multi_server pattern: each thread makes a server on its own
 * repository, loads, infers, unloads and deletes it, twice over. */
static void *worker(void *arg) {
  int i = (int)(intptr_t)arg;
  for (int round = 0; round < ROUNDS; round++) {
    TRITONSERVER_Server *s = server_new(repos[i]);
    CHECK(s != NULL);
    if (s == NULL) return NULL;
    OK(TRITONSERVER_ServerLoadModel(s, "alpha"));
    for (int k = 0; k < 3; k++) CHECK(echoes(s, "alpha", 100 * i + k));
    OK(TRITONSERVER_ServerUnloadModel(s, "alpha"));
    OK(TRITONSERVER_ServerStop(s));
    OK(TRITONSERVER_ServerDelete(s));
  }
  return NULL;
}

static void test_parallel_threads(void) {
  int inits = record_count("initialize backend=recorder");
  int finis = record_count("finalize backend=recorder");
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    REQUIRE(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  /* As many initializations as finalizations, at least one: servers
   * overlapping share one, servers that do not each make their own. */
  int made = record_count("initialize backend=recorder") - inits;
  CHECK(made >= 1 && made <= THREADS * ROUNDS);
  CHECK(record_count("finalize backend=recorder") - finis == made);
}

int main(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  if (tmp == NULL) tmp = "/tmp";
  snprintf(record, sizeof record, "%s/embed_multi_record.log", tmp);
  bool made = realpath("test/backends", backends) != NULL;
  for (int i = 0; i < THREADS && made; i++) {
    snprintf(repos[i], sizeof repos[i], "%s/embed_multi_XXXXXX", tmp);
    made = mkdtemp(repos[i]) != NULL && echo_model_add(repos[i], "alpha");
  }
  snprintf(beta_repo, sizeof beta_repo, "%s/embed_multi_XXXXXX", tmp);
  if (!made || mkdtemp(beta_repo) == NULL || !echo_model_add(beta_repo, "beta")) {
    fprintf(stderr, "embed_multi_test: cannot make the repositories\n");
    return 1;
  }
  static const unit_case_t cases[] = {
      UNIT_CASE(test_delete_first_made_first),
      UNIT_CASE(test_delete_last_made_first),
      UNIT_CASE(test_backend_again),
      UNIT_CASE(test_parallel_threads),
  };
  return unit_run("embed_multi_test", cases, sizeof cases / sizeof cases[0]);
}
