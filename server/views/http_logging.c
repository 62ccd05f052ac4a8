/* GET and POST /v2/logging (see http_views.h): the body read with Triton's
 * texts (TritonJson's "attempt to access JSON non-boolean as boolean" for a
 * value of the wrong kind), checked whole, applied through log_view.h, and
 * every setting answered in Triton's key order. Any thread. */
#include "server/views/http_views.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/views/http_body.h"
#include "server/views/json.h"
#include "server/views/log_view.h"

/* The value of `name`, or NULL when absent or null (Triton skips both). */
static json_t *member(json_t *body, const char *name) {
  json_t *v = body != NULL ? json_object_get(body, name) : NULL;
  return json_is_null(v) ? NULL : v;
}

static srv_status_t *wrong_kind(const char *what) {
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "attempt to access JSON non-%s as %s",
                        what, what);
}

static srv_status_t *read_bool(json_t *body, const char *name, bool *set, bool *value) {
  json_t *v = member(body, name);
  if (v == NULL) return NULL;
  if (!json_is_boolean(v)) return wrong_kind("boolean");
  *set = true;
  *value = json_is_true(v);
  return NULL;
}

static srv_status_t *read_body(json_t *body, srv_log_update_t *u) {
  json_t *v = member(body, "log_file");
  if (v != NULL && !json_is_string(v)) return wrong_kind("string");
  u->set_file = v != NULL;
  srv_status_t *st = read_bool(body, "log_info", &u->set_info, &u->info);
  if (st == NULL) st = read_bool(body, "log_warning", &u->set_warning, &u->warning);
  if (st == NULL) st = read_bool(body, "log_error", &u->set_error, &u->error);
  if (st != NULL) return st;
  v = member(body, "log_verbose_level");
  if (v != NULL) {
    /* jansson's integers are signed: a negative one is not unsigned. */
    if (!json_is_integer(v) || json_integer_value(v) < 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "attempt to access JSON non-unsigned-integer as "
                            "unsigned-integer");
    st = srv_log_update_verbose(u, (uint64_t)json_integer_value(v));
    if (st != NULL) return st;
  }
  v = member(body, "log_format");
  if (v == NULL) return NULL;
  if (!json_is_string(v)) return wrong_kind("string");
  return srv_log_update_format(
      u, upb_StringView_FromDataAndSize(json_string_value(v), json_string_length(v)),
      "--log_format");
}

static json_t *settings_json(void) {
  srv_log_settings_t now;
  srv_log_settings_read(&now);
  json_t *o = json_object();
  json_t *file = json_string(now.file);
  if (file == NULL) file = srv_json_string(upb_StringView_FromString(now.file));
  json_t *values[SRV_LOG_SETTING_COUNT] = {
      file,
      json_boolean(now.info),
      json_boolean(now.warning),
      json_boolean(now.error),
      json_integer(now.verbose),
      json_string(srv_log_format_name(now.format)),
  };
  for (int i = 0; i < SRV_LOG_SETTING_COUNT; i++) {
    if (o == NULL || values[i] == NULL ||
        json_object_set_new_nocheck(o, srv_log_setting_names[i], values[i]) != 0)
      SRV_FATAL("out of memory");
  }
  return o;
}

void srv_http_logging(bool update, const char *body, size_t len, srv_http_answer_t *out) {
  srv_status_t *st = NULL;
  if (update && len > SRV_HTTP_LOGGING_BODY_MAX) {
    st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "log settings body is %zu bytes, more than %u", len,
                        SRV_HTTP_LOGGING_BODY_MAX);
  } else if (update) {
    json_t *j = NULL;
    srv_log_update_t u = {0};
    st = srv_http_body_parse(body, len, &j);
    if (st == NULL) st = read_body(j, &u);
    json_decref(j);
    if (st == NULL) st = srv_log_update_apply(&u);
  }
  *out = (srv_http_answer_t){.code = srv_http_status_code(st), .status = st};
  if (st != NULL) {
    out->body = srv_http_status_body(st, &out->len);
    return;
  }
  json_t *o = settings_json();
  out->body = srv_json_text(o, &out->len);
  json_decref(o);
}
