/* The in-process API tests' shared set-up and request helpers (see
 * bls_test_env.h): the main thread blt_starts and stops the core; the
 * allocator and request callbacks run on the runtime's workers. */
#include "server/bls/bls_test_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "server/core/core.h"
#include "test/unit/unit.h"

blt_env_t blt_env;
atomic_int blt_live_buffers, blt_starts;

TRITONSERVER_Server *blt_server(void) { return (TRITONSERVER_Server *)&blt_env.srv; }

uint64_t blt_success_count(srv_model_t *m) {
  srv_stats_totals_t t;
  srv_stats_totals(&m->stats, &t);
  return t.success.count;
}

srv_model_t *blt_model(const char *name) {
  /* The registry keeps its own reference while the test runs. */
  srv_model_t *m;
  srv_status_t *st =
      srv_registry_acquire(blt_env.srv.registry, name, strlen(name), -1, &m);
  srv_status_free(st);
  if (m != NULL) srv_model_unref(m);
  return m;
}

/* Expects `err` with `code` and a message containing `text`; frees it. */
void blt_error_expect(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code,
                      const char *text) {
  REQUIRE(err != NULL);
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), code);
  if (strstr(TRITONSERVER_ErrorMessage(err), text) == NULL) {
    fprintf(stderr, "  message: %s\n  wanted:  %s\n", TRITONSERVER_ErrorMessage(err),
            text);
    CHECK(false);
  }
  TRITONSERVER_ErrorDelete(err);
}

/* ---- allocator: host buffers, each tagged with its tensor's name ---- */

static TRITONSERVER_Error *test_alloc(TRITONSERVER_ResponseAllocator *a, const char *name,
                                      size_t size, TRITONSERVER_MemoryType mt, int64_t id,
                                      void *userp, void **buffer, void **buffer_userp,
                                      TRITONSERVER_MemoryType *actual,
                                      int64_t *actual_id) {
  *actual = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  *buffer = NULL;
  *buffer_userp = NULL;
  if (size == 0) return NULL;
  *buffer = malloc(size);
  *buffer_userp = strdup(name);
  atomic_fetch_add(&blt_live_buffers, 1);
  return NULL;
}

static TRITONSERVER_Error *test_release(TRITONSERVER_ResponseAllocator *a, void *buffer,
                                        void *buffer_userp, size_t size,
                                        TRITONSERVER_MemoryType mt, int64_t id) {
  free(buffer);
  free(buffer_userp);
  atomic_fetch_sub(&blt_live_buffers, 1);
  return NULL;
}

static TRITONSERVER_Error *test_start(TRITONSERVER_ResponseAllocator *a, void *userp) {
  atomic_fetch_add(&blt_starts, 1);
  return NULL;
}

/* ---- one request in flight and what came back for it ---- */

void blt_on_response(TRITONSERVER_InferenceResponse *resp, const uint32_t flags,
                     void *userp) {
  blt_call_t *c = userp;
  int n = atomic_fetch_add(&c->responses, 1);
  if (n < 8) {
    c->resp[n] = resp;
    c->flags[n] = flags;
  } else if (resp != NULL) {
    TRITONSERVER_InferenceResponseDelete(resp);
  }
  if (flags & FINAL) {
    atomic_fetch_add(&c->finals, 1);
    sem_post(&c->done);
  }
}

void blt_on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                    void *userp) {
  blt_call_t *c = userp;
  CHECK_EQ_U64(flags, TRITONSERVER_REQUEST_RELEASE_ALL);
  atomic_fetch_add(&c->releases, 1);
  if (c->delete_request) OK(TRITONSERVER_InferenceRequestDelete(request));
  sem_post(&c->done);
}

void blt_call_init(blt_call_t *c, int32_t seed) {
  memset(c, 0, sizeof *c);
  sem_init(&c->done, 0, 0);
  for (int i = 0; i < 16; i++) {
    c->in0[i] = seed + i;
    c->in1[i] = 2 * i - seed;
  }
}

static int slowdown(void) { return unit_slowdown(); }

/* Waits for the final response and the release; false after 10 s (x the
 * sanitizer slowdown). */
bool blt_call_wait(blt_call_t *c) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 10 * slowdown();
  for (int i = 0; i < 2; i++) {
    while (sem_timedwait(&c->done, &t) != 0)
      if (errno != EINTR) return false;
  }
  return true;
}

void blt_call_free(blt_call_t *c) {
  int n = atomic_load(&c->responses);
  for (int i = 0; i < n && i < 8; i++)
    if (c->resp[i] != NULL) TRITONSERVER_InferenceResponseDelete(c->resp[i]);
  sem_destroy(&c->done);
}

/* A request for `simple` ([1,16] INT32 inputs) with c's data; INPUT0 in
 * two pieces, so that the backend sees two buffers. */
TRITONSERVER_InferenceRequest *blt_simple_request(blt_call_t *c, const char *id) {
  TRITONSERVER_InferenceRequest *r = NULL;
  const int64_t shape[2] = {1, 16};
  OK(TRITONSERVER_InferenceRequestNew(&r, blt_server(), "simple", -1));
  if (r == NULL) return NULL;
  OK(TRITONSERVER_InferenceRequestSetId(r, id));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT0", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  OK(TRITONSERVER_InferenceRequestAddInput(r, "INPUT1", TRITONSERVER_TYPE_INT32, shape,
                                           2));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT0", c->in0, 24,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT0", (char *)c->in0 + 24, 40,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestAppendInputData(r, "INPUT1", c->in1, sizeof c->in1,
                                                  TRITONSERVER_MEMORY_CPU, 0));
  OK(TRITONSERVER_InferenceRequestSetReleaseCallback(r, blt_on_release, c));
  OK(TRITONSERVER_InferenceRequestSetResponseCallback(r, blt_env.allocator, NULL,
                                                      blt_on_response, c));
  return r;
}

void blt_output_get(TRITONSERVER_InferenceResponse *resp, uint32_t index,
                    blt_output_t *o) {
  OK(TRITONSERVER_InferenceResponseOutput(resp, index, &o->name, &o->datatype, &o->shape,
                                          &o->dims, &o->base, &o->size, &o->memory_type,
                                          &o->memory_type_id, &o->userp));
}

/* Checks one output of a `simple` response: the sum or the difference. */
void blt_output_check(TRITONSERVER_InferenceResponse *resp, uint32_t index,
                      const char *want_name, const blt_call_t *c, bool sub) {
  blt_output_t o;
  blt_output_get(resp, index, &o);
  CHECK_STREQ(o.name, want_name);
  CHECK_STREQ((const char *)o.userp, want_name); /* the allocator's tag came back */
  CHECK(o.datatype == TRITONSERVER_TYPE_INT32 &&
        o.memory_type == TRITONSERVER_MEMORY_CPU);
  CHECK(o.dims == 2 && o.shape[0] == 1 && o.shape[1] == 16);
  REQUIRE(o.size == 64 && o.base != NULL);
  const int32_t *v = o.base;
  for (int i = 0; i < 16; i++)
    CHECK(v[i] == (sub ? c->in0[i] - c->in1[i] : c->in0[i] + c->in1[i]));
}

/* ---- set-up: a temporary repository, the built-in backends ---- */

static bool file_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return false;
  fputs(text, f);
  return fclose(f) == 0;
}

static char *file_read(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  char *buf = calloc(1, 1 << 16);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* <repo>/<name>/config.pbtxt with `config` (plus `extra`), and version 1. */
static bool model_add(const char *name, const char *config, const char *extra) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", blt_env.repo, name);
  if (mkdir(path, 0755) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/1", blt_env.repo, name);
  if (mkdir(path, 0755) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/config.pbtxt", blt_env.repo, name);
  char *text = malloc(strlen(config) + strlen(extra) + 256);
  sprintf(text, "%s\n%s\n", config, extra);
  bool ok = file_write(path, text);
  free(text);
  return ok;
}

/* The example models' configs, under other names where needed. */
static bool repository_make(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(blt_env.repo, sizeof blt_env.repo, "%s/bls_repo_XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(blt_env.repo) == NULL) return false;
  char *simple = file_read("examples/models/simple/config.pbtxt");
  char *string = file_read("examples/models/simple_string/config.pbtxt");
  char *repeat = file_read("examples/models/repeat_int32/config.pbtxt");
  bool ok = simple && string && repeat;
  ok = ok && model_add("simple", simple, "");
  ok = ok && model_add("simple_string", string, "");
  ok = ok && model_add("repeat_int32", repeat, "");
  char *sequence = file_read("examples/models/simple_sequence_state/config.pbtxt");
  ok = ok && sequence != NULL && model_add("simple_sequence_state", sequence, "");
  free(sequence);
  char *name = ok ? strstr(simple, "name: \"simple\"") : NULL;
  ok = ok && name != NULL;
  if (ok) memset(name, ' ', strlen("name: \"simple\"")); /* named by its folder */
  ok = ok && model_add("simple_state", simple,
                       "sequence_batching { state [ { input_name: \"INPUT_STATE\" "
                       "output_name: \"OUTPUT_STATE\" data_type: TYPE_INT32 dims: [ 1 ] "
                       "} ] }");
  free(simple);
  free(string);
  free(repeat);
  return ok;
}

static bool server_start(void) {
  if (!repository_make()) return false;
  char backends[PATH_MAX];
  if (realpath("backends", backends) == NULL) return false;
  char repo_flag[PATH_MAX + 32], backend_flag[PATH_MAX + 32];
  snprintf(repo_flag, sizeof repo_flag, "--model-repository=%s", blt_env.repo);
  snprintf(backend_flag, sizeof backend_flag, "--backend-directory=%s", backends);
  char *argv[] = {"nereid", repo_flag, backend_flag, NULL};
  srv_status_t *st = srv_options_parse(&blt_env.opt, 3, argv);
  if (st != NULL) {
    fprintf(stderr, "options: %s\n", srv_status_message(st));
    srv_status_free(st);
    return false;
  }
  blt_env.opt.worker_threads = 2;
  bool all_loaded = false;
  st = srv_core_start(&blt_env.srv, &blt_env.opt, &all_loaded);
  if (st != NULL) {
    fprintf(stderr, "core: %s\n", srv_status_message(st));
    srv_status_free(st);
    return false;
  }
  if (!all_loaded) return false;
  atomic_store(&blt_env.srv.state, SRV_STATE_READY);
  OK(TRITONSERVER_ResponseAllocatorNew(&blt_env.allocator, test_alloc, test_release,
                                       test_start));
  return true;
}

/* The runtime's quiesce waits for every flight actor too: none may be
 * left once all callbacks came. */
static void server_stop(void) {
  srv_core_stop(&blt_env.srv);
  srv_core_free(&blt_env.srv);
  TRITONSERVER_ResponseAllocatorDelete(blt_env.allocator);
  srv_options_free(&blt_env.opt);
}

int blt_main(const char *suite, const unit_case_t *cases, size_t count) {
  if (!server_start()) {
    fprintf(stderr, "%s: cannot start the server\n", suite);
    return 1;
  }
  int rc = unit_run(suite, cases, count);
  server_stop();
  return rc;
}
