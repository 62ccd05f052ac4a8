/* Log settings as the LogSettings RPC and /v2/logging read and change them
 * (see log_view.h): an update is read whole and checked before any of it is
 * applied, so a refused request changed nothing. The settings themselves
 * are the server log's atomics (server/common/log.h); two requests racing
 * each apply whole settings, the last store of each winning. Any thread. */
#include "server/views/log_view.h"

#include <limits.h>
#include <string.h>

#include "server/common/log.h"

const char *const srv_log_setting_names[SRV_LOG_SETTING_COUNT] = {
    "log_file", "log_info", "log_warning", "log_error", "log_verbose_level", "log_format"};

srv_status_t *srv_log_update_verbose(srv_log_update_t *u, uint64_t level) {
  if (level > INT_MAX) {
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "log_verbose_level must be at most %d, got %llu", INT_MAX,
                          (unsigned long long)level);
  }
  u->set_verbose = true;
  u->verbose = (int)level;
  return NULL;
}

srv_status_t *srv_log_update_format(srv_log_update_t *u, upb_StringView name,
                                    const char *flag) {
  char q[SRV_QUOTE_SIZE];
  srv_quote(q, name.data, name.size);
  /* A NUL inside the name would pass a C comparison of the quote. */
  if (memchr(name.data, '\0', name.size) != NULL || !srv_log_format_parse(q, &u->format)) {
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid argument for %s, got: %s", flag, q);
  }
  u->set_format = true;
  return NULL;
}

srv_status_t *srv_log_update_apply(const srv_log_update_t *u) {
  /* Triton's answer since it stopped letting the network choose where the
   * server writes (a client could otherwise make it append to any file). */
  if (u->set_file) {
    return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                          "log file location can not be updated through network "
                          "protocol");
  }
  if (u->set_info) srv_log_set_info(u->info);
  if (u->set_warning) srv_log_set_warning(u->warning);
  if (u->set_error) srv_log_set_error(u->error);
  if (u->set_verbose) srv_log_set_verbose(u->verbose);
  if (u->set_format) srv_log_set_format(u->format);
  return NULL;
}

/* ---- gRPC --------------------------------------------------------------- */

typedef inference_LogSettingsRequest_SettingValue request_value_t;

/* The value of `name` in the request, or NULL when absent; *present tells
 * a key sent with no value (NOT_SET) from a missing key. */
static const request_value_t *find(const inference_LogSettingsRequest *req,
                                   const char *name, bool *present) {
  request_value_t *v = NULL;
  *present = inference_LogSettingsRequest_settings_get(req, upb_StringView_FromString(name),
                                                       &v);
  return v;
}

static int choice(const request_value_t *v) {
  return v == NULL ? 0 : (int)inference_LogSettingsRequest_SettingValue_parameter_choice_case(v);
}

/* Triton's texts: "expect boolean for 'log_info'" and the like. */
static srv_status_t *expect(const char *type, const char *name) {
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "expect %s for '%s'", type, name);
}

static srv_status_t *read_bool(const inference_LogSettingsRequest *req, const char *name,
                               bool *set, bool *value) {
  bool present;
  const request_value_t *v = find(req, name, &present);
  if (!present) return NULL;
  if (choice(v) != inference_LogSettingsRequest_SettingValue_parameter_choice_bool_param)
    return expect("boolean", name);
  *set = true;
  *value = inference_LogSettingsRequest_SettingValue_bool_param(v);
  return NULL;
}

/* Reads a string setting into *s; false (and *st NULL) when absent. */
static bool read_string(const inference_LogSettingsRequest *req, const char *name,
                        upb_StringView *s, srv_status_t **st) {
  bool present;
  const request_value_t *v = find(req, name, &present);
  *st = NULL;
  if (!present) return false;
  if (choice(v) != inference_LogSettingsRequest_SettingValue_parameter_choice_string_param) {
    *st = expect("string", name);
    return false;
  }
  *s = inference_LogSettingsRequest_SettingValue_string_param(v);
  return true;
}

static srv_status_t *read_request(const inference_LogSettingsRequest *req,
                                  srv_log_update_t *u) {
  upb_StringView s;
  srv_status_t *st = NULL;
  if (read_string(req, "log_file", &s, &st)) u->set_file = true;
  if (st == NULL) st = read_bool(req, "log_info", &u->set_info, &u->info);
  if (st == NULL) st = read_bool(req, "log_warning", &u->set_warning, &u->warning);
  if (st == NULL) st = read_bool(req, "log_error", &u->set_error, &u->error);
  if (st != NULL) return st;
  bool present;
  const request_value_t *v = find(req, "log_verbose_level", &present);
  if (present) {
    if (choice(v) != inference_LogSettingsRequest_SettingValue_parameter_choice_uint32_param)
      return expect("int32", "log_verbose_level");
    st = srv_log_update_verbose(u, inference_LogSettingsRequest_SettingValue_uint32_param(v));
    if (st != NULL) return st;
  }
  if (read_string(req, "log_format", &s, &st))
    st = srv_log_update_format(u, s, "log_format");
  return st;
}

static void set_value(inference_LogSettingsResponse *reply, const char *name,
                      inference_LogSettingsResponse_SettingValue *v, upb_Arena *a) {
  if (!inference_LogSettingsResponse_settings_set(reply, upb_StringView_FromString(name), v,
                                                  a))
    SRV_FATAL("out of memory");
}

static inference_LogSettingsResponse_SettingValue *new_value(upb_Arena *a) {
  inference_LogSettingsResponse_SettingValue *v =
      inference_LogSettingsResponse_SettingValue_new(a);
  if (v == NULL) SRV_FATAL("out of memory");
  return v;
}

static void reply_settings(inference_LogSettingsResponse *reply, upb_Arena *a) {
  srv_log_settings_t now;
  srv_log_settings_read(&now);
  size_t len = strlen(now.file);
  char *file = upb_Arena_Malloc(a, len + 1);
  if (file == NULL) SRV_FATAL("out of memory");
  memcpy(file, now.file, len + 1);
  inference_LogSettingsResponse_SettingValue *v = new_value(a);
  inference_LogSettingsResponse_SettingValue_set_string_param(
      v, upb_StringView_FromDataAndSize(file, len));
  set_value(reply, "log_file", v, a);
  const bool flags[] = {now.info, now.warning, now.error};
  for (int i = 0; i < 3; i++) {
    v = new_value(a);
    inference_LogSettingsResponse_SettingValue_set_bool_param(v, flags[i]);
    set_value(reply, srv_log_setting_names[1 + i], v, a);
  }
  v = new_value(a);
  inference_LogSettingsResponse_SettingValue_set_uint32_param(v, (uint32_t)now.verbose);
  set_value(reply, "log_verbose_level", v, a);
  v = new_value(a);
  inference_LogSettingsResponse_SettingValue_set_string_param(
      v, upb_StringView_FromString(srv_log_format_name(now.format)));
  set_value(reply, "log_format", v, a);
}

srv_status_t *srv_view_log_settings(const inference_LogSettingsRequest *req, upb_Arena *a,
                                    inference_LogSettingsResponse **out) {
  *out = NULL;
  srv_log_update_t u = {0};
  srv_status_t *st = read_request(req, &u);
  if (st == NULL) st = srv_log_update_apply(&u);
  if (st != NULL) return st;
  inference_LogSettingsResponse *reply = inference_LogSettingsResponse_new(a);
  if (reply == NULL) SRV_FATAL("out of memory");
  reply_settings(reply, a);
  *out = reply;
  return NULL;
}

void srv_log_settings_read(srv_log_settings_t *out) {
  srv_log_file(out->file, sizeof out->file);
  out->info = srv_log_is_on(SRV_LOG_INFO);
  out->warning = srv_log_is_on(SRV_LOG_WARNING);
  out->error = srv_log_is_on(SRV_LOG_ERROR);
  out->verbose = srv_log_verbose_level();
  out->format = srv_log_format();
}
