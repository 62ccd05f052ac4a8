/* The TraceSetting body (views.h), for both frontends: a request's
 * settings applied to the tracer (server/trace), then every setting in
 * force as a TraceSettingResponse. Any thread. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/views/model_lookup.h"
#include "server/views/views.h"

static void setting_add(inference_TraceSettingResponse *m, const char *key,
                        const char *const *values, size_t n, upb_Arena *a) {
  inference_TraceSettingResponse_SettingValue *v =
      inference_TraceSettingResponse_SettingValue_new(a);
  if (v == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    const char *copy = srv_arena_strview(a, upb_StringView_FromString(values[i]));
    if (!inference_TraceSettingResponse_SettingValue_add_value(
            v, upb_StringView_FromString(copy), a))
      SRV_FATAL("out of memory");
  }
  if (!inference_TraceSettingResponse_settings_set(m, upb_StringView_FromString(key), v,
                                                   a))
    SRV_FATAL("out of memory");
}

static void number_add(inference_TraceSettingResponse *m, const char *key, int64_t n,
                       upb_Arena *a) {
  char text[24];
  snprintf(text, sizeof text, "%" PRId64, n);
  const char *one = text;
  setting_add(m, key, &one, 1, a);
}

/* Every setting in force, with Triton's names and text. */
static inference_TraceSettingResponse *settings_message(const srv_trace_view_t *v,
                                                        upb_Arena *a) {
  inference_TraceSettingResponse *m = inference_TraceSettingResponse_new(a);
  if (m == NULL) SRV_FATAL("out of memory");
  const char *levels[2];
  size_t n = 0;
  if (v->level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS) levels[n++] = "TIMESTAMPS";
  if (v->level & TRITONSERVER_TRACE_LEVEL_TENSORS) levels[n++] = "TENSORS";
  if (n == 0) levels[n++] = "OFF";
  setting_add(m, "trace_level", levels, n, a);
  number_add(m, "trace_rate", v->rate, a);
  number_add(m, "trace_count", v->count, a);
  number_add(m, "log_frequency", v->log_frequency, a);
  setting_add(m, "trace_file", &v->file, 1, a);
  const char *mode = "triton";
  setting_add(m, "trace_mode", &mode, 1, a);
  return m;
}

srv_view_trace_item_t *srv_view_trace_items(const inference_TraceSettingRequest *req,
                                            upb_Arena *a, size_t *count) {
  size_t n = inference_TraceSettingRequest_settings_size(req), iter = kUpb_Map_Begin;
  /* Bounded before the items are sized (views.h says why). */
  if (n > SRV_VIEW_TRACE_SETTINGS_MAX) n = SRV_VIEW_TRACE_SETTINGS_MAX + 1;
  srv_view_trace_item_t *items = upb_Arena_Malloc(a, (n ? n : 1) * sizeof *items);
  if (items == NULL) SRV_FATAL("out of memory");
  const inference_TraceSettingRequest_SettingsEntry *e;
  *count = 0;
  while (*count < n &&
         (e = inference_TraceSettingRequest_settings_next(req, &iter)) != NULL) {
    const inference_TraceSettingRequest_SettingValue *v =
        inference_TraceSettingRequest_SettingsEntry_value(e);
    srv_view_trace_item_t *it = &items[(*count)++];
    it->name = inference_TraceSettingRequest_SettingsEntry_key(e);
    it->values = v != NULL
                     ? inference_TraceSettingRequest_SettingValue_value(v, &it->count)
                     : NULL;
    if (v == NULL) it->count = 0;
  }
  return items;
}

srv_status_t *srv_view_trace_setting(srv_server_t *srv, upb_StringView model,
                                     const srv_view_trace_item_t *items, size_t count,
                                     upb_Arena *a, inference_TraceSettingResponse **out) {
  *out = NULL;
  if (count > SRV_VIEW_TRACE_SETTINGS_MAX)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "trace setting request has more than %d settings, the limit",
                          SRV_VIEW_TRACE_SETTINGS_MAX);
  for (size_t i = 0; i < count; i++)
    if (items[i].count > SRV_VIEW_TRACE_VALUES_MAX)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "trace setting '%.64s' has %zu values, above the limit of %d",
                            srv_arena_strview(a, items[i].name), items[i].count,
                            SRV_VIEW_TRACE_VALUES_MAX);
  const char *name = NULL;
  if (model.size > 0) {
    /* Triton's check and text: a model with a ready version. */
    srv_model_t *m = NULL;
    srv_status_t *st = srv_model_lookup(srv, model, upb_StringView_FromString(""), &m);
    if (st != NULL) {
      srv_status_free(st);
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "Request for unknown model : %.*s", (int)model.size,
                            model.data);
    }
    srv_model_unref(m);
    name = srv_arena_strview(a, model);
  }
  srv_trace_update_t u = {0};
  for (size_t i = 0; i < count; i++) {
    srv_status_t *st =
        srv_trace_update_parse(&u, items[i].name, items[i].values, items[i].count);
    if (st != NULL) return st;
  }
  if (count > 0) {
    srv_status_t *st = srv_tracer_update(srv->tracer, name, &u);
    if (st != NULL) return st;
  }
  srv_trace_view_t v;
  srv_tracer_get(srv->tracer, name, &v);
  *out = settings_message(&v, a);
  return NULL;
}
