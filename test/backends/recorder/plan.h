/* What a configuration asks the recorder backend to do: where to record,
 * at which lifecycle stage to fail, how long to sleep in each stage (and
 * whether Execute also sleeps as long as its inputs say). Read
 * at load on the server's loading threads; read-only afterwards, so any
 * thread may consult it. */
#ifndef NEREID_TEST_BACKENDS_RECORDER_PLAN_H
#define NEREID_TEST_BACKENDS_RECORDER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/* Lifecycle stages, named in configs as in rec_stage_name. REC_REQUEST is
 * not an entry point: failing there answers every request with an error
 * response (Execute itself succeeds). */
typedef enum {
  REC_INITIALIZE,
  REC_MODEL_INITIALIZE,
  REC_MODEL_INSTANCE_INITIALIZE,
  REC_EXECUTE,
  REC_REQUEST,
  REC_MODEL_INSTANCE_FINALIZE,
  REC_MODEL_FINALIZE,
  REC_FINALIZE,
  REC_STAGE_COUNT,
  REC_NONE = REC_STAGE_COUNT
} rec_stage_t;

typedef struct {
  const char *record_file; /* raw value, owned by the config; NULL: no record */
  rec_stage_t fail_at;     /* REC_NONE: never fail */
  uint32_t delay_ms[REC_STAGE_COUNT];
  bool delay_from_input; /* Execute first sleeps max INPUT0[0] ms of the batch */
  /* Execute reports CUSTOM_ACTIVITY_START and _END to each traced
   * request's trace (TRITONSERVER_InferenceTraceReportActivity). */
  bool trace_activity;
} rec_plan_t;

/** Looks up a string setting (model parameter or --backend-config value). */
typedef const char *rec_lookup_fn(const void *src, const char *key);

/** "model_initialize" etc. */
const char *rec_stage_name(rec_stage_t stage);

/** Reads record_file, fail_at, every "<stage>_delay_ms" and
 * delay_from_input. False with a message in err for an unknown stage, a
 * delay that is not a number or a delay_from_input other than "true" or
 * "false", so a typo in a test's config fails loudly. */
bool rec_plan_read(rec_plan_t *plan, rec_lookup_fn *lookup, const void *src, char *err,
                   size_t err_len);

/** Sleeps `ms` milliseconds (restarting after signals). Any thread. */
void rec_sleep_ms(uint64_t ms);

/** Entering a stage: sleeps its delay, then returns the planned failure
 * (INTERNAL, "recorder: failing at <stage> as configured (<who>)") or NULL. */
TRITONSERVER_Error *rec_plan_enter(const rec_plan_t *plan, rec_stage_t stage,
                                   const char *who);

#endif
