/* What the recorder does with one Execute's batch before answering it:
 * describe it for the execute_start line (batch size, request ids), work out
 * the delay its inputs ask for, and sleep while answering the requests the
 * client cancels meanwhile. The instance's execute thread, which owns the
 * requests until it releases them. */
#ifndef NEREID_TEST_BACKENDS_RECORDER_BATCH_H
#define NEREID_TEST_BACKENDS_RECORDER_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"

/* Enough for "batch=N ids=" and a few hundred bytes of ids per request of
 * a large batch; longer id lists end in "...". */
#define REC_BATCH_DESC_MAX 3072

/** The Execute a batch belongs to, for the lines and statistics of the
 * requests it cancels. */
typedef struct {
  TRITONBACKEND_ModelInstance *instance;
  const char *path;       /* record file; NULL: record nothing */
  const char *who;        /* "model=M version=V instance=I" */
  uint64_t exec_start_ns; /* when Execute was entered */
} rec_batch_t;

/** The request's batch size: the leading dim of its INPUT0 when
 * max_batch_size > 0 (1 when it has no INPUT0 or no dims), else 1. */
uint64_t rec_batch_request_size(TRITONBACKEND_Request *request, int64_t max_batch_size);

/** Writes "batch=<sum of batch sizes> ids=<id>,<id>,..." into buf, ids in
 * the order given, "-" for a request without an id. */
void rec_batch_describe(TRITONBACKEND_Request *const *requests, uint32_t count,
                        int64_t max_batch_size, char *buf, size_t len);

/** The largest first element of an INT32 INPUT0 over the batch, as
 * milliseconds; requests without one (or with a negative one) count 0. */
uint64_t rec_batch_input_delay_ms(TRITONBACKEND_Request *const *requests, uint32_t count);

/** Sleeps `ms` milliseconds, polling every request in live[0..count) for
 * cancellation every millisecond. A cancelled request is answered at once
 * (CANCELLED, "recorder: request '<id>' cancelled during execute"), recorded
 * as a `cancelled` line, reported as a failed request and released; it
 * leaves live[], whose survivors keep their order. Returns how many
 * survive. Ends early when none does; with ms == 0 polls nothing. */
uint32_t rec_batch_wait(const rec_batch_t *batch, TRITONBACKEND_Request **live,
                        uint32_t count, uint64_t ms);

#endif
