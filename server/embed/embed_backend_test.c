/* A backend inside the server controls models through the API, as
 * Triton's Python backend does: the modelctl test backend's Execute calls
 * TRITONSERVER_ServerLoadModel / UnloadModel* on the server that runs it
 * (TRITONBACKEND_ModelServer), on its instance thread, where blocking is
 * allowed. The main thread drives; Execute runs on instance threads. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/embed/embed.h"
#include "server/embed/embed_testing.h"

static char repo[PATH_MAX], backends[PATH_MAX];

static const char kControl[] =
    "backend: \"modelctl\"\nmax_batch_size: 8\n"
    "input [{ name: \"INPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n"
    "output [{ name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n";
static const char kTarget[] =
    "backend: \"recorder\"\nmax_batch_size: 0\n"
    "input [{ name: \"INPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n"
    "output [{ name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ -1 ] }]\n";

/* Runs one request of the control model `name`: its response carries the
 * outcome of the call its Execute made. */
static embed_call_t control(TRITONSERVER_Server *s, const char *name) {
  static const char *const input[] = {"INPUT0"};
  static const int32_t one[1] = {1};
  static const int32_t *const data[] = {one};
  embed_call_t c;
  if (embed_call_send(&c, s, name, input, data, 1, 1)) embed_call_wait(&c);
  return c;
}

static bool ready(TRITONSERVER_Server *s, const char *name) {
  bool r = false;
  CHECK(embed_ok(TRITONSERVER_ServerModelIsReady(s, name, -1, &r)));
  return r;
}

static void test_backend_loads_and_unloads(void) {
  TRITONSERVER_ServerOptions *o = NULL;
  OK(TRITONSERVER_ServerOptionsNew(&o));
  OK(TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, repo));
  OK(TRITONSERVER_ServerOptionsSetBackendDirectory(o, backends));
  OK(TRITONSERVER_ServerOptionsSetModelControlMode(o, TRITONSERVER_MODEL_CONTROL_EXPLICIT));
  TRITONSERVER_Server *s = NULL;
  OK(TRITONSERVER_ServerNew(&s, o));
  OK(TRITONSERVER_ServerOptionsDelete(o));
  REQUIRE(s != NULL);
  const char *controls[] = {"load__target", "unload__target", "unloaddeps__target",
                            "load__nosuch"};
  for (int i = 0; i < 4; i++) OK(TRITONSERVER_ServerLoadModel(s, controls[i]));
  CHECK(!ready(s, "target"));
  embed_call_t c = control(s, "load__target");
  CHECK(!c.failed);
  CHECK(ready(s, "target"));
  c = control(s, "unload__target");
  CHECK(!c.failed);
  CHECK(!ready(s, "target"));
  c = control(s, "load__target");
  c = control(s, "unloaddeps__target");
  CHECK(!c.failed && !ready(s, "target"));
  /* The call's error reaches the backend, which answers with it. */
  c = control(s, "load__nosuch");
  CHECK(c.failed && c.code == TRITONSERVER_ERROR_INTERNAL);
  CHECK(strstr(c.message, "nosuch") != NULL);
  OK(TRITONSERVER_ServerDelete(s));
}

int main(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(repo, sizeof repo, "%s/embed_backend_XXXXXX", tmp ? tmp : "/tmp");
  bool ok = mkdtemp(repo) != NULL && realpath("test/backends", backends) != NULL &&
            embed_model_add(repo, "target", kTarget);
  const char *controls[] = {"load__target", "unload__target", "unloaddeps__target",
                            "load__nosuch"};
  for (int i = 0; i < 4 && ok; i++) ok = embed_model_add(repo, controls[i], kControl);
  if (!ok) {
    fprintf(stderr, "embed_backend_test: cannot make the repository\n");
    return 1;
  }
  static const unit_case_t cases[] = {UNIT_CASE(test_backend_loads_and_unloads)};
  return unit_run("embed_backend_test", cases, sizeof cases / sizeof cases[0]);
}
