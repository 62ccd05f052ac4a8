/* Creating a response's outputs: which outputs the client asked for, and an
 * output with its CPU buffer. Called by whichever thread builds the
 * response (one thread per response at a time, as the API requires). */
#ifndef NEREID_BACKENDS_COMMON_OUTPUT_H
#define NEREID_BACKENDS_COMMON_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"

/** Whether output `name` is among the request's requested outputs. The
 * server lists every model output when the client named none, so a backend
 * creates exactly the outputs listed. */
TRITONSERVER_Error *bk_output_requested(TRITONBACKEND_Request *request, const char *name,
                                        bool *requested);

/** Which of the n outputs `names` are among the request's requested
 * outputs: sets requested[k], for each names[k] that is, to the request's
 * own string of that name (valid while the request is; naming the output
 * with it lets the server know the name by its address, without a
 * strcmp). One pass over the request's list, the same answers as
 * bk_output_requested for each, with the request's names read once and
 * none compared again once found (issue 21). The caller sets
 * requested[0..n) to NULL first (an array of its own costs it a store or
 * two, a clearing loop here a memset call). */
TRITONSERVER_Error *bk_outputs_requested(TRITONBACKEND_Request *request,
                                         const char *const *names, uint32_t n,
                                         const char **requested);

/** Adds output `name` (type and shape are copied) and gets its buffer of
 * byte_size bytes in CPU memory; *buffer belongs to the response. A buffer
 * placed in GPU memory is an UNSUPPORTED error naming the output. */
TRITONSERVER_Error *bk_output_new(TRITONBACKEND_Response *response, const char *name,
                                  TRITONSERVER_DataType datatype, const int64_t *shape,
                                  uint32_t dims_count, uint64_t byte_size, void **buffer);

#endif
