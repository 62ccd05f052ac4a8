/* One request's stream of responses in the repeat backend: response i
 * carries OUT = IN[i] and IDX = i and is due DELAY[i] ms after the previous
 * one; the final flag follows the last (or comes alone when IN is empty or
 * the client cancelled). Created on the instance's execute thread, then
 * owned and stepped by the instance's scheduler thread (repeat_sched). */
#ifndef NEREID_BACKENDS_REPEAT_JOB_H
#define NEREID_BACKENDS_REPEAT_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"

typedef struct {
  TRITONBACKEND_ResponseFactory *factory; /* outlives the request */
  uint64_t due_ns;                        /* CLOCK_MONOTONIC time the next step is due */
  uint32_t count;                         /* elements of IN: responses to send */
  uint32_t next;                          /* index of the next response */
  bool want_out, want_idx;                /* requested outputs, read before the release */
  int32_t *in; /* copies: the request is released before we finish */
  uint32_t *delay_ms;
} repeat_job_t;

/** Reads IN, DELAY and WAIT of `request` (checking types and shapes),
 * copies IN, DELAY and which outputs were requested, and creates the
 * response factory. The first step is
 * due DELAY[0] ms from now. On error nothing is created and the caller
 * answers the request with the error (INVALID_ARG naming the tensor). */
TRITONSERVER_Error *repeat_job_new(TRITONBACKEND_Request *request, repeat_job_t **job,
                                   uint32_t *wait_ms);

/** Sends the due response, or the final flag; checks for cancellation
 * first. Returns true when the job is over (final flag sent), false when
 * the next step is due at job->due_ns. One thread at a time per job. */
bool repeat_job_step(repeat_job_t *job);

/** Ends a job early: an error response with the final flag. Takes err. */
void repeat_job_fail(repeat_job_t *job, TRITONSERVER_Error *err);

/** Deletes the factory and frees the job. */
void repeat_job_free(repeat_job_t *job);

#endif
