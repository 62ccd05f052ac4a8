/* Identity responses: OUTPUTn = INPUTn (same type, shape and bytes) for each
 * output the client asked for, any datatype including BYTES. Shared by the
 * identity backend and the recorder test backend. Validation runs at model
 * load; responding runs on the instance's execute thread. */
#ifndef NEREID_BACKENDS_COMMON_PASSTHROUGH_H
#define NEREID_BACKENDS_COMMON_PASSTHROUGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/common/model_config.h"
#include "triton/core/tritonbackend.h"

/** Checks that the config pairs every OUTPUT<x> with an INPUT<x> of the same
 * datatype and dims, and has as many inputs as outputs. False with a
 * message naming the tensor in err. */
bool bk_passthrough_validate(const bk_model_config_t *cfg, char *err, size_t err_len);

/** Fills `response` with a copy of INPUT<x> for each requested OUTPUT<x>.
 * Errors (missing input, shape not in the config, bad data) name the
 * tensor. Matches bk_respond_fn with cfg as ctx. */
TRITONSERVER_Error *bk_passthrough_respond(void *cfg, TRITONBACKEND_Request *request,
                                           TRITONBACKEND_Response *response,
                                           uint64_t *batch_size);

#endif
