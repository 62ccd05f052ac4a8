/* GET/POST /v2[/models/{m}]/trace/setting (http_views.h): the request's
 * JSON settings to srv_view_trace_setting's items, its message back to
 * Triton's JSON (trace_level an array, every other setting a string). Any
 * thread. */
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/views/http_body.h"
#include "server/views/http_views.h"
#include "server/views/json.h"
#include "server/views/views.h"

static upb_StringView view_of_json(const json_t *s) {
  return upb_StringView_FromDataAndSize(json_string_value(s), json_string_length(s));
}

/* One member of the body as an item; values live in `a`. */
static srv_status_t *item_of(const char *key, json_t *v, upb_Arena *a,
                             srv_view_trace_item_t *item) {
  item->name = upb_StringView_FromString(key);
  item->count = 0;
  if (json_is_null(v)) return NULL;
  size_t n = json_is_array(v) ? json_array_size(v) : 1;
  bool ok = json_is_string(v) || (json_is_array(v) && n <= SRV_VIEW_TRACE_VALUES_MAX);
  upb_StringView *values = upb_Arena_Malloc(a, (n ? n : 1) * sizeof *values);
  if (values == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; ok && i < n; i++) {
    json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
    ok = json_is_string(e);
    if (ok) values[i] = view_of_json(e);
  }
  if (!ok)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "trace setting '%.64s' expects a string, an array of at most "
                          "%d strings, or null",
                          key, SRV_VIEW_TRACE_VALUES_MAX);
  item->values = values;
  item->count = n;
  return NULL;
}

static srv_status_t *items_of(const char *body, size_t len, upb_Arena *a,
                              srv_view_trace_item_t **items, size_t *count) {
  json_t *o = NULL;
  srv_status_t *st = srv_http_body_parse(body, len, &o);
  *items = NULL;
  *count = 0;
  if (st != NULL || o == NULL) return st;
  /* One past the limit is enough for the view to refuse the rest. */
  size_t n = json_object_size(o);
  if (n > SRV_VIEW_TRACE_SETTINGS_MAX) n = SRV_VIEW_TRACE_SETTINGS_MAX + 1;
  *items = upb_Arena_Malloc(a, (n ? n : 1) * sizeof **items);
  if (*items == NULL) SRV_FATAL("out of memory");
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    if (*count == n) break;
    /* Keys and strings must outlive the JSON: copied into the arena. */
    st = item_of(srv_arena_strview(a, upb_StringView_FromString(key)), v, a,
                 &(*items)[*count]);
    if (st != NULL) break;
    srv_view_trace_item_t *it = &(*items)[(*count)++];
    for (size_t i = 0; i < it->count; i++) {
      upb_StringView *s = (upb_StringView *)&it->values[i];
      *s = upb_StringView_FromDataAndSize(srv_arena_copy(a, s->data, s->size), s->size);
    }
  }
  json_decref(o);
  return st;
}

/* Triton's JSON of the answer. */
static json_t *settings_json(const inference_TraceSettingResponse *m) {
  static const char *const keys[] = {"trace_level",   "trace_rate", "trace_count",
                                     "log_frequency", "trace_file", "trace_mode"};
  json_t *o = json_object();
  if (o == NULL) SRV_FATAL("out of memory");
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    inference_TraceSettingResponse_SettingValue *v;
    if (!inference_TraceSettingResponse_settings_get(
            m, upb_StringView_FromString(keys[k]), &v))
      continue;
    size_t n;
    const upb_StringView *values =
        inference_TraceSettingResponse_SettingValue_value(v, &n);
    json_t *j = k == 0 ? json_array()
                       : srv_json_string(n ? values[0] : upb_StringView_FromString(""));
    for (size_t i = 0; k == 0 && i < n; i++)
      json_array_append_new(j, srv_json_string(values[i]));
    if (j == NULL || json_object_set_new(o, keys[k], j) != 0) SRV_FATAL("out of memory");
  }
  return o;
}

void srv_http_trace_setting(srv_server_t *srv, upb_StringView model, const char *body,
                            size_t len, srv_http_answer_t *out) {
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  srv_view_trace_item_t *items;
  size_t count;
  inference_TraceSettingResponse *m = NULL;
  srv_status_t *st = items_of(body, len, a, &items, &count);
  if (st == NULL) st = srv_view_trace_setting(srv, model, items, count, a, &m);
  *out = (srv_http_answer_t){.code = srv_http_status_code(st), .status = st};
  if (st != NULL) {
    out->body = srv_http_status_body(st, &out->len);
  } else {
    json_t *j = settings_json(m);
    out->body = srv_json_text(j, &out->len);
    json_decref(j);
  }
  upb_Arena_Free(a);
}
