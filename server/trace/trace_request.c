/* The trace hooks of a request's life (see trace_request.h). Each runs on
 * the thread that holds the request at that point. */
#include "server/trace/trace_request.h"

#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/log.h"

/* Reports one input as `activity`: one buffer as it is, several joined
 * into one host copy (Triton traces a tensor whole). */
static void input_report(srv_trace_t *t, TRITONSERVER_InferenceTraceActivity activity,
                         const struct TRITONBACKEND_Input *in) {
  const void *base = NULL;
  void *joined = NULL;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t mt_id = 0;
  if (in->buffer_count == 1) {
    base = in->buffers[0].base;
    mt = in->buffers[0].memory_type;
    mt_id = in->buffers[0].memory_type_id;
  } else if (in->buffer_count > 1) {
    joined = malloc(in->byte_size ? in->byte_size : 1);
    if (joined == NULL) SRV_FATAL("out of memory");
    uint64_t at = 0;
    for (uint32_t b = 0; b < in->buffer_count; b++) {
      const srv_buffer_t *buf = &in->buffers[b];
      if (buf->memory_type == TRITONSERVER_MEMORY_GPU || at + buf->size > in->byte_size) {
        mt = TRITONSERVER_MEMORY_GPU; /* not readable here: skipped */
        break;
      }
      memcpy((char *)joined + at, buf->base, buf->size);
      at += buf->size;
    }
    base = joined;
  }
  srv_trace_report_tensor(t, activity, in->name, in->datatype, base, in->byte_size,
                          in->shape, in->dims_count, mt, mt_id);
  free(joined);
}

void srv_trace_enqueue(srv_tracer_t *tr, const char *model, int64_t version,
                       TRITONBACKEND_Request *r) {
  srv_infer_state_t *s = r->state;
  if (s->trace == NULL) {
    if (!s->trace_sample || tr == NULL) return;
    s->trace = srv_tracer_sample(tr, model);
    if (s->trace == NULL) return;
  }
  srv_trace_t *t = s->trace;
  srv_trace_set_request(t, model, version, r->id);
  srv_trace_report(t, TRITONSERVER_TRACE_REQUEST_START, s->request_start_ns, NULL);
  srv_trace_report(t, TRITONSERVER_TRACE_QUEUE_START, r->queue_start_ns, NULL);
  if (t->level & TRITONSERVER_TRACE_LEVEL_TENSORS)
    for (uint32_t i = 0; i < r->input_count; i++)
      input_report(t, TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT, &r->inputs[i]);
}

void srv_trace_backend_inputs(TRITONBACKEND_Request *r) {
  srv_trace_t *t = r->state->trace;
  if (!(t->level & TRITONSERVER_TRACE_LEVEL_TENSORS)) return;
  for (uint32_t i = 0; i < r->input_count; i++)
    input_report(t, TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT, &r->inputs[i]);
}

void srv_trace_compute(srv_trace_t *t, uint64_t exec_start, uint64_t compute_start,
                       uint64_t compute_end, uint64_t exec_end) {
  srv_trace_report(t, TRITONSERVER_TRACE_COMPUTE_START, exec_start, NULL);
  srv_trace_report(t, TRITONSERVER_TRACE_COMPUTE_INPUT_END, compute_start, NULL);
  srv_trace_report(t, TRITONSERVER_TRACE_COMPUTE_OUTPUT_START, compute_end, NULL);
  srv_trace_report(t, TRITONSERVER_TRACE_COMPUTE_END, exec_end, NULL);
}

void srv_trace_outputs(srv_trace_t *t, const TRITONBACKEND_Response *response) {
  if (!(t->level & TRITONSERVER_TRACE_LEVEL_TENSORS)) return;
  for (uint32_t i = 0; i < response->output_count; i++) {
    const struct TRITONBACKEND_Output *o = &response->outputs[i];
    /* Only an output written in place into a client's region may be in
     * GPU memory (response.c). */
    TRITONSERVER_MemoryType mt =
        o->in_place && o->shm != NULL ? o->shm->memory_type : TRITONSERVER_MEMORY_CPU;
    srv_trace_report_tensor(t, TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT, o->name,
                            o->datatype, o->buffer, o->buffer != NULL ? o->byte_size : 0,
                            o->shape, o->dims_count, mt, 0);
  }
}
