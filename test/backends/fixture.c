/* A real server for backend tests (see fixture.h). Test thread only; the
 * repository's `done` callbacks run on its actor and only post a
 * semaphore. */
#define _GNU_SOURCE /* nftw's FTW_DEPTH and FTW_PHYS */
#include "test/backends/fixture.h"

#include <errno.h>
#include <ftw.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MAX_ARGS = 16 };

/* ---- start and stop ---- */

static bool options_parse(bt_server_t *s, const char *backend_dir,
                          const char *const *backend_configs) {
  char backends[PATH_MAX];
  if (realpath(backend_dir, backends) == NULL) {
    fprintf(stderr, "  no backend directory '%s': %s\n", backend_dir, strerror(errno));
    return false;
  }
  static char flags[MAX_ARGS][PATH_MAX + 64];
  char *argv[MAX_ARGS + 1] = {"nereid"};
  int argc = 1;
  snprintf(flags[argc], sizeof flags[argc], "--model-repository=%s", s->repo);
  argv[argc] = flags[argc], argc++;
  snprintf(flags[argc], sizeof flags[argc], "--backend-directory=%s", backends);
  argv[argc] = flags[argc], argc++;
  /* Explicit: nothing loads at start; each case loads what it needs. */
  snprintf(flags[argc], sizeof flags[argc], "--model-control-mode=explicit");
  argv[argc] = flags[argc], argc++;
  for (size_t i = 0; backend_configs != NULL && backend_configs[i] != NULL; i++) {
    if (argc == MAX_ARGS) return false;
    snprintf(flags[argc], sizeof flags[argc], "--backend-config=%s", backend_configs[i]);
    argv[argc] = flags[argc], argc++;
  }
  srv_status_t *st = srv_options_parse(&s->opt, argc, argv);
  if (st == NULL) return true;
  fprintf(stderr, "  options: %s\n", srv_status_message(st));
  srv_status_free(st);
  srv_options_free(&s->opt);
  return false;
}

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void repo_remove(bt_server_t *s) {
  nftw(s->repo, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

bool bt_start(bt_server_t *s, const char *backend_dir,
              const char *const *backend_configs) {
  memset(s, 0, sizeof *s);
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(s->repo, sizeof s->repo, "%s/bt_repo_XXXXXX", tmp != NULL ? tmp : "/tmp");
  if (mkdtemp(s->repo) == NULL) {
    fprintf(stderr, "  mkdtemp %s: %s\n", s->repo, strerror(errno));
    return false;
  }
  if (!options_parse(s, backend_dir, backend_configs)) {
    repo_remove(s);
    return false;
  }
  bool all_loaded = false;
  srv_status_t *st = srv_core_start(&s->srv, &s->opt, &all_loaded);
  if (st != NULL) {
    fprintf(stderr, "  core: %s\n", srv_status_message(st));
    srv_status_free(st);
    srv_options_free(&s->opt);
    repo_remove(s);
    return false;
  }
  /* Release: a thread that sees READY sees what start-up built. No
   * frontend here: the test is the client. */
  atomic_store_explicit(&s->srv.state, SRV_STATE_READY, memory_order_release);
  return true;
}

void bt_stop(bt_server_t *s) {
  srv_core_stop(&s->srv);
  srv_core_free(&s->srv); /* model and backend finalize run here */
  srv_options_free(&s->opt);
  repo_remove(s);
}

TRITONSERVER_Server *bt_server(bt_server_t *s) { return (TRITONSERVER_Server *)&s->srv; }

/* ---- loads and unloads ---- */

static void op_done(srv_repo_op_t *op) { sem_post(op->ctx); }

/* Submits op and waits for its answer; returns its status (caller frees). */
static srv_status_t *op_run(bt_server_t *s, srv_repo_op_t *op) {
  sem_t done;
  sem_init(&done, 0, 0);
  op->done = op_done;
  op->ctx = &done;
  srv_repository_submit(s->srv.repository, op);
  while (sem_wait(&done) != 0 && errno == EINTR) {
  }
  sem_destroy(&done);
  return op->status; /* sem_wait made it visible: the post came after it */
}

/* The model's folder with version 1: the repository finds a model by its
 * folder even when the config comes with the load. */
static bool model_dir_make(bt_server_t *s, const char *model) {
  char path[PATH_MAX + 300];
  snprintf(path, sizeof path, "%s/%s", s->repo, model);
  if (mkdir(path, 0755) != 0 && errno != EEXIST) return false;
  snprintf(path, sizeof path, "%s/%s/1", s->repo, model);
  return mkdir(path, 0755) == 0 || errno == EEXIST;
}

char *bt_load(bt_server_t *s, const char *model, const char *config_json) {
  if (!model_dir_make(s, model)) return strdup("cannot make the model's folder");
  srv_repo_op_t op = {
      .kind = SRV_REPO_LOAD,
      .name = model,
      .override = {.config_json = config_json, .config_json_len = strlen(config_json)},
  };
  srv_status_t *st = op_run(s, &op);
  if (st == NULL) return NULL;
  char *why = strdup(srv_status_message(st));
  srv_status_free(st);
  return why;
}

bool bt_load_ok(bt_server_t *s, const char *model, const char *config_json) {
  char *why = bt_load(s, model, config_json);
  if (why == NULL) return true;
  fprintf(stderr, "  loading %s: %s\n", model, why);
  free(why);
  return false;
}

bool bt_load_fails_with(bt_server_t *s, const char *model, const char *config_json,
                        const char *needle) {
  char *why = bt_load(s, model, config_json);
  bool ok = why != NULL && strstr(why, needle) != NULL;
  if (!ok)
    fprintf(stderr, "  loading %s: wanted '%s', got '%s'\n", model, needle,
            why != NULL ? why : "(loaded)");
  free(why);
  return ok;
}

bool bt_unload(bt_server_t *s, const char *model) {
  srv_repo_op_t op = {.kind = SRV_REPO_UNLOAD, .name = model};
  srv_status_t *st = op_run(s, &op);
  if (st == NULL) return true;
  fprintf(stderr, "  unloading %s: %s\n", model, srv_status_message(st));
  srv_status_free(st);
  return false;
}

bool bt_with_model(const char *backend_dir, const char *const *backend_configs,
                   const char *model, const char *config_json, bt_body_fn *body) {
  bt_server_t s;
  if (!bt_start(&s, backend_dir, backend_configs)) return false;
  bool loaded = bt_load_ok(&s, model, config_json);
  if (loaded) body(&s);
  bt_stop(&s);
  return loaded;
}

/* ---- statistics ---- */

bool bt_stats_read(bt_server_t *s, const char *model, bt_stats_t *out) {
  srv_model_t *m = NULL;
  srv_status_t *st = srv_registry_acquire(s->srv.registry, model, strlen(model), -1, &m);
  if (st != NULL) {
    srv_status_free(st);
    return false;
  }
  srv_stats_totals_t x;
  srv_stats_totals(srv_model_stats(m), &x);
  out->success = x.success.count;
  out->fail = x.fail.count;
  out->executions = x.execution_count;
  out->inferences = x.inference_count;
  srv_model_unref(m);
  return true;
}

static bool stats_equal(const bt_stats_t *a, const bt_stats_t *b) {
  return a->success == b->success && a->fail == b->fail &&
         a->executions == b->executions && a->inferences == b->inferences;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

bool bt_stats_reach(bt_server_t *s, const char *model, bt_stats_t want) {
  bt_stats_t got = {0};
  for (int waited = 0; waited <= bt_ms(5000); waited++) {
    if (bt_stats_read(s, model, &got) && stats_equal(&got, &want)) return true;
    sleep_ms(1);
  }
  fprintf(stderr,
          "  stats of %s: success %llu fail %llu executions %llu inferences %llu; "
          "wanted %llu %llu %llu %llu\n",
          model, (unsigned long long)got.success, (unsigned long long)got.fail,
          (unsigned long long)got.executions, (unsigned long long)got.inferences,
          (unsigned long long)want.success, (unsigned long long)want.fail,
          (unsigned long long)want.executions, (unsigned long long)want.inferences);
  return false;
}

/* ---- time and files ---- */

int bt_ms(int ms) {
  const char *s = getenv("NEREID_TEST_SLOWDOWN");
  int k = s != NULL ? atoi(s) : 1;
  return ms * (k > 1 ? k : 1);
}

char *bt_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf != NULL && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len - 1 == 0) {
      char *bigger = realloc(buf, cap *= 2);
      if (bigger == NULL) free(buf);
      buf = bigger;
    }
  }
  fclose(f);
  if (buf != NULL) buf[len] = '\0';
  return buf;
}

bool bt_file_waits_for(const char *path, const char *text, int timeout_ms) {
  for (int waited = 0; waited <= timeout_ms; waited++) {
    char *got = bt_read_file(path);
    bool found = got != NULL && strstr(got, text) != NULL;
    free(got);
    if (found) return true;
    sleep_ms(1);
  }
  fprintf(stderr, "  %s: no '%s' after %d ms\n", path, text, timeout_ms);
  return false;
}
