/* The execute loop of backends that answer each request with exactly one
 * response: create it, let the backend fill it, send it (with the error if
 * filling failed), report statistics, release the request. Runs on the
 * instance's execute thread; the server never runs one instance's Execute
 * twice at once, but different instances may run in parallel. */
#ifndef NEREID_BACKENDS_COMMON_EXECUTE_H
#define NEREID_BACKENDS_COMMON_EXECUTE_H

#include <stdint.h>

#include "triton/core/tritonbackend.h"

/** Fills `response` for `request` (outputs only; the loop sends it) and sets
 * *batch_size (preset to 1) to the request's batch size. A returned error
 * becomes the response's error; the loop deletes it. */
typedef TRITONSERVER_Error *bk_respond_fn(void *ctx, TRITONBACKEND_Request *request,
                                          TRITONBACKEND_Response *response,
                                          uint64_t *batch_size);

/** Answers and releases every request (the backend owns them from the
 * moment Execute is called and returns success), reports per-request
 * statistics and, when any request succeeded, one batch statistic whose
 * size is the sum of the successful batch sizes. */
void bk_execute_each(TRITONBACKEND_ModelInstance *instance,
                     TRITONBACKEND_Request **requests, uint32_t count, bk_respond_fn *fn,
                     void *ctx);

#endif
