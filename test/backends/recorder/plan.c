/* Reading the recorder's plan and acting on it at each stage. Loading
 * threads read; any thread enters stages. */
#include "test/backends/recorder/plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/common/decimal.h"
#include "backends/common/error.h"

static const char *const kNames[REC_STAGE_COUNT] = {
    "initialize",     "model_initialize", "model_instance_initialize",
    "execute",        "request",          "model_instance_finalize",
    "model_finalize", "finalize",
};

const char *rec_stage_name(rec_stage_t stage) {
  return stage < REC_STAGE_COUNT ? kNames[stage] : "none";
}

static bool read_fail_at(rec_plan_t *plan, const char *v, char *err, size_t err_len) {
  plan->fail_at = REC_NONE;
  if (v == NULL || v[0] == '\0') return true;
  for (int s = 0; s < REC_STAGE_COUNT; s++) {
    if (strcmp(v, kNames[s]) == 0) {
      plan->fail_at = (rec_stage_t)s;
      return true;
    }
  }
  snprintf(err, err_len, "recorder: unknown fail_at stage '%s'", v);
  return false;
}

static bool read_bool(bool *out, const char *key, const char *v, char *err,
                      size_t err_len) {
  *out = false;
  if (v == NULL || strcmp(v, "false") == 0) return true;
  if (strcmp(v, "true") == 0) {
    *out = true;
    return true;
  }
  snprintf(err, err_len, "recorder: %s must be true or false, got '%s'", key, v);
  return false;
}

bool rec_plan_read(rec_plan_t *plan, rec_lookup_fn *lookup, const void *src, char *err,
                   size_t err_len) {
  memset(plan, 0, sizeof *plan);
  plan->record_file = lookup(src, "record_file");
  if (!read_fail_at(plan, lookup(src, "fail_at"), err, err_len)) return false;
  if (!read_bool(&plan->delay_from_input, "delay_from_input",
                 lookup(src, "delay_from_input"), err, err_len)) {
    return false;
  }
  if (!read_bool(&plan->trace_activity, "trace_activity", lookup(src, "trace_activity"),
                 err, err_len)) {
    return false;
  }
  for (int s = 0; s < REC_STAGE_COUNT; s++) {
    char key[64];
    snprintf(key, sizeof key, "%s_delay_ms", kNames[s]);
    const char *v = lookup(src, key);
    int32_t ms = 0;
    if (v == NULL) continue;
    if (!bk_decimal_parse_int32(v, strlen(v), &ms) || ms < 0) {
      snprintf(err, err_len, "recorder: %s must be a number of milliseconds, got '%s'",
               key, v);
      return false;
    }
    plan->delay_ms[s] = (uint32_t)ms;
  }
  return true;
}

void rec_sleep_ms(uint64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

TRITONSERVER_Error *rec_plan_enter(const rec_plan_t *plan, rec_stage_t stage,
                                   const char *who) {
  if (plan->delay_ms[stage] > 0) rec_sleep_ms(plan->delay_ms[stage]);
  if (plan->fail_at != stage) return NULL;
  return bk_error(TRITONSERVER_ERROR_INTERNAL,
                  "recorder: failing at %s as configured (%s)", kNames[stage], who);
}
