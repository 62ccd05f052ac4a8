/* The requests that nereid-perf sends: one serialized ModelInferRequest per
 * distinct input (random or zero data, or each entry of an --input-data
 * file), built once on the main thread before the load starts. Workers
 * then only take a reference to a prebuilt slice per request, so the
 * generator costs no encoding per request. */
#ifndef NEREID_TOOLS_PERF_INPUTS_H
#define NEREID_TOOLS_PERF_INPUTS_H

#include <grpc/slice.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/perf/common.h"
#include "tools/perf/model.h"
#include "tools/perf/options.h"
#include "tools/perf/shm.h"

typedef struct {
  grpc_slice *bodies; /* n serialized requests, without an `id` */
  size_t n;
  char *summary; /* e.g. "INPUT0 INT32 [1,16], INPUT1 INT32 [1,16]" (request 0) */
} perf_requests_t;

/** Builds the requests for model m as the options ask (data source,
 *  --shape, --batch-size; in decoupled mode each asks for
 *  triton_enable_empty_final_response, so that every request's end is
 *  seen). With shm (--shared-memory system; NULL: none), the tensors go
 *  to regions made in shm instead of the messages: one per input, holding
 *  that input's data of every request at its own offset, and one of
 *  --output-shared-memory-size bytes per output, which every request asks
 *  for; they are not registered yet. Fails naming the input, the flag,
 *  the file entry or the system call at fault; regions already made stay
 *  in shm (perf_shm_free removes them). */
bool perf_requests_build(const perf_options_t *o, const perf_model_t *m, perf_shm_t *shm,
                         perf_requests_t *out, perf_err_t *err);

void perf_requests_free(perf_requests_t *r);

#endif
