/* Every destructor of Triton's C API (the *Delete and *Release functions of
 * tritonserver.h and tritonbackend.h, and MemoryManagerFree) called with
 * NULL answers as Triton's does: most succeed doing nothing; those that
 * crash Triton answer INVALID_ARG here. Main thread. */
#include <stddef.h>

#include "test/unit/unit.h"
#include "triton/core/tritonbackend.h"

/* The code of err, or -1 for success; frees err. */
static int code_of(TRITONSERVER_Error *err) {
  if (err == NULL) return -1;
  int code = (int)TRITONSERVER_ErrorCode(err);
  TRITONSERVER_ErrorDelete(err);
  return code;
}

static void server_api_deletes_succeed(void) {
  TRITONSERVER_ErrorDelete(NULL);
  TRITONSERVER_ParameterDelete(NULL);
  CHECK(code_of(TRITONSERVER_InferenceResponseDelete(NULL)) == -1);
  CHECK(code_of(TRITONSERVER_InferenceRequestDelete(NULL)) == -1);
  CHECK(code_of(TRITONSERVER_ResponseAllocatorDelete(NULL)) == -1);
  CHECK(code_of(TRITONSERVER_MessageDelete(NULL)) == -1);
  CHECK(code_of(TRITONSERVER_MetricsDelete(NULL)) == -1);
  CHECK(code_of(TRITONSERVER_MetricArgsDelete(NULL)) == -1);
  CHECK(code_of(TRITONSERVER_BufferAttributesDelete(NULL)) == -1);
}

/* Triton dereferences these: a family or metric that is not there is a
 * caller's mistake worth an error, not a crash. */
static void metric_deletes_refuse(void) {
  CHECK(code_of(TRITONSERVER_MetricFamilyDelete(NULL)) == TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(code_of(TRITONSERVER_MetricDelete(NULL)) == TRITONSERVER_ERROR_INVALID_ARG);
}

/* Not built yet (their files belong to the server-embedding and tracing
 * work): whatever they answer, NULL must not crash them. Triton answers
 * success for the first two and, with tracing built in, for the third. */
static void unbuilt_deletes_do_not_crash(void) {
  code_of(TRITONSERVER_ServerDelete(NULL));
  code_of(TRITONSERVER_ServerOptionsDelete(NULL));
  code_of(TRITONSERVER_InferenceTraceDelete(NULL));
}

static void backend_api_deletes(void) {
  CHECK(code_of(TRITONBACKEND_ResponseDelete(NULL)) == -1);
  CHECK(code_of(TRITONBACKEND_ResponseFactoryDelete(NULL)) == -1);
  CHECK(code_of(TRITONBACKEND_ModelInstanceResponseStatisticsDelete(NULL)) == -1);
  CHECK(code_of(TRITONBACKEND_MemoryManagerFree(NULL, NULL, TRITONSERVER_MEMORY_CPU, 0)) ==
        -1);
  CHECK(code_of(TRITONBACKEND_MemoryManagerFree(NULL, NULL, TRITONSERVER_MEMORY_GPU, 0)) ==
        -1);
  /* Triton's release runs the request's callbacks: NULL crashes it. */
  CHECK(code_of(TRITONBACKEND_RequestRelease(NULL, TRITONSERVER_REQUEST_RELEASE_ALL)) ==
        TRITONSERVER_ERROR_INVALID_ARG);
}

UNIT_MAIN("null_delete", UNIT_CASE(server_api_deletes_succeed),
          UNIT_CASE(metric_deletes_refuse), UNIT_CASE(unbuilt_deletes_do_not_crash),
          UNIT_CASE(backend_api_deletes))
