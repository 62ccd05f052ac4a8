/* The repeat backend's response scheduler: one thread per model instance
 * that sends each queued job's responses when they fall due, so Execute
 * returns (after WAIT) without waiting for DELAYs, and responses of several
 * requests interleave by time, as with Triton's thread per request. Any
 * thread pushes; only the scheduler thread steps jobs. */
#ifndef NEREID_BACKENDS_REPEAT_SCHED_H
#define NEREID_BACKENDS_REPEAT_SCHED_H

#include <stdbool.h>

#include "backends/repeat/repeat_job.h"
#include "triton/core/tritonserver.h"

typedef struct repeat_sched repeat_sched_t;

/** Starts the scheduler thread. */
TRITONSERVER_Error *repeat_sched_start(repeat_sched_t **sched);

/** Queues a job; the scheduler owns it from now on. Any thread, never
 * blocks for long. False (job still the caller's) only when out of memory. */
bool repeat_sched_push(repeat_sched_t *sched, repeat_job_t *job);

/** Lets every queued job finish (delays honoured, cancelled ones end at
 * once), then joins the thread and frees the scheduler. Call once, from the
 * instance's finalize, after the last push. */
void repeat_sched_stop(repeat_sched_t *sched);

#endif
