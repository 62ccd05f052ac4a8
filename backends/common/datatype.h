/* Tensor datatypes as the model configuration names them ("TYPE_INT32") and
 * as the protocol names them ("INT32"), with element sizes. Any thread; pure
 * tables, no server calls, so backends need no TRITONSERVER_DataType* call. */
#ifndef NEREID_BACKENDS_COMMON_DATATYPE_H
#define NEREID_BACKENDS_COMMON_DATATYPE_H

#include <stddef.h>

#include "triton/core/tritonserver.h"

/** The datatype of a config name ("TYPE_FP32"; "TYPE_STRING" is BYTES);
 * TRITONSERVER_TYPE_INVALID for anything else, NULL included. */
TRITONSERVER_DataType bk_datatype_from_config(const char *config_name);

/** Protocol name ("FP32", "BYTES"); "INVALID" for unknown values. */
const char *bk_datatype_name(TRITONSERVER_DataType datatype);

/** Bytes per element; 0 for BYTES (variable length) and INVALID. */
size_t bk_datatype_size(TRITONSERVER_DataType datatype);

#endif
