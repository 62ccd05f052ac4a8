/* The tracing flags (see trace_config.h). Main thread, at start-up. */
#include "server/trace/trace_config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/common/memory.h"
#include "triton/core/tritonserver.h"

bool srv_trace_level_parse(const char *s, uint32_t *level) {
  static const char *const off[] = {"off", "false"};
  static const char *const stamps[] = {"timestamps", "true", "on", "min", "max"};
  *level = TRITONSERVER_TRACE_LEVEL_DISABLED;
  for (size_t i = 0; i < 2; i++)
    if (strcasecmp(s, off[i]) == 0) return true;
  *level = TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
  for (size_t i = 0; i < 5; i++)
    if (strcasecmp(s, stamps[i]) == 0) return true;
  *level = TRITONSERVER_TRACE_LEVEL_TENSORS;
  return strcasecmp(s, "tensors") == 0;
}

/* A decimal integer in [min, max], nothing else. */
static bool int_parse(const char *s, long long min, long long max, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

srv_status_t *srv_trace_file_check(const char *path) {
  size_t n = strlen(path);
  if (n == 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "trace file name is empty");
  /* Room for the ".<index>" suffix of log_frequency's files. */
  if (n + 12 >= PATH_MAX)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "trace file name is %zu bytes, above the limit of %d", n,
                          PATH_MAX - 12);
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "trace file '%s' exists and is not a regular file", path);
  char *dir = srv_strdup(path);
  char *slash = strrchr(dir, '/');
  const char *folder = slash == NULL ? "." : slash == dir ? "/" : (*slash = '\0', dir);
  srv_status_t *bad = NULL;
  if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode))
    bad = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                         "trace file '%s': folder '%s' does not exist", path, folder);
  else if (access(folder, W_OK | X_OK) != 0)
    bad = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                         "trace file '%s': folder '%s' is not writable: %s", path, folder,
                         strerror(errno));
  free(dir);
  return bad;
}

static srv_status_t *bad_value(const char *flag, const char *key, const char *value,
                               const char *want) {
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "--%s %s: expects %s, got '%s'",
                        flag, key, want, value);
}

/* One setting, whichever flag gave it. `levels_seen` tells the first
 * level setting (which replaces the default) from the next (which add). */
static srv_status_t *setting_apply(srv_trace_config_t *c, const char *flag,
                                   const char *key, const char *value, bool *levels_seen,
                                   bool *level_off) {
  long long v;
  if (strcmp(key, "level") == 0) {
    uint32_t l;
    if (!srv_trace_level_parse(value, &l))
      return bad_value(flag, key, value, "OFF, TIMESTAMPS or TENSORS");
    if (!*levels_seen) c->level = 0;
    *levels_seen = true;
    c->level |= l;
    if (l == 0) *level_off = true;
  } else if (strcmp(key, "rate") == 0) {
    if (!int_parse(value, 1, INT32_MAX, &v))
      return bad_value(flag, key, value, "an integer in [1, 2147483647]");
    c->rate = (uint32_t)v;
  } else if (strcmp(key, "count") == 0) {
    if (!int_parse(value, -1, INT32_MAX, &v))
      return bad_value(flag, key, value, "an integer in [-1, 2147483647]");
    c->count = (int32_t)v;
  } else if (strcmp(key, "log-frequency") == 0) {
    if (!int_parse(value, 0, INT32_MAX, &v))
      return bad_value(flag, key, value, "an integer in [0, 2147483647]");
    c->log_frequency = (uint32_t)v;
  } else if (strcmp(key, "file") == 0) {
    srv_status_t *st = srv_trace_file_check(value);
    if (st != NULL) {
      srv_status_t *bad = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "--%s: %s", flag,
                                         srv_status_message(st));
      srv_status_free(st);
      return bad;
    }
    free(c->file);
    c->file = srv_strdup(value);
  } else if (strcmp(key, "mode") == 0) {
    if (strcasecmp(value, "triton") != 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            strcasecmp(value, "opentelemetry") == 0
                                ? "--%s mode=%s: Nereid has no OpenTelemetry exporter; "
                                  "only mode triton (the JSON trace file) is built"
                                : "--%s mode: expects triton or opentelemetry, got '%s'",
                            flag, value);
  } else {
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "--%s: unknown setting '%s'",
                          flag, key);
  }
  return NULL;
}

/* "[mode,]key=value": Triton's split, the first comma before the first '='. */
static srv_status_t *config_apply(srv_trace_config_t *c, const char *arg,
                                  bool *levels_seen, bool *level_off) {
  const char *eq = strchr(arg, '=');
  const char *comma = strchr(arg, ',');
  if (comma != NULL && eq != NULL && comma > eq) comma = NULL;
  if (eq == NULL || eq[1] == '\0' || eq == (comma ? comma + 1 : arg))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--trace-config expects [<mode>,]<setting>=<value>, got '%s'",
                          arg);
  const char *key_at = arg;
  if (comma != NULL) {
    size_t mode_len = (size_t)(comma - arg);
    bool triton = mode_len == 6 && strncasecmp(arg, "triton", 6) == 0;
    bool otel = mode_len == 13 && strncasecmp(arg, "opentelemetry", 13) == 0;
    if (otel)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--trace-config %s: Nereid has no OpenTelemetry exporter; "
                            "only mode triton (the JSON trace file) is built",
                            arg);
    if (!triton)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--trace-config %s: unknown trace mode '%.*s' (triton or "
                            "opentelemetry)",
                            arg, (int)mode_len, arg);
    key_at = comma + 1;
  }
  char *key = srv_strndup(key_at, (size_t)(eq - key_at));
  /* Triton keeps file and log-frequency under "triton," and ignores keys
   * in the other section; both places are taken here, for every key. */
  srv_status_t *st =
      setting_apply(c, "trace-config", key, eq + 1, levels_seen, level_off);
  free(key);
  return st;
}

/* The older flags, which --trace-config then overrides. */
static srv_status_t *old_flags_apply(const srv_options_t *opt, srv_trace_config_t *c,
                                     bool *level_off) {
  bool seen = false;
  srv_status_t *st = NULL;
  for (size_t i = 0; i < opt->trace_level_count && st == NULL; i++)
    st = setting_apply(c, "trace-level", "level", opt->trace_levels[i], &seen, level_off);
  if (st == NULL && opt->trace_file != NULL)
    st = setting_apply(c, "trace-file", "file", opt->trace_file, &seen, level_off);
  if (st == NULL && opt->trace_rate != NULL)
    st = setting_apply(c, "trace-rate", "rate", opt->trace_rate, &seen, level_off);
  if (st == NULL && opt->trace_count != NULL)
    st = setting_apply(c, "trace-count", "count", opt->trace_count, &seen, level_off);
  if (st == NULL && opt->trace_log_frequency != NULL)
    st = setting_apply(c, "trace-log-frequency", "log-frequency",
                       opt->trace_log_frequency, &seen, level_off);
  return st;
}

srv_status_t *srv_trace_config_parse(const srv_options_t *opt, srv_trace_config_t *out) {
  *out = (srv_trace_config_t){.level = 0, .rate = 1000, .count = -1};
  bool level_off = false, seen = false;
  srv_status_t *st = old_flags_apply(opt, out, &level_off);
  for (size_t i = 0; i < opt->trace_config_count && st == NULL; i++)
    st = config_apply(out, opt->trace_configs[i], &seen, &level_off);
  if (st != NULL) {
    srv_trace_config_free(out);
    return st;
  }
  /* An explicit OFF wins over levels given beside it, as tritonserver. */
  if (level_off) out->level = 0;
  return NULL;
}

void srv_trace_config_free(srv_trace_config_t *c) {
  free(c->file);
  c->file = NULL;
}

srv_status_t *srv_trace_config_check(const srv_options_t *opt) {
  srv_trace_config_t c;
  srv_status_t *st = srv_trace_config_parse(opt, &c);
  if (st == NULL) srv_trace_config_free(&c);
  return st;
}
