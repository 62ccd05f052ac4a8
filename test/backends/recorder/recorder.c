/* The recorder test backend: records every lifecycle entry point call as a
 * line in a file, fails at a configured stage and sleeps where told
 * (answering at once the requests cancelled while Execute sleeps), and
 * otherwise answers like identity (OUTPUT<x> = INPUT<x>). Server tests use
 * it to check lifecycle order, failure paths, batching, cancellation and
 * concurrency; README.md lists the settings and the line format. Entry
 * points run on the server's loading threads and on each instance's execute
 * thread; the backend state is shared by all models, so its mutable part
 * sits behind a mutex. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/clock.h"
#include "backends/common/config_fetch.h"
#include "backends/common/error.h"
#include "backends/common/execute.h"
#include "backends/common/export.h"
#include "backends/common/passthrough.h"
#include "backends/common/simple_backend.h"
#include "test/backends/recorder/batch.h"
#include "test/backends/recorder/metrics.h"
#include "test/backends/recorder/plan.h"
#include "test/backends/recorder/record.h"

typedef struct {
  pthread_mutex_t mu;    /* guards path and pending */
  char *path;            /* backend-level record file, once known */
  char pending[256];     /* the initialize line, until a file is known */
  bk_json_doc_t *config; /* --backend-config values; owns plan's strings */
  rec_plan_t plan;       /* backend stages: initialize, finalize */
  char *name;
} rec_backend_t;

typedef struct {
  bk_model_config_t cfg; /* owns plan's strings */
  rec_plan_t plan;
  rec_metrics_t metrics; /* made with metric_tag only */
  char *path;
  char who[160]; /* "model=m version=1", for lines and errors */
} rec_model_t;

typedef struct {
  rec_model_t *model;
  char name[128];
  char who[320]; /* "model=m version=1 instance=i", for execute's lines */
} rec_instance_t;

static const char *param_lookup(const void *cfg, const char *key) {
  return bk_model_config_param(cfg, key);
}

/* --backend-config=recorder,key=value arrives as {"cmdline":{"key":"value"}}. */
static const char *cmdline_lookup(const void *doc, const char *key) {
  const bk_json_t *cmdline = bk_json_get(bk_json_root(doc), "cmdline");
  return bk_json_str(bk_json_get(cmdline, key), NULL);
}

/* ---- backend ------------------------------------------------------------- */

/* The backend config is optional: a server without it just gives none. */
static TRITONSERVER_Error *read_backend_config(TRITONBACKEND_Backend *backend,
                                               rec_backend_t *b) {
  TRITONSERVER_Message *msg = NULL;
  const char *json = NULL;
  size_t len = 0;
  TRITONSERVER_Error *err = TRITONBACKEND_BackendConfig(backend, &msg);
  if (err == NULL) err = TRITONSERVER_MessageSerializeToJson(msg, &json, &len);
  if (err == NULL) b->config = bk_json_parse(json, len, NULL, 0);
  if (msg != NULL) BK_LOG_IF_ERROR(TRITONSERVER_MessageDelete(msg), "deleting a message");
  BK_LOG_IF_ERROR(err, "recorder: no backend config");
  char why[BK_ERROR_MAX];
  if (!rec_plan_read(&b->plan, cmdline_lookup, b->config, why, sizeof why)) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
  }
  b->path = rec_path_resolve(b->plan.record_file);
  return NULL;
}

static void backend_free(rec_backend_t *b) {
  pthread_mutex_destroy(&b->mu);
  bk_json_doc_free(b->config);
  free(b->path);
  free(b->name);
  free(b);
}

/* The first model that names a record file also receives the backend's
 * lines, unless --backend-config named one. */
static void backend_adopt_path(rec_backend_t *b, const char *path) {
  if (path == NULL) return;
  pthread_mutex_lock(&b->mu);
  if (b->path == NULL) {
    b->path = strdup(path);
    if (b->pending[0] != '\0') rec_append(b->path, "%s", b->pending);
    b->pending[0] = '\0';
  }
  pthread_mutex_unlock(&b->mu);
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
  BK_RETURN_IF_ERROR(bk_check_api_version("recorder"));
  const char *name = "recorder";
  BK_RETURN_IF_ERROR(TRITONBACKEND_BackendName(backend, &name));
  rec_backend_t *b = calloc(1, sizeof *b);
  if (b == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  pthread_mutex_init(&b->mu, NULL);
  b->name = strdup(name);
  TRITONSERVER_Error *err = read_backend_config(backend, b);
  if (err == NULL) {
    snprintf(b->pending, sizeof b->pending, "initialize backend=%s tid=%ld%s", b->name,
             rec_tid(), b->plan.fail_at == REC_INITIALIZE ? " fail=1" : "");
    if (b->path != NULL) {
      rec_append(b->path, "%s", b->pending);
      b->pending[0] = '\0';
    }
    err = rec_plan_enter(&b->plan, REC_INITIALIZE, "backend");
  }
  if (err == NULL) err = TRITONBACKEND_BackendSetState(backend, b);
  if (err != NULL) backend_free(b); /* Finalize follows only a successful Initialize */
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend) {
  void *vb = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_BackendState(backend, &vb));
  rec_backend_t *b = vb;
  if (b == NULL) return NULL;
  rec_append(b->path, "finalize backend=%s tid=%ld%s", b->name, rec_tid(),
             b->plan.fail_at == REC_FINALIZE ? " fail=1" : "");
  TRITONSERVER_Error *err = rec_plan_enter(&b->plan, REC_FINALIZE, "backend");
  backend_free(b);
  return err;
}

/* ---- models -------------------------------------------------------------- */

static void model_free(rec_model_t *m) {
  rec_metrics_free(&m->metrics);
  bk_model_config_free(&m->cfg);
  free(m->path);
  free(m);
}

/* Reads the model's config and plan; the config must pair INPUT<x> with
 * OUTPUT<x>, since execute answers like identity. */
static TRITONSERVER_Error *model_read(TRITONBACKEND_Model *model, rec_model_t *m) {
  const char *name = "?";
  uint64_t version = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelVersion(model, &version));
  snprintf(m->who, sizeof m->who, "model=%s version=%" PRIu64, name, version);
  BK_RETURN_IF_ERROR(bk_model_config_fetch(model, &m->cfg));
  char why[BK_ERROR_MAX - 64];
  if (!rec_plan_read(&m->plan, param_lookup, &m->cfg, why, sizeof why) ||
      !bk_passthrough_validate(&m->cfg, why, sizeof why)) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': %s", name, why);
  }
  m->path = rec_path_resolve(m->plan.record_file);
  return rec_metrics_init(&m->metrics, name, bk_model_config_param(&m->cfg, "metric_tag"));
}

static rec_backend_t *backend_of(TRITONBACKEND_Model *model) {
  TRITONBACKEND_Backend *backend = NULL;
  void *vb = NULL;
  BK_LOG_IF_ERROR(TRITONBACKEND_ModelBackend(model, &backend), "finding the backend");
  if (backend != NULL)
    BK_LOG_IF_ERROR(TRITONBACKEND_BackendState(backend, &vb), "backend state");
  return vb;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
  rec_model_t *m = calloc(1, sizeof *m);
  if (m == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  TRITONSERVER_Error *err = model_read(model, m);
  if (err == NULL) {
    rec_backend_t *b = backend_of(model);
    if (b != NULL) backend_adopt_path(b, m->path);
    rec_append(m->path, "model_initialize %s tid=%ld%s", m->who, rec_tid(),
               m->plan.fail_at == REC_MODEL_INITIALIZE ? " fail=1" : "");
    err = rec_plan_enter(&m->plan, REC_MODEL_INITIALIZE, m->who);
  }
  if (err == NULL) err = TRITONBACKEND_ModelSetState(model, m);
  if (err != NULL) model_free(m); /* no ModelFinalize after a failed initialize */
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
  void *vm = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vm));
  rec_model_t *m = vm;
  if (m == NULL) return NULL;
  rec_append(m->path, "model_finalize %s tid=%ld%s", m->who, rec_tid(),
             m->plan.fail_at == REC_MODEL_FINALIZE ? " fail=1" : "");
  TRITONSERVER_Error *err = rec_plan_enter(&m->plan, REC_MODEL_FINALIZE, m->who);
  model_free(m); /* freed even when failing: the server will not call again */
  return err;
}

/* ---- instances ----------------------------------------------------------- */

static TRITONSERVER_Error *instance_read(TRITONBACKEND_ModelInstance *instance,
                                         rec_instance_t *in, char *kind_dev, size_t len) {
  TRITONBACKEND_Model *model = NULL;
  void *vm = NULL;
  const char *name = "?";
  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  int32_t device = 0;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vm));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceDeviceId(instance, &device));
  if (vm == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "model has no state");
  in->model = vm;
  snprintf(in->name, sizeof in->name, "%s", name);
  snprintf(in->who, sizeof in->who, "%s instance=%s", in->model->who, in->name);
  snprintf(kind_dev, len, "kind=%s device=%" PRId32,
           TRITONSERVER_InstanceGroupKindString(kind), device);
  return NULL;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance) {
  rec_instance_t *in = calloc(1, sizeof *in);
  if (in == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  char kind_dev[96];
  TRITONSERVER_Error *err = instance_read(instance, in, kind_dev, sizeof kind_dev);
  if (err == NULL) {
    rec_model_t *m = in->model;
    rec_append(m->path, "model_instance_initialize %s instance=%s %s tid=%ld%s", m->who,
               in->name, kind_dev, rec_tid(),
               m->plan.fail_at == REC_MODEL_INSTANCE_INITIALIZE ? " fail=1" : "");
    err = rec_plan_enter(&m->plan, REC_MODEL_INSTANCE_INITIALIZE, m->who);
  }
  if (err == NULL) err = TRITONBACKEND_ModelInstanceSetState(instance, in);
  if (err != NULL) free(in);
  return err;
}

BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance) {
  void *vin = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vin));
  rec_instance_t *in = vin;
  if (in == NULL) return NULL;
  rec_model_t *m = in->model;
  rec_append(m->path, "model_instance_finalize %s instance=%s tid=%ld%s", m->who,
             in->name, rec_tid(),
             m->plan.fail_at == REC_MODEL_INSTANCE_FINALIZE ? " fail=1" : "");
  TRITONSERVER_Error *err = rec_plan_enter(&m->plan, REC_MODEL_INSTANCE_FINALIZE, m->who);
  free(in);
  return err;
}

/* ---- execute ------------------------------------------------------------- */

/* Identity, after the per-request stage (delay, planned error response).
 * The batch size is INPUT0's, as on the execute_start line. */
static TRITONSERVER_Error *respond(void *ctx, TRITONBACKEND_Request *request,
                                   TRITONBACKEND_Response *response,
                                   uint64_t *batch_size) {
  rec_model_t *m = ctx;
  rec_metrics_request(&m->metrics);
  BK_RETURN_IF_ERROR(rec_plan_enter(&m->plan, REC_REQUEST, m->who));
  BK_RETURN_IF_ERROR(bk_passthrough_respond(&m->cfg, request, response, batch_size));
  *batch_size = rec_batch_request_size(request, m->cfg.max_batch_size);
  return NULL;
}

/* Sleeps `ms` answering the requests cancelled meanwhile, then answers the
 * rest. Works on a copy of the server's array, since cancelled requests
 * leave it. */
static void execute_batch(TRITONBACKEND_ModelInstance *instance, rec_instance_t *in,
                          TRITONBACKEND_Request **requests, uint32_t count,
                          uint64_t exec_start_ns, uint64_t ms) {
  rec_model_t *m = in->model;
  TRITONBACKEND_Request **live = calloc(count > 0 ? count : 1, sizeof *live);
  if (live == NULL) { /* still owed an answer: do without cancellation */
    BK_LOG(TRITONSERVER_LOG_ERROR, "recorder: out of memory; not polling cancellation");
    rec_sleep_ms(ms);
    bk_execute_each(instance, requests, count, respond, m);
    return;
  }
  memcpy(live, requests, count * sizeof *live);
  rec_batch_t batch = {instance, m->path, in->who, exec_start_ns};
  uint32_t left = rec_batch_wait(&batch, live, count, ms);
  bk_execute_each(instance, live, left, respond, m);
  free(live);
}

/* trace_activity: a backend's own activities in each traced request's
 * trace, before the request is answered (it is released then). */
static void trace_activities(TRITONBACKEND_Request **requests, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    TRITONSERVER_InferenceTrace *trace = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_RequestTrace(requests[i], &trace);
    if (err == NULL && trace != NULL)
      err = TRITONSERVER_InferenceTraceReportActivity(trace, bk_now_ns(),
                                                      "CUSTOM_ACTIVITY_START");
    if (err == NULL && trace != NULL)
      err = TRITONSERVER_InferenceTraceReportActivity(trace, bk_now_ns(),
                                                      "CUSTOM_ACTIVITY_END");
    if (err != NULL) {
      BK_LOG(TRITONSERVER_LOG_ERROR, "recorder: trace activity: %s",
             TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
    }
  }
}

/* execute_start / execute_end lines carry monotonic times and the thread,
 * so tests can see overlap between instances and the thread of each;
 * execute_start also shows how the server batched the requests. */
BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  uint64_t exec_start = bk_now_ns();
  void *vin = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vin));
  rec_instance_t *in = vin;
  if (in == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "instance has no state");
  rec_model_t *m = in->model;
  char desc[REC_BATCH_DESC_MAX];
  rec_batch_describe(requests, request_count, m->cfg.max_batch_size, desc, sizeof desc);
  rec_append(m->path, "execute_start %s requests=%" PRIu32 " t_ns=%" PRIu64 " tid=%ld %s",
             in->who, request_count, bk_now_ns(), rec_tid(), desc);
  rec_metrics_batch(&m->metrics, request_count);
  uint64_t input_ms =
      m->plan.delay_from_input ? rec_batch_input_delay_ms(requests, request_count) : 0;
  TRITONSERVER_Error *err = NULL;
  if (m->plan.trace_activity) trace_activities(requests, request_count);
  if (m->plan.fail_at == REC_EXECUTE) {
    /* A failing Execute leaves the requests to the server, untouched, so
     * nothing is answered here, cancelled or not. */
    rec_sleep_ms(input_ms);
    err = rec_plan_enter(&m->plan, REC_EXECUTE, m->who);
  } else {
    execute_batch(instance, in, requests, request_count, exec_start,
                  input_ms + m->plan.delay_ms[REC_EXECUTE]);
  }
  rec_append(m->path, "execute_end %s requests=%" PRIu32 " t_ns=%" PRIu64 " tid=%ld%s",
             in->who, request_count, bk_now_ns(), rec_tid(),
             err != NULL ? " fail=1" : "");
  return err;
}

/* Prefers CPU instances, like every built-in backend; with
 * --backend-config=recorder,preferred_instance_count=N it asks for N of
 * them, so server tests can see preferred groups applied to models whose
 * config names no instance group. */
BK_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes) {
  void *vb = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_BackendState(backend, &vb));
  rec_backend_t *b = vb;
  const char *count = b != NULL && b->config != NULL
                          ? cmdline_lookup(b->config, "preferred_instance_count")
                          : NULL;
  if (count == NULL) return bk_prefer_cpu_instances(attributes);
  char *end;
  unsigned long n = strtoul(count, &end, 10);
  if (end == count || *end != '\0')
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "recorder: preferred_instance_count '%s' is not a number", count);
  return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
      attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, n, NULL, 0);
}
