/* Reading a repeat request and sending its responses. repeat_job_new: the
 * instance's execute thread; step/fail/free: the scheduler thread. */
#include "backends/repeat/repeat_job.h"

#include <stdlib.h>
#include <string.h>

#include "backends/common/clock.h"
#include "backends/common/datatype.h"
#include "backends/common/error.h"
#include "backends/common/input.h"
#include "backends/common/output.h"

#define MS 1000000ull

static TRITONSERVER_Error *expect(const bk_input_t *in, TRITONSERVER_DataType type) {
  if (in->datatype == type && in->dims_count == 1) return NULL;
  return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                  "input '%s': expected a 1-D %s tensor, got %u-D %s", in->name,
                  bk_datatype_name(type), in->dims_count, bk_datatype_name(in->datatype));
}

/* Checks the three inputs against each other: IN and DELAY one shape, WAIT
 * one element. */
static TRITONSERVER_Error *check(const bk_input_t *in, const bk_input_t *delay,
                                 const bk_input_t *wait) {
  BK_RETURN_IF_ERROR(expect(in, TRITONSERVER_TYPE_INT32));
  BK_RETURN_IF_ERROR(expect(delay, TRITONSERVER_TYPE_UINT32));
  BK_RETURN_IF_ERROR(expect(wait, TRITONSERVER_TYPE_UINT32));
  if (delay->shape[0] != in->shape[0]) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "input 'DELAY' must have the shape of 'IN': %lld elements vs %lld",
                    (long long)delay->shape[0], (long long)in->shape[0]);
  }
  if (wait->element_count != 1) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "input 'WAIT' must have shape [1]");
  }
  if (in->element_count > UINT32_MAX) {
    return bk_error(TRITONSERVER_ERROR_INVALID_ARG, "input 'IN' has too many elements");
  }
  return NULL;
}

/* One allocation holds the job and both copied arrays. */
static TRITONSERVER_Error *make_job(TRITONBACKEND_Request *request, const bk_input_t *in,
                                    const bk_input_t *delay, repeat_job_t **out) {
  size_t n = (size_t)in->element_count;
  repeat_job_t *job = malloc(sizeof *job + 2 * n * sizeof(uint32_t));
  if (job == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  job->in = (int32_t *)(job + 1);
  job->delay_ms = (uint32_t *)(job->in + n);
  if (n > 0) {
    memcpy(job->in, in->data, n * sizeof(int32_t));
    memcpy(job->delay_ms, delay->data, n * sizeof(uint32_t));
  }
  job->count = (uint32_t)n;
  job->next = 0;
  TRITONSERVER_Error *err = bk_output_requested(request, "OUT", &job->want_out);
  if (err == NULL) err = bk_output_requested(request, "IDX", &job->want_idx);
  if (err != NULL) {
    free(job);
    return err;
  }
  job->due_ns = bk_now_ns() + (n > 0 ? job->delay_ms[0] * MS : 0);
  err = TRITONBACKEND_ResponseFactoryNew(&job->factory, request);
  if (err != NULL) {
    free(job);
    return err;
  }
  *out = job;
  return NULL;
}

TRITONSERVER_Error *repeat_job_new(TRITONBACKEND_Request *request, repeat_job_t **job,
                                   uint32_t *wait_ms) {
  bk_input_t in, delay, wait;
  TRITONSERVER_Error *err = bk_input_read(request, "IN", &in);
  if (err != NULL) return err;
  err = bk_input_read(request, "DELAY", &delay);
  if (err != NULL) {
    bk_input_release(&in);
    return err;
  }
  err = bk_input_read(request, "WAIT", &wait);
  if (err == NULL) {
    err = check(&in, &delay, &wait);
    if (err == NULL) memcpy(wait_ms, wait.data, sizeof *wait_ms);
    if (err == NULL) err = make_job(request, &in, &delay, job);
    bk_input_release(&wait);
  }
  bk_input_release(&delay);
  bk_input_release(&in);
  return err;
}

/* Adds a requested [1]-shaped 4-byte output holding *value. */
static TRITONSERVER_Error *put(TRITONBACKEND_Response *response, bool wanted,
                               const char *name, TRITONSERVER_DataType type,
                               const void *value) {
  if (!wanted) return NULL;
  const int64_t shape[1] = {1};
  void *buf = NULL;
  BK_RETURN_IF_ERROR(bk_output_new(response, name, type, shape, 1, 4, &buf));
  memcpy(buf, value, 4);
  return NULL;
}

/* Builds and sends response `job->next`: OUT = IN[i], IDX = i. */
static TRITONSERVER_Error *send_one(repeat_job_t *job) {
  TRITONBACKEND_Response *response = NULL;
  BK_RETURN_IF_ERROR(TRITONBACKEND_ResponseNewFromFactory(&response, job->factory));
  TRITONSERVER_Error *err =
      put(response, job->want_out, "OUT", TRITONSERVER_TYPE_INT32, &job->in[job->next]);
  if (err == NULL) {
    err = put(response, job->want_idx, "IDX", TRITONSERVER_TYPE_UINT32, &job->next);
  }
  if (err != NULL) {
    BK_LOG_IF_ERROR(TRITONBACKEND_ResponseDelete(response), "deleting a response");
    return err;
  }
  return TRITONBACKEND_ResponseSend(response, 0, NULL);
}

static void send_final(repeat_job_t *job) {
  BK_LOG_IF_ERROR(TRITONBACKEND_ResponseFactorySendFlags(
                      job->factory, TRITONSERVER_RESPONSE_COMPLETE_FINAL),
                  "sending the final flag");
}

bool repeat_job_step(repeat_job_t *job) {
  bool cancelled = false;
  BK_LOG_IF_ERROR(TRITONBACKEND_ResponseFactoryIsCancelled(job->factory, &cancelled),
                  "checking for cancellation");
  if (!cancelled && job->next < job->count) {
    TRITONSERVER_Error *err = send_one(job);
    if (err != NULL) {
      repeat_job_fail(job, err);
      return true;
    }
    job->next++;
    if (job->next < job->count) {
      job->due_ns = bk_now_ns() + job->delay_ms[job->next] * MS;
      return false;
    }
  }
  /* Every response is out (or the client is gone): end the stream now, as
   * Triton's repeat backend does, without waiting for another delay. */
  send_final(job);
  return true;
}

void repeat_job_fail(repeat_job_t *job, TRITONSERVER_Error *err) {
  TRITONBACKEND_Response *response = NULL;
  TRITONSERVER_Error *e = TRITONBACKEND_ResponseNewFromFactory(&response, job->factory);
  if (e == NULL) {
    e = TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
  }
  if (e != NULL) {
    /* No error response possible: still end the stream. */
    BK_LOG_IF_ERROR(e, "sending an error response");
    send_final(job);
  }
  BK_LOG(TRITONSERVER_LOG_ERROR, "repeat: response stream ended early: %s",
         TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
}

void repeat_job_free(repeat_job_t *job) {
  if (job == NULL) return;
  BK_LOG_IF_ERROR(TRITONBACKEND_ResponseFactoryDelete(job->factory),
                  "deleting a response factory");
  free(job);
}
