/* Tests of the tracing flags, the TraceSetting semantics (global and per
 * model, clearing, bad values) and sampling (rate, count, threads). Main
 * thread unless a case says otherwise. */
#include "server/trace/tracer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/trace/trace_config.h"
#include "test/unit/unit.h"

static char dir[256];

static const char *tmp_dir(void) {
  if (dir[0] == '\0') {
    const char *t = getenv("TEST_TMPDIR");
    snprintf(dir, sizeof dir, "%s/tracer_test.XXXXXX", t != NULL ? t : "/tmp");
    if (mkdtemp(dir) == NULL) abort();
  }
  return dir;
}

/* Parses argv-style trace configs into c; the status (NULL: OK). */
static srv_status_t *parse(srv_trace_config_t *c, const char *const *configs, size_t n) {
  srv_options_t o = {0};
  o.trace_configs = (char **)configs;
  o.trace_config_count = n;
  return srv_trace_config_parse(&o, c);
}

static bool refused(const char *const *configs, size_t n, const char *needle) {
  srv_trace_config_t c;
  srv_status_t *st = parse(&c, configs, n);
  if (st == NULL) {
    srv_trace_config_free(&c);
    return false;
  }
  bool ok = srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT &&
            strstr(srv_status_message(st), needle) != NULL;
  if (!ok) fprintf(stderr, "  got: %s\n", srv_status_message(st));
  srv_status_free(st);
  return ok;
}

static void config_defaults_and_values(void) {
  srv_trace_config_t c;
  REQUIRE(parse(&c, NULL, 0) == NULL);
  CHECK_EQ_U64(c.level, 0);
  CHECK_EQ_U64(c.rate, 1000);
  CHECK(c.count == -1);
  CHECK_EQ_U64(c.log_frequency, 0);
  CHECK(c.file == NULL);
  char file[300];
  snprintf(file, sizeof file, "triton,file=%s/t.json", tmp_dir());
  const char *args[] = {file,      "level=TIMESTAMPS",       "level=tensors", "rate=7",
                        "count=3", "triton,log-frequency=5", "mode=triton"};
  REQUIRE(parse(&c, args, 7) == NULL);
  CHECK_EQ_U64(c.level,
               TRITONSERVER_TRACE_LEVEL_TIMESTAMPS | TRITONSERVER_TRACE_LEVEL_TENSORS);
  CHECK_EQ_U64(c.rate, 7);
  CHECK(c.count == 3);
  CHECK_EQ_U64(c.log_frequency, 5);
  CHECK(c.file != NULL && strstr(c.file, "/t.json") != NULL);
  srv_trace_config_free(&c);
  /* An explicit OFF wins, as tritonserver. */
  const char *off[] = {"level=TIMESTAMPS", "level=OFF"};
  REQUIRE(parse(&c, off, 2) == NULL);
  CHECK_EQ_U64(c.level, 0);
}

static void config_old_flags_then_trace_config(void) {
  srv_options_t o = {0};
  char *levels[] = {"TIMESTAMPS"};
  o.trace_levels = levels;
  o.trace_level_count = 1;
  o.trace_rate = "5";
  o.trace_count = "9";
  char *cfg[] = {"rate=11"};
  o.trace_configs = cfg;
  o.trace_config_count = 1;
  srv_trace_config_t c;
  REQUIRE(srv_trace_config_parse(&o, &c) == NULL);
  CHECK_EQ_U64(c.level, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS);
  CHECK_EQ_U64(c.rate, 11); /* --trace-config overrides --trace-rate */
  CHECK(c.count == 9);
  o.trace_count = "-2";
  srv_status_t *st = srv_trace_config_parse(&o, &c);
  REQUIRE(st != NULL);
  CHECK(strstr(srv_status_message(st), "--trace-count count") != NULL);
  srv_status_free(st);
}

static void config_refusals(void) {
  const char *otel[] = {"mode=opentelemetry"};
  CHECK(refused(otel, 1, "no OpenTelemetry exporter"));
  const char *otel2[] = {"opentelemetry,url=localhost:4318"};
  CHECK(refused(otel2, 1, "no OpenTelemetry exporter"));
  const char *mode[] = {"zipkin,file=/tmp/x"};
  CHECK(refused(mode, 1, "unknown trace mode"));
  const char *form[] = {"level"};
  CHECK(refused(form, 1, "expects [<mode>,]<setting>=<value>"));
  const char *empty[] = {"rate="};
  CHECK(refused(empty, 1, "expects [<mode>,]<setting>=<value>"));
  const char *rate[] = {"rate=0"};
  CHECK(refused(rate, 1, "[1, 2147483647]"));
  const char *rate2[] = {"rate=12x"};
  CHECK(refused(rate2, 1, "got '12x'"));
  const char *count[] = {"count=-5"};
  CHECK(refused(count, 1, "[-1, 2147483647]"));
  const char *level[] = {"level=VERBOSE"};
  CHECK(refused(level, 1, "OFF, TIMESTAMPS or TENSORS"));
  const char *key[] = {"colour=blue"};
  CHECK(refused(key, 1, "unknown setting 'colour'"));
}

static void file_rule(void) {
  char path[300];
  const char *nodir[] = {"triton,file=/nonexistent-folder-xyz/trace.json"};
  CHECK(refused(nodir, 1, "folder '/nonexistent-folder-xyz' does not exist"));
  snprintf(path, sizeof path, "triton,file=%s", tmp_dir()); /* a folder */
  const char *isdir[] = {path};
  CHECK(refused(isdir, 1, "is not a regular file"));
  const char *devnull[] = {"triton,file=/dev/null"};
  CHECK(refused(devnull, 1, "is not a regular file"));
  char *longp = malloc(5000);
  memset(longp, 'a', 4999);
  longp[4999] = '\0';
  memcpy(longp, "triton,file=", 12);
  const char *toolong[] = {longp};
  CHECK(refused(toolong, 1, "above the limit"));
  free(longp);
  if (geteuid() != 0) { /* root writes anywhere */
    char ro[300];
    snprintf(ro, sizeof ro, "%s/ro", tmp_dir());
    mkdir(ro, 0500);
    snprintf(path, sizeof path, "triton,file=%s/trace.json", ro);
    const char *rofile[] = {path};
    CHECK(refused(rofile, 1, "is not writable"));
  }
}

/* A tracer on a file in the test's folder. */
static srv_tracer_t *tracer_new(uint32_t level, uint32_t rate, int32_t count) {
  char file[300];
  snprintf(file, sizeof file, "%s/tracer.json", tmp_dir());
  srv_trace_config_t c = {.level = level, .rate = rate, .count = count, .file = file};
  srv_tracer_t *tr = NULL;
  if (srv_tracer_new(&c, &tr) != NULL) abort();
  return tr;
}

/* Samples n requests of model, releasing each trace; the number traced. */
static uint32_t sample_n(srv_tracer_t *tr, const char *model, uint32_t n) {
  uint32_t traced = 0;
  for (uint32_t i = 0; i < n; i++) {
    srv_trace_t *t = srv_tracer_sample(tr, model);
    if (t == NULL) continue;
    traced++;
    srv_trace_release(t);
  }
  return traced;
}

static void update_with(srv_tracer_t *tr, const char *model, const char *name,
                        const char *const *values, size_t n, grpc_status_code want) {
  srv_trace_update_t u = {0};
  upb_StringView v[4];
  for (size_t i = 0; i < n; i++) v[i] = upb_StringView_FromString(values[i]);
  srv_status_t *st = srv_trace_update_parse(&u, upb_StringView_FromString(name), v, n);
  if (st == NULL) st = srv_tracer_update(tr, model, &u);
  grpc_status_code got = st == NULL ? GRPC_STATUS_OK : srv_status_code(st);
  if (got != want)
    fprintf(stderr, "  %s: %s\n", name, st ? srv_status_message(st) : "OK");
  CHECK_EQ_U64(got, want);
  srv_status_free(st);
}

static void sampling_rate_and_count(void) {
  srv_tracer_t *tr = tracer_new(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 4, -1);
  CHECK(srv_tracer_on(tr));
  CHECK_EQ_U64(sample_n(tr, "a", 40), 10); /* every 4th request of "a" */
  CHECK_EQ_U64(sample_n(tr, "b", 3), 0);   /* "b" counts on its own */
  CHECK_EQ_U64(sample_n(tr, "b", 1), 1);
  const char *three[] = {"3"};
  update_with(tr, NULL, "trace_count", three, 1, GRPC_STATUS_OK);
  CHECK_EQ_U64(sample_n(tr, "a", 400), 3); /* count runs out */
  srv_trace_view_t v;
  srv_tracer_get(tr, NULL, &v);
  CHECK(v.count == 0);
  srv_tracer_free(tr);
}

static void *sample_thread(void *arg) {
  srv_tracer_t *tr = arg;
  for (int i = 0; i < 10000; i++) {
    srv_trace_t *t = srv_tracer_sample(tr, "m");
    if (t != NULL) srv_trace_release(t);
  }
  return NULL;
}

/* Four threads, rate 10, 40000 requests: exactly 4000 traces; then a
 * count of 100 is never overdrawn. */
static void sampling_threads_exact(void) {
  srv_tracer_t *tr = tracer_new(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 10, 1000000);
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, sample_thread, tr);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  srv_trace_view_t v;
  srv_tracer_get(tr, "m", &v);
  CHECK(v.count == 1000000 - 4000);
  const char *hundred[] = {"100"};
  update_with(tr, NULL, "trace_count", hundred, 1, GRPC_STATUS_OK);
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, sample_thread, tr);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  srv_tracer_get(tr, NULL, &v);
  CHECK(v.count == 0);
  srv_tracer_free(tr);
}

/* Slots made by sampling threads while updates make others: every
 * request of every model is traced at rate 1, whoever made the slot. */
static void *many_models_thread(void *arg) {
  srv_tracer_t *tr = arg;
  uint32_t traced = 0;
  char name[16];
  for (int i = 0; i < 4000; i++) {
    snprintf(name, sizeof name, "m%d", i % 200);
    srv_trace_t *t = srv_tracer_sample(tr, name);
    if (t != NULL) {
      traced++;
      srv_trace_release(t);
    }
  }
  return (void *)(uintptr_t)traced;
}

static void slots_made_concurrently(void) {
  srv_tracer_t *tr = tracer_new(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 1, -1);
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, many_models_thread, tr);
  const char *minus1[] = {"-1"};
  char name[16];
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "m%d", (i * 7) % 250);
    update_with(tr, name, "trace_count", minus1, 1, GRPC_STATUS_OK);
  }
  uint64_t traced = 0;
  for (int i = 0; i < 4; i++) {
    void *n;
    pthread_join(th[i], &n);
    traced += (uintptr_t)n;
  }
  CHECK_EQ_U64(traced, 4 * 4000);
  srv_tracer_free(tr);
}

static void model_follows_global_until_set(void) {
  srv_tracer_t *tr = tracer_new(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 1000, -1);
  const char *five[] = {"5"}, *two[] = {"2"};
  update_with(tr, "simple", "trace_rate", five, 1, GRPC_STATUS_OK);
  srv_trace_view_t v;
  srv_tracer_get(tr, "simple", &v);
  CHECK_EQ_U64(v.rate, 5);
  CHECK_EQ_U64(v.level, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS);
  /* A global change reaches what the model did not set. */
  const char *both[] = {"TIMESTAMPS", "TENSORS"};
  update_with(tr, NULL, "trace_level", both, 2, GRPC_STATUS_OK);
  update_with(tr, NULL, "log_frequency", two, 1, GRPC_STATUS_OK);
  srv_tracer_get(tr, "simple", &v);
  CHECK_EQ_U64(v.level,
               TRITONSERVER_TRACE_LEVEL_TIMESTAMPS | TRITONSERVER_TRACE_LEVEL_TENSORS);
  CHECK_EQ_U64(v.rate, 5);
  CHECK_EQ_U64(v.log_frequency, 2);
  srv_tracer_get(tr, "other", &v);
  CHECK_EQ_U64(v.rate, 1000);
  /* Cleared: the model follows the global setting again. */
  update_with(tr, "simple", "trace_rate", NULL, 0, GRPC_STATUS_OK);
  srv_tracer_get(tr, "simple", &v);
  CHECK_EQ_U64(v.rate, 1000);
  /* A global value cleared goes back to the flags'. */
  update_with(tr, NULL, "trace_level", NULL, 0, GRPC_STATUS_OK);
  update_with(tr, NULL, "log_frequency", NULL, 0, GRPC_STATUS_OK);
  srv_tracer_get(tr, NULL, &v);
  CHECK_EQ_U64(v.level, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS);
  CHECK_EQ_U64(v.log_frequency, 0);
  /* A model can turn itself off while the rest traces. */
  const char *off[] = {"OFF"};
  update_with(tr, "quiet", "trace_level", off, 1, GRPC_STATUS_OK);
  const char *one[] = {"1"};
  update_with(tr, NULL, "trace_rate", one, 1, GRPC_STATUS_OK);
  CHECK_EQ_U64(sample_n(tr, "quiet", 5), 0);
  CHECK_EQ_U64(sample_n(tr, "loud", 5), 5);
  srv_tracer_free(tr);
}

static void bad_updates_change_nothing(void) {
  srv_tracer_t *tr = tracer_new(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 3, -1);
  const char *zero[] = {"0"}, *bad[] = {"x1"}, *neg[] = {"-2"}, *big[] = {"4294967296"};
  const char *two[] = {"1", "2"}, *offs[] = {"OFF", "TIMESTAMPS"}, *lvl[] = {"LOUD"};
  const char *file[] = {"/etc/passwd"}, *mode[] = {"opentelemetry"};
  update_with(tr, NULL, "trace_rate", zero, 1, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_rate", bad, 1, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_rate", big, 1, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_rate", two, 2, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_count", neg, 1, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_level", offs, 2, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_level", lvl, 1, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, NULL, "trace_file", file, 1, GRPC_STATUS_UNIMPLEMENTED);
  update_with(tr, NULL, "trace_mode", mode, 1, GRPC_STATUS_UNIMPLEMENTED);
  update_with(tr, NULL, "colour", bad, 1, GRPC_STATUS_INVALID_ARGUMENT);
  update_with(tr, "m", "trace_rate", zero, 1, GRPC_STATUS_INVALID_ARGUMENT);
  srv_trace_view_t v;
  srv_tracer_get(tr, "m", &v);
  CHECK_EQ_U64(v.rate, 3);
  CHECK_EQ_U64(v.level, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS);
  /* Rate 0 is fine once tracing is off (Triton's rule). */
  const char *off[] = {"OFF"};
  update_with(tr, NULL, "trace_level", off, 1, GRPC_STATUS_OK);
  update_with(tr, NULL, "trace_rate", zero, 1, GRPC_STATUS_OK);
  CHECK(!srv_tracer_on(tr));
  srv_tracer_free(tr);
}

static void no_file_no_tracing(void) {
  srv_trace_config_t c = {
      .level = TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, .rate = 1, .count = -1};
  srv_tracer_t *tr = NULL;
  REQUIRE(srv_tracer_new(&c, &tr) == NULL);
  CHECK(!srv_tracer_on(tr));
  CHECK(srv_tracer_sample(tr, "m") == NULL);
  const char *one[] = {"1"};
  update_with(tr, NULL, "trace_rate", one, 1, GRPC_STATUS_INVALID_ARGUMENT);
  srv_tracer_free(tr);
}

UNIT_MAIN("tracer", UNIT_CASE(config_defaults_and_values),
          UNIT_CASE(config_old_flags_then_trace_config), UNIT_CASE(config_refusals),
          UNIT_CASE(file_rule), UNIT_CASE(sampling_rate_and_count),
          UNIT_CASE(sampling_threads_exact), UNIT_CASE(slots_made_concurrently),
          UNIT_CASE(model_follows_global_until_set),
          UNIT_CASE(bad_updates_change_nothing), UNIT_CASE(no_file_no_tracing))
