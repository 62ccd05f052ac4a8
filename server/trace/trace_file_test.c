/* Tests of the trace file: Triton's JSON layout of a trace tree (info,
 * timestamps, tensors, children), escaping of what clients send, the
 * writer's files (one array, or log_frequency's indexed files) and the
 * trace C API on user traces. Main thread, and the writer's. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/trace/trace.h"
#include "server/trace/tracer.h"
#include "test/unit/unit.h"

static char dir[256];

static const char *path_in_tmp(const char *name) {
  static char path[400];
  if (dir[0] == '\0') {
    const char *t = getenv("TEST_TMPDIR");
    snprintf(dir, sizeof dir, "%s/trace_file_test.XXXXXX", t != NULL ? t : "/tmp");
    if (mkdtemp(dir) == NULL) abort();
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

static srv_tracer_t *tracer_on(const char *file, uint32_t level, uint32_t freq) {
  srv_trace_config_t c = {.level = level,
                          .rate = 1,
                          .count = -1,
                          .log_frequency = freq,
                          .file = (char *)file};
  srv_tracer_t *tr = NULL;
  if (srv_tracer_new(&c, &tr) != NULL) abort();
  return tr;
}

/* One request's trace, as the hooks would report it. */
static void one_trace(srv_tracer_t *tr, const char *model, const char *rid) {
  srv_trace_t *t = srv_tracer_sample(tr, model);
  if (t == NULL) return;
  srv_trace_set_request(t, model, 1, rid);
  srv_trace_report(t, TRITONSERVER_TRACE_REQUEST_START, 10, NULL);
  srv_trace_report(t, TRITONSERVER_TRACE_QUEUE_START, 20, NULL);
  int32_t in[4] = {1, -2, 3, 4};
  int64_t shape[2] = {1, 4};
  srv_trace_report_tensor(t, TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT, "IN\"0",
                          TRITONSERVER_TYPE_INT32, in, sizeof in, shape, 2,
                          TRITONSERVER_MEMORY_CPU, 0);
  /* A BYTES tensor whose lengths lie: printing stops at byte_size. */
  char bytes[] = {2, 0, 0, 0, 'h', 'i', 100, 0, 0, 0, 'x'};
  int64_t two[1] = {2};
  srv_trace_report_tensor(t, TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT, "S",
                          TRITONSERVER_TYPE_BYTES, bytes, sizeof bytes, two, 1,
                          TRITONSERVER_MEMORY_CPU, 0);
  srv_trace_t *child = srv_trace_child(t);
  srv_trace_set_request(child, "step", 2, "");
  srv_trace_report(child, TRITONSERVER_TRACE_REQUEST_START, 30, NULL);
  srv_trace_report(child, TRITONSERVER_TRACE_CUSTOM_ACTIVITY, 35, "MY_ACTIVITY");
  srv_trace_release(t); /* the root first: the child keeps the record */
  srv_trace_report(child, TRITONSERVER_TRACE_REQUEST_END, 40, NULL);
  srv_trace_release(child);
}

static json_t *load(const char *path) {
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  if (j == NULL) fprintf(stderr, "  %s: %s\n", path, e.text);
  return j;
}

static void one_array_in_the_file(void) {
  char file[400];
  snprintf(file, sizeof file, "%s", path_in_tmp("one.json"));
  srv_tracer_t *tr = tracer_on(
      file, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS | TRITONSERVER_TRACE_LEVEL_TENSORS, 0);
  one_trace(tr, "m", "req \"1\"\n\xff");
  one_trace(tr, "m", "");
  srv_tracer_free(tr); /* flushes and closes the array */
  json_t *j = load(file);
  REQUIRE(j != NULL && json_is_array(j));
  /* Per trace: info, 2 stamps, 2 tensors; child: info, 2 stamps, end. */
  CHECK_EQ_U64(json_array_size(j), 2 * 9);
  json_t *info = json_array_get(j, 0);
  CHECK_STREQ(json_string_value(json_object_get(info, "model_name")), "m");
  CHECK_EQ_U64(json_integer_value(json_object_get(info, "model_version")), 1);
  CHECK_STREQ(json_string_value(json_object_get(info, "request_id")),
              "req \"1\"\n\xc3\xbf");
  CHECK(json_object_get(info, "parent_id") == NULL);
  uint64_t root = json_integer_value(json_object_get(info, "id"));
  json_t *stamp = json_array_get(json_object_get(json_array_get(j, 1), "timestamps"), 0);
  CHECK_STREQ(json_string_value(json_object_get(stamp, "name")), "REQUEST_START");
  CHECK_EQ_U64(json_integer_value(json_object_get(stamp, "ns")), 10);
  json_t *tensor = json_array_get(j, 3);
  CHECK_STREQ(json_string_value(json_object_get(tensor, "activity")),
              "TENSOR_QUEUE_INPUT");
  json_t *tt = json_object_get(tensor, "tensor");
  CHECK_STREQ(json_string_value(json_object_get(tt, "name")), "IN\"0");
  CHECK_STREQ(json_string_value(json_object_get(tt, "data")), "1,-2,3,4");
  CHECK_STREQ(json_string_value(json_object_get(tt, "shape")), "1,4");
  CHECK_STREQ(json_string_value(json_object_get(tt, "dtype")), "INT32");
  json_t *bt = json_object_get(json_array_get(j, 4), "tensor");
  CHECK_STREQ(json_string_value(json_object_get(bt, "data")), "\"hi\"");
  json_t *cinfo = json_array_get(j, 5);
  CHECK_STREQ(json_string_value(json_object_get(cinfo, "model_name")), "step");
  CHECK_EQ_U64(json_integer_value(json_object_get(cinfo, "parent_id")), root);
  CHECK(json_object_get(cinfo, "request_id") == NULL); /* empty: left out */
  json_t *custom = json_array_get(json_object_get(json_array_get(j, 7), "timestamps"), 0);
  CHECK_STREQ(json_string_value(json_object_get(custom, "name")), "MY_ACTIVITY");
  /* A second trace has a new id. */
  CHECK((uint64_t)json_integer_value(json_object_get(json_array_get(j, 9), "id")) > root);
  json_decref(j);
}

static void log_frequency_rotates(void) {
  char file[400];
  snprintf(file, sizeof file, "%s", path_in_tmp("rot.json"));
  srv_tracer_t *tr = tracer_on(file, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 2);
  for (int i = 0; i < 5; i++) one_trace(tr, "m", "");
  srv_tracer_free(tr);
  CHECK(access(file, F_OK) != 0); /* only the indexed files */
  size_t traces[3] = {2, 2, 1};   /* the last at shutdown */
  for (int k = 0; k < 3; k++) {
    char name[420];
    snprintf(name, sizeof name, "%s.%d", file, k);
    json_t *j = load(name);
    REQUIRE(j != NULL);
    /* Timestamps only: per trace 3 root entries and 4 child entries. */
    CHECK_EQ_U64(json_array_size(j), traces[k] * 7);
    json_decref(j);
  }
  char name[420];
  snprintf(name, sizeof name, "%s.3", file);
  CHECK(access(name, F_OK) != 0);
}

static void no_trace_no_file(void) {
  char file[400];
  snprintf(file, sizeof file, "%s", path_in_tmp("none.json"));
  srv_tracer_t *tr = tracer_on(file, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0);
  srv_tracer_free(tr);
  CHECK(access(file, F_OK) != 0);
}

/* The folder goes while the server runs: traces are lost and logged, the
 * writer goes on and stops cleanly. */
static void folder_gone(void) {
  char sub[400], file[420];
  snprintf(sub, sizeof sub, "%s", path_in_tmp("gone"));
  REQUIRE(mkdir(sub, 0700) == 0);
  snprintf(file, sizeof file, "%s/t.json", sub);
  srv_tracer_t *tr = tracer_on(file, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0);
  REQUIRE(rmdir(sub) == 0);
  for (int i = 0; i < 3; i++) one_trace(tr, "m", "");
  srv_tracer_free(tr);
  CHECK(access(file, F_OK) != 0);
}

/* A user's trace (the in-process API): callbacks get the activities. */
static int activities, tensors, released;
static void on_activity(TRITONSERVER_InferenceTrace *t,
                        TRITONSERVER_InferenceTraceActivity a, uint64_t ns, void *userp) {
  (void)t, (void)ns;
  if (userp == &activities && a == TRITONSERVER_TRACE_CUSTOM_ACTIVITY) activities++;
}
static void on_tensor(TRITONSERVER_InferenceTrace *t,
                      TRITONSERVER_InferenceTraceActivity a, const char *name,
                      TRITONSERVER_DataType dt, const void *base, size_t size,
                      const int64_t *shape, uint64_t dims, TRITONSERVER_MemoryType mt,
                      int64_t mt_id, void *userp) {
  (void)t, (void)a, (void)name, (void)dt, (void)base, (void)size, (void)shape, (void)dims;
  (void)mt, (void)mt_id, (void)userp;
  tensors++;
}
static void on_release(TRITONSERVER_InferenceTrace *t, void *userp) {
  (void)userp;
  released++;
  TRITONSERVER_InferenceTraceDelete(t);
}

static void user_trace_api(void) {
  TRITONSERVER_InferenceTrace *t = NULL;
  REQUIRE(TRITONSERVER_InferenceTraceTensorNew(
              &t, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS | TRITONSERVER_TRACE_LEVEL_TENSORS,
              0, on_activity, on_tensor, on_release, &activities) == NULL);
  uint64_t id = 0, parent = 7;
  CHECK(TRITONSERVER_InferenceTraceId(t, &id) == NULL && id > 0);
  CHECK(TRITONSERVER_InferenceTraceParentId(t, &parent) == NULL && parent == 0);
  CHECK(TRITONSERVER_InferenceTraceReportActivity(t, 5, "X") == NULL);
  CHECK_EQ_U64(activities, 1);
  int32_t v = 1;
  int64_t shape = 1;
  srv_trace_report_tensor(t, TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT, "T",
                          TRITONSERVER_TYPE_INT32, &v, 4, &shape, 1,
                          TRITONSERVER_MEMORY_CPU, 0);
  CHECK_EQ_U64(tensors, 1);
  TRITONSERVER_InferenceTrace *child = NULL;
  REQUIRE(TRITONSERVER_InferenceTraceSpawnChildTrace(t, &child) == NULL);
  CHECK(TRITONSERVER_InferenceTraceParentId(child, &parent) == NULL && parent == id);
  srv_trace_set_request(child, "m", 3, "r");
  const char *s = NULL;
  int64_t version = 0;
  CHECK(TRITONSERVER_InferenceTraceModelName(child, &s) == NULL);
  CHECK_STREQ(s, "m");
  CHECK(TRITONSERVER_InferenceTraceModelVersion(child, &version) == NULL && version == 3);
  CHECK(TRITONSERVER_InferenceTraceRequestId(child, &s) == NULL);
  CHECK_STREQ(s, "r");
  CHECK(TRITONSERVER_InferenceTraceSetContext(child, "{\"a\":1}") == NULL);
  CHECK(TRITONSERVER_InferenceTraceContext(child, &s) == NULL);
  CHECK_STREQ(s, "{\"a\":1}");
  srv_trace_release(child);
  srv_trace_release(t);
  CHECK_EQ_U64(released, 2);
  TRITONSERVER_Error *err = TRITONSERVER_InferenceTraceId(NULL, &id);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  err = TRITONSERVER_InferenceTraceNew(&t, (TRITONSERVER_InferenceTraceLevel)0x40, 0,
                                       NULL, NULL, NULL);
  CHECK(err != NULL);
  TRITONSERVER_ErrorDelete(err);
}

UNIT_MAIN("trace_file", UNIT_CASE(one_array_in_the_file),
          UNIT_CASE(log_frequency_rotates), UNIT_CASE(no_trace_no_file),
          UNIT_CASE(folder_gone), UNIT_CASE(user_trace_api))
