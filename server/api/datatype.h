/* The API's type vocabulary: tensor data types in their three spellings
 * (TRITONSERVER_DataType, the protocol strings "INT32"/"BYTES" of the gRPC
 * and HTTP APIs, and model_config.proto's inference.DataType TYPE_* enum),
 * plus the names of memory types and instance-group kinds. Pure tables: any
 * thread. */
#ifndef NEREID_SERVER_API_DATATYPE_H
#define NEREID_SERVER_API_DATATYPE_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/** Protocol name ("INT32", "FP16", "BYTES", "BF16"); NULL for INVALID and for
 *  values outside the enum. Static string. */
const char *api_datatype_protocol_name(TRITONSERVER_DataType dtype);

/** Inverse of api_datatype_protocol_name over the 'len' bytes at 's' (need not
 *  be NUL-terminated: upb string views can be passed as they are). Exact and
 *  case-sensitive, as Triton; TRITONSERVER_TYPE_INVALID when unknown. */
TRITONSERVER_DataType api_datatype_from_protocol(const char *s, size_t len);

/** The inference.DataType value of model_config.proto (TYPE_INVALID = 0 ...
 *  TYPE_STRING = 13, TYPE_BF16 = 14); 0 (TYPE_INVALID) when unknown. */
int32_t api_datatype_config_value(TRITONSERVER_DataType dtype);

/** Inverse of api_datatype_config_value; TRITONSERVER_TYPE_INVALID for values
 *  the proto does not define. */
TRITONSERVER_DataType api_datatype_from_config_value(int32_t value);

/** The enum name in model_config.proto ("TYPE_INT32", "TYPE_STRING" for
 *  BYTES); "TYPE_INVALID" for INVALID and unknown values. Static string, the
 *  spelling config.pbtxt and the JSON model config use. */
const char *api_datatype_config_name(TRITONSERVER_DataType dtype);

/** Inverse of api_datatype_config_name over 'len' bytes at 's';
 *  TRITONSERVER_TYPE_INVALID when unknown (also for "TYPE_INVALID"). */
TRITONSERVER_DataType api_datatype_from_config_name(const char *s, size_t len);

/** Bytes per element; 0 for BYTES (variable size) and INVALID. */
uint32_t api_datatype_byte_size(TRITONSERVER_DataType dtype);

#endif
