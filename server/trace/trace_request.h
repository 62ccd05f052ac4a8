/* Where a request's trace gets its entries: the hooks that the model, the
 * scheduler, instances, responses and the statistics API call, each only
 * when the request has a trace (or, at enqueue, when tracing is on), so an
 * untraced request pays one branch per hook. The times are the ones the
 * statistics read already; only a traced request reads the clock more
 * (REQUEST_END, frontends' send times). */
#ifndef NEREID_SERVER_TRACE_TRACE_REQUEST_H
#define NEREID_SERVER_TRACE_TRACE_REQUEST_H

#include <stdint.h>

#include "server/model/request.h"
#include "server/model/response.h"
#include "server/trace/trace.h"
#include "server/trace/tracer.h"

/** At enqueue (the sender's thread, before the model can see r): samples
 *  a frontend's request (state->trace_sample) that has no trace, then
 *  names the trace's model and request and records REQUEST_START,
 *  QUEUE_START and, at level TENSORS, TENSOR_QUEUE_INPUT of each input. */
void srv_trace_enqueue(srv_tracer_t *tr, const char *model, int64_t version,
                       TRITONBACKEND_Request *r);

/** TENSOR_BACKEND_INPUT of each input, on the instance before execute. */
void srv_trace_backend_inputs(TRITONBACKEND_Request *r);

/** The backend's TRITONBACKEND_ModelInstanceReportStatistics times as
 *  COMPUTE_START, COMPUTE_INPUT_END, COMPUTE_OUTPUT_START, COMPUTE_END
 *  (Triton's mapping). */
void srv_trace_compute(srv_trace_t *t, uint64_t exec_start, uint64_t compute_start,
                       uint64_t compute_end, uint64_t exec_end);

/** TENSOR_BACKEND_OUTPUT of each output of a response being sent. */
void srv_trace_outputs(srv_trace_t *t, const TRITONBACKEND_Response *response);

#endif
