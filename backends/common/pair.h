/* Responding to a request whose model takes two inputs of the same kind
 * (addsub, addsub_string): read both, check them, compute, release them.
 * Runs on the instance's thread, inside Execute. */
#ifndef NEREID_BACKENDS_COMMON_PAIR_H
#define NEREID_BACKENDS_COMMON_PAIR_H

#include "backends/common/input.h"
#include "backends/common/model_config.h"

typedef TRITONSERVER_Error *bk_pair_compute_fn(TRITONBACKEND_Request *request,
                                               TRITONBACKEND_Response *response,
                                               const bk_input_t *a, const bk_input_t *b);

/** Reads inputs names[0] and names[1] of `request`, checks that both have
 *  the model's input datatype and one shape that the config allows, fills
 *  `response` with `compute`, and sets *batch_size to the leading dimension
 *  when the model batches. The inputs are released either way. */
TRITONSERVER_Error *bk_pair_respond(const bk_model_config_t *cfg,
                                    TRITONBACKEND_Request *request,
                                    TRITONBACKEND_Response *response,
                                    const char *const names[2],
                                    bk_pair_compute_fn *compute, uint64_t *batch_size);

/** The config of a two-in, two-out model (addsub, addsub_cuda): exactly
 *  inputs in[0], in[1] and outputs out[0], out[1], all of one datatype that
 *  `supports` accepts and the dims of in[0]. False with a message in err;
 *  `types` ends it for a datatype refused ("datatype X is not <types>"). */
bool bk_pair_config_check(const bk_model_config_t *cfg, const char *const in[2],
                          const char *const out[2],
                          bool (*supports)(TRITONSERVER_DataType), const char *types,
                          char *err, size_t len);

#endif
