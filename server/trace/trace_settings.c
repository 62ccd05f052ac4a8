/* TraceSetting requests (see tracer.h): parsing a request's settings, and
 * applying them to the global setting or a model's under the tracer's
 * mutex. Any thread (the endpoints' handlers). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/trace/tracer.h"

/* Names and values are echoed into errors, cut to this. */
#define ECHO_MAX 64

static bool is(upb_StringView v, const char *s) {
  return v.size == strlen(s) && memcmp(v.data, s, v.size) == 0;
}

/* A decimal integer in [min, max]: digits, a leading '-' at most. */
static bool number_parse(upb_StringView v, long long min, long long max, long long *out) {
  char buf[32];
  if (v.size == 0 || v.size >= sizeof buf) return false;
  memcpy(buf, v.data, v.size);
  buf[v.size] = '\0';
  for (size_t i = 0; i < v.size; i++)
    if (!((buf[i] >= '0' && buf[i] <= '9') || (i == 0 && buf[i] == '-'))) return false;
  char *end;
  errno = 0;
  long long n = strtoll(buf, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = n;
  return n >= min && n <= max;
}

static srv_status_t *number_setting(upb_StringView name, const upb_StringView *values,
                                    size_t count, long long min, long long max,
                                    long long *out) {
  if (count != 1)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "expect only 1 value for '%.*s'",
                          (int)name.size, name.data);
  if (number_parse(values[0], min, max, out)) return NULL;
  int shown = values[0].size > ECHO_MAX ? ECHO_MAX : (int)values[0].size;
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "Unable to parse '%.*s', expecting an integer in [%lld, %lld], "
                        "got: %.*s",
                        (int)name.size, name.data, min, max, shown, values[0].data);
}

static srv_status_t *level_setting(srv_trace_update_t *u, const upb_StringView *values,
                                   size_t count) {
  uint32_t level = 0;
  for (size_t i = 0; i < count; i++) {
    if (is(values[i], "OFF")) {
      if (count != 1)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "Expect only one trace level 'OFF' is specified");
    } else if (is(values[i], "TIMESTAMPS")) {
      level |= TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
    } else if (is(values[i], "TENSORS")) {
      level |= TRITONSERVER_TRACE_LEVEL_TENSORS;
    } else {
      int shown = values[i].size > ECHO_MAX ? ECHO_MAX : (int)values[i].size;
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "unknown trace level '%.*s' (OFF, TIMESTAMPS or TENSORS)",
                            shown, values[i].data);
    }
  }
  u->level = level;
  u->given |= SRV_TRACE_F_LEVEL;
  return NULL;
}

/* Which field a name sets; 0 when it is none of the four. */
static uint32_t field_of(upb_StringView name) {
  if (is(name, "trace_level")) return SRV_TRACE_F_LEVEL;
  if (is(name, "trace_rate")) return SRV_TRACE_F_RATE;
  if (is(name, "trace_count")) return SRV_TRACE_F_COUNT;
  if (is(name, "log_frequency")) return SRV_TRACE_F_LOG_FREQUENCY;
  return 0;
}

srv_status_t *srv_trace_update_parse(srv_trace_update_t *u, upb_StringView name,
                                     const upb_StringView *values, size_t count) {
  if (is(name, "trace_file"))
    return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                          "trace file location can not be updated through network "
                          "protocol");
  if (is(name, "trace_mode")) {
    if (count == 0 || (count == 1 && values[0].size == 6 &&
                       strncasecmp(values[0].data, "triton", 6) == 0))
      return NULL; /* the only mode there is */
    return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                          "trace mode can not be updated through network protocol");
  }
  uint32_t f = field_of(name);
  if (f == 0) {
    int shown = name.size > ECHO_MAX ? ECHO_MAX : (int)name.size;
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "unknown trace setting '%.*s' (trace_level, trace_rate, "
                          "trace_count, log_frequency)",
                          shown, name.data);
  }
  if (count == 0) {
    u->cleared |= f;
    u->given &= ~f;
    return NULL;
  }
  u->cleared &= ~f;
  if (f == SRV_TRACE_F_LEVEL) return level_setting(u, values, count);
  long long v;
  srv_status_t *st = f == SRV_TRACE_F_COUNT
                         ? number_setting(name, values, count, -1, INT32_MAX, &v)
                         : number_setting(name, values, count, 0, UINT32_MAX, &v);
  if (st != NULL) return st;
  if (f == SRV_TRACE_F_RATE) u->rate = (uint32_t)v;
  if (f == SRV_TRACE_F_COUNT) u->count = (int32_t)v;
  if (f == SRV_TRACE_F_LOG_FREQUENCY) u->log_frequency = (uint32_t)v;
  u->given |= f;
  return NULL;
}
