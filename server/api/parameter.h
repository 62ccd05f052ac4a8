/* TRITONSERVER_Parameter: a named, typed value (request and load parameters,
 * metric labels). Any thread: a parameter never changes after it is made, so
 * any number of threads may read it while its owner keeps it alive. */
#ifndef NEREID_SERVER_API_PARAMETER_H
#define NEREID_SERVER_API_PARAMETER_H

#include <stdint.h>

#include "triton/core/tritonserver.h"

/** The parameter's name; owned by the parameter. */
const char *api_parameter_name(const TRITONSERVER_Parameter *param);

TRITONSERVER_ParameterType api_parameter_type(const TRITONSERVER_Parameter *param);

/** The value, to be cast by type as the API does everywhere: const char*
 *  (NUL-terminated) for STRING, const int64_t* for INT, const bool* for BOOL,
 *  const double* for DOUBLE, the caller's bytes for BYTES. Owned by the
 *  parameter, except BYTES, which points at memory its creator keeps alive. */
const void *api_parameter_value(const TRITONSERVER_Parameter *param);

/** Size of the value in bytes: the string length (without NUL) for STRING,
 *  the given size for BYTES, sizeof the scalar otherwise. */
uint64_t api_parameter_byte_size(const TRITONSERVER_Parameter *param);

#endif
