/* Describing, delaying and cancelling within one Execute's batch. The
 * instance's execute thread; only the cancelled flag it polls is written by
 * other threads (the server's, when a client cancels). */
#include "test/backends/recorder/batch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/common/clock.h"
#include "backends/common/error.h"
#include "backends/common/input.h"
#include "test/backends/recorder/record.h"

#define POLL_NS 1000000ull /* how often a sleeping Execute looks for cancellations */

/* The id as lines and messages print it: "-" for none or "". */
static const char *request_id(TRITONBACKEND_Request *request) {
  const char *id = NULL;
  BK_LOG_IF_ERROR(TRITONBACKEND_RequestId(request, &id), "reading a request id");
  return id != NULL && id[0] != '\0' ? id : "-";
}

uint64_t rec_batch_request_size(TRITONBACKEND_Request *request, int64_t max_batch_size) {
  if (max_batch_size <= 0) return 1;
  TRITONBACKEND_Input *input = NULL;
  const int64_t *shape = NULL;
  uint32_t dims = 0;
  TRITONSERVER_Error *err = TRITONBACKEND_RequestInput(request, "INPUT0", &input);
  if (err == NULL && input != NULL) {
    err = TRITONBACKEND_InputProperties(input, NULL, NULL, &shape, &dims, NULL, NULL);
  }
  if (err != NULL) TRITONSERVER_ErrorDelete(err); /* no INPUT0: respond says why */
  return err == NULL && dims > 0 && shape[0] >= 0 ? (uint64_t)shape[0] : 1;
}

/* Appends s to buf[0..*used); when it does not fit, ends buf with "..." and
 * returns false. The caller leaves 4 bytes of room past `limit`. */
static bool append(char *buf, size_t limit, size_t *used, const char *s) {
  size_t n = strlen(s);
  if (*used + n > limit) {
    memcpy(buf + *used, "...", 4);
    *used += 3;
    return false;
  }
  memcpy(buf + *used, s, n + 1);
  *used += n;
  return true;
}

void rec_batch_describe(TRITONBACKEND_Request *const *requests, uint32_t count,
                        int64_t max_batch_size, char *buf, size_t len) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++)
    total += rec_batch_request_size(requests[i], max_batch_size);
  int n = snprintf(buf, len, "batch=%" PRIu64 " ids=", total);
  if (n < 0 || (size_t)n + 4 > len) return; /* no room for ids: callers pass plenty */
  size_t used = (size_t)n, limit = len - 4;
  for (uint32_t i = 0; i < count; i++) {
    if (i > 0 && !append(buf, limit, &used, ",")) return;
    if (!append(buf, limit, &used, request_id(requests[i]))) return;
  }
}

/* INPUT0[0] of an INT32 INPUT0, as a delay; 0 when there is none. */
static uint64_t input_delay_ms(TRITONBACKEND_Request *request) {
  bk_input_t in;
  TRITONSERVER_Error *err = bk_input_read(request, "INPUT0", &in);
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err); /* answering the request reports it */
    return 0;
  }
  int32_t v = 0;
  if (in.datatype == TRITONSERVER_TYPE_INT32 && in.element_count > 0)
    memcpy(&v, in.data, sizeof v); /* request buffers need not be aligned */
  bk_input_release(&in);
  return v > 0 ? (uint64_t)v : 0;
}

uint64_t rec_batch_input_delay_ms(TRITONBACKEND_Request *const *requests,
                                  uint32_t count) {
  uint64_t ms = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint64_t d = input_delay_ms(requests[i]);
    if (d > ms) ms = d;
  }
  return ms;
}

/* Answers a cancelled request and gives it back. The line goes first, so a
 * test that sees the CANCELLED response also finds the line; the id is
 * formatted before the release frees it. */
static void cancel_one(const rec_batch_t *batch, TRITONBACKEND_Request *request) {
  uint64_t seen = bk_now_ns();
  const char *id = request_id(request);
  rec_append(batch->path, "cancelled %s id=%s t_ns=%" PRIu64 " tid=%ld", batch->who, id,
             seen, rec_tid());
  TRITONBACKEND_Response *response = NULL;
  TRITONSERVER_Error *err = TRITONBACKEND_ResponseNew(&response, request);
  if (err == NULL) {
    TRITONSERVER_Error *why =
        bk_error(TRITONSERVER_ERROR_CANCELLED,
                 "recorder: request '%s' cancelled during execute", id);
    BK_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, why),
        "sending a cancelled response");
    TRITONSERVER_ErrorDelete(why);
  } else {
    /* The server answers a request released without a final response. */
    BK_LOG_IF_ERROR(err, "creating a cancelled response");
  }
  uint64_t end = bk_now_ns();
  BK_LOG_IF_ERROR(TRITONBACKEND_ModelInstanceReportStatistics(
                      batch->instance, request, false, batch->exec_start_ns,
                      batch->exec_start_ns, seen, end),
                  "reporting request statistics");
  BK_LOG_IF_ERROR(TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL),
                  "releasing a request");
}

/* Answers the cancelled ones among live[0..count); returns how many remain. */
static uint32_t sweep(const rec_batch_t *batch, TRITONBACKEND_Request **live,
                      uint32_t count) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; i++) {
    bool cancelled = false;
    BK_LOG_IF_ERROR(TRITONBACKEND_RequestIsCancelled(live[i], &cancelled),
                    "asking whether a request is cancelled");
    if (cancelled) {
      cancel_one(batch, live[i]);
    } else {
      live[kept++] = live[i];
    }
  }
  return kept;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

uint32_t rec_batch_wait(const rec_batch_t *batch, TRITONBACKEND_Request **live,
                        uint32_t count, uint64_t ms) {
  if (ms == 0) return count;
  uint64_t deadline = bk_now_ns() + ms * 1000000u;
  for (;;) {
    count = sweep(batch, live, count);
    uint64_t now = bk_now_ns();
    if (count == 0 || now >= deadline) return count;
    sleep_ns(deadline - now < POLL_NS ? deadline - now : POLL_NS);
  }
}
