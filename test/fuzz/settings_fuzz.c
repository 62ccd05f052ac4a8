/* Fuzz target of the settings that clients read and change: the first
 * byte picks the decoder (`% 4`) and, for HTTP trace settings, the model
 * (`/ 4 % 4`: none, simple, other, missing); the rest is the body.
 *  0. gRPC TraceSetting: a serialized TraceSettingRequest, decoded as the
 *     RPC decodes it, its map turned into items by srv_view_trace_items
 *     (as srv_rpc_trace_setting does), then srv_view_trace_setting.
 *  1. HTTP trace setting: srv_http_trace_setting with the JSON body.
 *  2. gRPC LogSettings: a serialized LogSettingsRequest,
 *     srv_view_log_settings.
 *  3. HTTP logging: srv_http_logging (POST) with the JSON body.
 * Each input starts from the same state: a new tracer with Triton's
 * defaults and no trace file (no writer: nothing is written, and a level
 * other than OFF is refused), the log settings as the process started.
 * The settings are read back through the same view (a request with no
 * settings, or GET) before and after:
 *  - accepted: every setting within its bounds (levels OFF, TIMESTAMPS,
 *    TENSORS; a level only with a rate >= 1 and a file; count >= -1;
 *    trace_file and trace_mode unchanged; log_file unchanged; verbose
 *    level >= 0; format "default" or "ISO8601"), the answer equal to what
 *    the view reads afterwards;
 *  - refused: an error a client reads (INVALID_ARGUMENT, UNIMPLEMENTED,
 *    RESOURCE_EXHAUSTED), an HTTP code that matches it with a JSON body
 *    {"error": "..."}, and nothing changed (global and every model).
 * Single-threaded (libFuzzer or fuzz_driver.c). */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/core/core.h"
#include "server/trace/tracer.h"
#include "server/views/http_views.h"
#include "server/views/log_view.h"
#include "server/views/views.h"
#include "test/fuzz/fuzz.h"
#include "test/fuzz/fuzz_props.h"
#include "upb/decode.h"

/* "" is the global setting; "missing" has no model. */
static const char *const kNames[] = {"", "simple", "other", "missing"};
enum { NAME_COUNT = 4, READY_COUNT = 3 };

static const char *const kModels[] = {
    "name: 'simple' backend: 'fuzz' max_batch_size: 8\n"
    "input [{name: 'IN' data_type: TYPE_INT32 dims: [4]}]\n"
    "output [{name: 'OUT' data_type: TYPE_INT32 dims: [4]}]",
    "name: 'other' backend: 'fuzz'\n"
    "input [{name: 'IN' data_type: TYPE_FP32 dims: [1]}]\n"
    "output [{name: 'OUT' data_type: TYPE_FP32 dims: [1]}]",
};
enum { MODEL_COUNT = sizeof kModels / sizeof kModels[0] };

/* A server with a registry of the models above (never freed: reachable)
 * and, per input, a new tracer. */
static srv_server_t *server_get(void) {
  static srv_server_t srv;
  if (srv.registry != NULL) return &srv;
  fuzz_registry_make(&srv, kModels, MODEL_COUNT);
  return &srv;
}

/* ---- trace settings ------------------------------------------------------ */

/* The settings one answer lists. */
typedef struct {
  uint32_t level;
  long long rate, count, log_frequency;
  char file[64], mode[16];
} trace_seen_t;

static long long number_of(const char *s, size_t n) {
  char buf[32];
  FUZZ_CHECK(n > 0 && n < sizeof buf);
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  long long v = strtoll(buf, &end, 10);
  FUZZ_CHECK(*end == '\0');
  return v;
}

static uint32_t level_bit(const char *s, size_t n) {
  if (n == 3 && memcmp(s, "OFF", 3) == 0) return 0;
  if (n == 10 && memcmp(s, "TIMESTAMPS", 10) == 0)
    return TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
  FUZZ_CHECK(n == 7 && memcmp(s, "TENSORS", 7) == 0);
  return TRITONSERVER_TRACE_LEVEL_TENSORS;
}

/* One value of `key` in a TraceSettingResponse. */
static upb_StringView response_one(const inference_TraceSettingResponse *m,
                                   const char *key) {
  inference_TraceSettingResponse_SettingValue *v = NULL;
  FUZZ_CHECK(
      inference_TraceSettingResponse_settings_get(m, upb_StringView_FromString(key), &v));
  size_t n;
  const upb_StringView *values = inference_TraceSettingResponse_SettingValue_value(v, &n);
  FUZZ_CHECK(n == 1);
  return values[0];
}

static void copy_text(char *dst, size_t cap, const char *s, size_t n) {
  FUZZ_CHECK(n < cap);
  memcpy(dst, s, n);
  dst[n] = '\0';
}

static void trace_seen_of_response(const inference_TraceSettingResponse *m,
                                   trace_seen_t *out) {
  memset(out, 0, sizeof *out);
  FUZZ_CHECK(inference_TraceSettingResponse_settings_size(m) == 6);
  inference_TraceSettingResponse_SettingValue *v = NULL;
  FUZZ_CHECK(inference_TraceSettingResponse_settings_get(
      m, upb_StringView_FromString("trace_level"), &v));
  size_t n;
  const upb_StringView *levels = inference_TraceSettingResponse_SettingValue_value(v, &n);
  FUZZ_CHECK(n >= 1 && n <= 2);
  for (size_t i = 0; i < n; i++) out->level |= level_bit(levels[i].data, levels[i].size);
  upb_StringView s = response_one(m, "trace_rate");
  out->rate = number_of(s.data, s.size);
  s = response_one(m, "trace_count");
  out->count = number_of(s.data, s.size);
  s = response_one(m, "log_frequency");
  out->log_frequency = number_of(s.data, s.size);
  s = response_one(m, "trace_file");
  copy_text(out->file, sizeof out->file, s.data, s.size);
  s = response_one(m, "trace_mode");
  copy_text(out->mode, sizeof out->mode, s.data, s.size);
}

static const char *json_text_of(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  FUZZ_CHECK(json_is_string(v));
  return json_string_value(v);
}

static void trace_seen_of_json(const char *body, size_t len, trace_seen_t *out) {
  memset(out, 0, sizeof *out);
  json_t *o = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
  FUZZ_CHECK(json_is_object(o) && json_object_size(o) == 6);
  json_t *levels = json_object_get(o, "trace_level");
  FUZZ_CHECK(json_is_array(levels) && json_array_size(levels) >= 1 &&
             json_array_size(levels) <= 2);
  for (size_t i = 0; i < json_array_size(levels); i++) {
    json_t *l = json_array_get(levels, i);
    FUZZ_CHECK(json_is_string(l));
    out->level |= level_bit(json_string_value(l), json_string_length(l));
  }
  const char *s = json_text_of(o, "trace_rate");
  out->rate = number_of(s, strlen(s));
  s = json_text_of(o, "trace_count");
  out->count = number_of(s, strlen(s));
  s = json_text_of(o, "log_frequency");
  out->log_frequency = number_of(s, strlen(s));
  s = json_text_of(o, "trace_file");
  copy_text(out->file, sizeof out->file, s, strlen(s));
  s = json_text_of(o, "trace_mode");
  copy_text(out->mode, sizeof out->mode, s, strlen(s));
  json_decref(o);
}

/* The documented bounds (trace.md, tracer.h): no file from the network,
 * so with none at start-up nothing may trace. */
static void trace_bounds_check(const trace_seen_t *t) {
  FUZZ_CHECK((t->level & ~(uint32_t)(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS |
                                     TRITONSERVER_TRACE_LEVEL_TENSORS)) == 0);
  if (t->level != 0) FUZZ_CHECK(t->rate >= 1 && t->file[0] != '\0');
  FUZZ_CHECK(t->level == 0); /* no trace file here */
  FUZZ_CHECK(t->rate >= 0 && t->rate <= UINT32_MAX);
  FUZZ_CHECK(t->count >= -1 && t->count <= INT32_MAX);
  FUZZ_CHECK(t->log_frequency >= 0 && t->log_frequency <= UINT32_MAX);
  FUZZ_CHECK(strcmp(t->file, "") == 0);
  FUZZ_CHECK(strcmp(t->mode, "triton") == 0);
}

/* What GET reads for every ready name, through the view `http` picks. */
static void trace_read_all(srv_server_t *srv, bool http, trace_seen_t seen[READY_COUNT]) {
  for (size_t i = 0; i < READY_COUNT; i++) {
    upb_StringView model = upb_StringView_FromString(kNames[i]);
    if (http) {
      srv_http_answer_t ans;
      srv_http_trace_setting(srv, model, NULL, 0, &ans);
      FUZZ_CHECK(ans.status == NULL && ans.code == 200);
      trace_seen_of_json(ans.body, ans.len, &seen[i]);
      srv_http_answer_free(&ans);
    } else {
      upb_Arena *a = upb_Arena_New();
      inference_TraceSettingResponse *m = NULL;
      FUZZ_CHECK(srv_view_trace_setting(srv, model, NULL, 0, a, &m) == NULL);
      trace_seen_of_response(m, &seen[i]);
      upb_Arena_Free(a);
    }
    trace_bounds_check(&seen[i]);
  }
}

static int name_index(upb_StringView model) {
  for (int i = 0; i < NAME_COUNT; i++)
    if (model.size == strlen(kNames[i]) &&
        (model.size == 0 || memcmp(model.data, kNames[i], model.size) == 0))
      return i;
  return -1;
}

static void trace_refusal_check(grpc_status_code code) {
  FUZZ_CHECK(code == GRPC_STATUS_INVALID_ARGUMENT || code == GRPC_STATUS_UNIMPLEMENTED ||
             code == GRPC_STATUS_RESOURCE_EXHAUSTED);
}

/* An HTTP error answer: the code of its status, {"error": "<message>"}. */
static void http_refusal_check(srv_http_answer_t *ans) {
  FUZZ_CHECK(ans->status != NULL);
  FUZZ_CHECK(ans->code == srv_http_status_code(ans->status) && ans->code >= 400);
  json_t *o = json_loadb(ans->body, ans->len, 0, NULL);
  FUZZ_CHECK(json_is_object(o) && json_is_string(json_object_get(o, "error")));
  FUZZ_CHECK(strcmp(json_string_value(json_object_get(o, "error")),
                    srv_status_message(ans->status)) == 0);
  json_decref(o);
}

static void trace_grpc_run(srv_server_t *srv, const char *body, size_t len) {
  upb_Arena *a = upb_Arena_New();
  inference_TraceSettingRequest *req = inference_TraceSettingRequest_new(a);
  FUZZ_CHECK(req != NULL);
  if (upb_Decode(body, len, req, &inference_TraceSettingRequest_msginit, NULL,
                 kUpb_DecodeOption_AliasString, a) != kUpb_DecodeStatus_Ok) {
    upb_Arena_Free(a);
    return;
  }
  /* As srv_rpc_trace_setting takes them. */
  size_t count;
  srv_view_trace_item_t *items = srv_view_trace_items(req, a, &count);
  upb_StringView model = inference_TraceSettingRequest_model_name(req);
  trace_seen_t before[READY_COUNT], after[READY_COUNT];
  trace_read_all(srv, false, before);
  inference_TraceSettingResponse *m = NULL;
  srv_status_t *st = srv_view_trace_setting(srv, model, items, count, a, &m);
  trace_read_all(srv, false, after);
  if (st != NULL) {
    FUZZ_CHECK(m == NULL);
    trace_refusal_check(srv_status_code(st));
    fuzz_status_check(st, NULL);
    FUZZ_CHECK(memcmp(before, after, sizeof before) == 0);
  } else {
    int i = name_index(model);
    FUZZ_CHECK(i >= 0 && i < READY_COUNT); /* only ready models are answered */
    trace_seen_t answer;
    trace_seen_of_response(m, &answer);
    FUZZ_CHECK(memcmp(&answer, &after[i], sizeof answer) == 0);
  }
  upb_Arena_Free(a);
}

static void trace_http_run(srv_server_t *srv, int name, const char *body, size_t len) {
  upb_StringView model = upb_StringView_FromString(kNames[name]);
  trace_seen_t before[READY_COUNT], after[READY_COUNT];
  trace_read_all(srv, true, before);
  srv_http_answer_t ans;
  srv_http_trace_setting(srv, model, body, len, &ans);
  trace_read_all(srv, true, after);
  if (ans.status != NULL) {
    trace_refusal_check(srv_status_code(ans.status));
    http_refusal_check(&ans);
    FUZZ_CHECK(memcmp(before, after, sizeof before) == 0);
  } else {
    FUZZ_CHECK(ans.code == 200 && name < READY_COUNT);
    trace_seen_t answer;
    trace_seen_of_json(ans.body, ans.len, &answer);
    FUZZ_CHECK(memcmp(&answer, &after[name], sizeof answer) == 0);
  }
  srv_http_answer_free(&ans);
}

/* ---- log settings -------------------------------------------------------- */

static void log_bounds_check(const srv_log_settings_t *s,
                             const srv_log_settings_t *start) {
  FUZZ_CHECK(strcmp(s->file, start->file) == 0); /* never from the network */
  FUZZ_CHECK(s->verbose >= 0);
  FUZZ_CHECK(s->format == SRV_LOG_FORMAT_DEFAULT || s->format == SRV_LOG_FORMAT_ISO8601);
}

static bool log_same(const srv_log_settings_t *x, const srv_log_settings_t *y) {
  return strcmp(x->file, y->file) == 0 && x->info == y->info &&
         x->warning == y->warning && x->error == y->error && x->verbose == y->verbose &&
         x->format == y->format;
}

/* A LogSettingsResponse read as settings (every one of the six there). */
static void log_of_response(const inference_LogSettingsResponse *m,
                            srv_log_settings_t *out) {
  memset(out, 0, sizeof *out);
  FUZZ_CHECK(inference_LogSettingsResponse_settings_size(m) == SRV_LOG_SETTING_COUNT);
  inference_LogSettingsResponse_SettingValue *v[SRV_LOG_SETTING_COUNT];
  for (int i = 0; i < SRV_LOG_SETTING_COUNT; i++)
    FUZZ_CHECK(inference_LogSettingsResponse_settings_get(
        m, upb_StringView_FromString(srv_log_setting_names[i]), &v[i]));
  upb_StringView s = inference_LogSettingsResponse_SettingValue_string_param(v[0]);
  copy_text(out->file, sizeof out->file, s.data, s.size);
  out->info = inference_LogSettingsResponse_SettingValue_bool_param(v[1]);
  out->warning = inference_LogSettingsResponse_SettingValue_bool_param(v[2]);
  out->error = inference_LogSettingsResponse_SettingValue_bool_param(v[3]);
  uint32_t level = inference_LogSettingsResponse_SettingValue_uint32_param(v[4]);
  FUZZ_CHECK(level <= INT32_MAX);
  out->verbose = (int)level;
  s = inference_LogSettingsResponse_SettingValue_string_param(v[5]);
  if (s.size == 7 && memcmp(s.data, "default", 7) == 0)
    out->format = SRV_LOG_FORMAT_DEFAULT;
  else if (s.size == 7 && memcmp(s.data, "ISO8601", 7) == 0)
    out->format = SRV_LOG_FORMAT_ISO8601;
  else
    FUZZ_CHECK(!"log_format is default or ISO8601");
}

static void log_of_json(const char *body, size_t len, srv_log_settings_t *out) {
  memset(out, 0, sizeof *out);
  json_t *o = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
  FUZZ_CHECK(json_is_object(o) && json_object_size(o) == SRV_LOG_SETTING_COUNT);
  const char *f = json_text_of(o, "log_file");
  copy_text(out->file, sizeof out->file, f, strlen(f));
  json_t *b[3];
  for (int i = 0; i < 3; i++) {
    b[i] = json_object_get(o, srv_log_setting_names[1 + i]);
    FUZZ_CHECK(json_is_boolean(b[i]));
  }
  out->info = json_is_true(b[0]);
  out->warning = json_is_true(b[1]);
  out->error = json_is_true(b[2]);
  json_t *lv = json_object_get(o, "log_verbose_level");
  FUZZ_CHECK(json_is_integer(lv) && json_integer_value(lv) >= 0 &&
             json_integer_value(lv) <= INT32_MAX);
  out->verbose = (int)json_integer_value(lv);
  const char *fm = json_text_of(o, "log_format");
  if (strcmp(fm, "default") == 0)
    out->format = SRV_LOG_FORMAT_DEFAULT;
  else if (strcmp(fm, "ISO8601") == 0)
    out->format = SRV_LOG_FORMAT_ISO8601;
  else
    FUZZ_CHECK(!"log_format is default or ISO8601");
  json_decref(o);
}

static void log_grpc_run(const srv_log_settings_t *start, const char *body, size_t len) {
  upb_Arena *a = upb_Arena_New();
  inference_LogSettingsRequest *req = inference_LogSettingsRequest_new(a);
  FUZZ_CHECK(req != NULL);
  if (upb_Decode(body, len, req, &inference_LogSettingsRequest_msginit, NULL,
                 kUpb_DecodeOption_AliasString, a) == kUpb_DecodeStatus_Ok) {
    inference_LogSettingsResponse *m = NULL;
    /* Read back through the same view: a request with no settings. */
    inference_LogSettingsRequest *none = inference_LogSettingsRequest_new(a);
    srv_log_settings_t before, after, answer;
    FUZZ_CHECK(srv_view_log_settings(none, a, &m) == NULL);
    log_of_response(m, &before);
    srv_status_t *st = srv_view_log_settings(req, a, &m);
    if (st != NULL) {
      FUZZ_CHECK(m == NULL);
      grpc_status_code code = srv_status_code(st);
      FUZZ_CHECK(code == GRPC_STATUS_INVALID_ARGUMENT ||
                 code == GRPC_STATUS_UNIMPLEMENTED);
      fuzz_status_check(st, NULL);
    } else {
      log_of_response(m, &answer);
    }
    FUZZ_CHECK(srv_view_log_settings(none, a, &m) == NULL);
    log_of_response(m, &after);
    log_bounds_check(&after, start);
    if (st != NULL)
      FUZZ_CHECK(log_same(&before, &after));
    else
      FUZZ_CHECK(log_same(&answer, &after));
  }
  upb_Arena_Free(a);
}

static void log_http_run(const srv_log_settings_t *start, const char *body, size_t len) {
  srv_http_answer_t get, ans;
  srv_log_settings_t before, after, answer;
  srv_http_logging(false, NULL, 0, &get);
  FUZZ_CHECK(get.status == NULL && get.code == 200);
  log_of_json(get.body, get.len, &before);
  srv_http_answer_free(&get);
  srv_http_logging(true, body, len, &ans);
  srv_http_logging(false, NULL, 0, &get);
  FUZZ_CHECK(get.status == NULL && get.code == 200);
  log_of_json(get.body, get.len, &after);
  srv_http_answer_free(&get);
  log_bounds_check(&after, start);
  if (ans.status != NULL) {
    grpc_status_code code = srv_status_code(ans.status);
    FUZZ_CHECK(code == GRPC_STATUS_INVALID_ARGUMENT || code == GRPC_STATUS_UNIMPLEMENTED);
    http_refusal_check(&ans);
    FUZZ_CHECK(log_same(&before, &after));
  } else {
    FUZZ_CHECK(ans.code == 200);
    log_of_json(ans.body, ans.len, &answer);
    FUZZ_CHECK(log_same(&answer, &after));
  }
  srv_http_answer_free(&ans);
}

/* The process's log settings as they were before the first input. */
static void log_reset(srv_log_settings_t *start) {
  static bool taken;
  static srv_log_settings_t first;
  if (!taken) {
    srv_log_settings_read(&first);
    taken = true;
  }
  srv_log_set_info(first.info);
  srv_log_set_warning(first.warning);
  srv_log_set_error(first.error);
  srv_log_set_verbose(first.verbose);
  srv_log_set_format(first.format);
  *start = first;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  srv_server_t *srv = server_get();
  srv_log_settings_t start;
  log_reset(&start);
  /* Triton's defaults, no file: no writer thread, nothing written. */
  srv_trace_config_t c = {.level = 0, .rate = 1000, .count = -1, .log_frequency = 0};
  FUZZ_CHECK(srv_tracer_new(&c, &srv->tracer) == NULL);
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  switch (data[0] % 4) {
    case 0:
      trace_grpc_run(srv, body, len);
      break;
    case 1:
      trace_http_run(srv, data[0] / 4 % NAME_COUNT, body, len);
      break;
    case 2:
      log_grpc_run(&start, body, len);
      break;
    default:
      log_http_run(&start, body, len);
      break;
  }
  srv_tracer_free(srv->tracer);
  srv->tracer = NULL;
  return 0;
}
