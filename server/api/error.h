/* TRITONSERVER_Error, the status object of the Triton C API, plus the
 * helpers the rest of the server uses to make one and to turn it into a gRPC
 * status. Any thread: an error is owned by exactly one thread at a time. */
#ifndef NEREID_SERVER_API_ERROR_H
#define NEREID_SERVER_API_ERROR_H

#include <grpc/status.h>

#include "triton/core/tritonserver.h"

/** A new error whose message is the printf-style 'fmt'. Never returns NULL
 *  (out-of-memory is fatal). The caller owns the error: it frees it with
 *  TRITONSERVER_ErrorDelete or hands it to a call that takes ownership. Any
 *  thread. */
TRITONSERVER_Error *api_error_new(TRITONSERVER_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Triton's name for 'code' ("Invalid argument"); "Unknown" for a value outside
 *  the enum, as Triton maps it. Static string. */
const char *api_error_code_string(TRITONSERVER_Error_Code code);

/** The gRPC status a client sees for an error of 'code', as Triton's gRPC
 *  frontend maps it (UNSUPPORTED -> UNIMPLEMENTED, INVALID_ARG ->
 *  INVALID_ARGUMENT, ...; UNKNOWN for a value outside the enum). */
grpc_status_code api_error_grpc_code(TRITONSERVER_Error_Code code);

/** The other way: the Triton code of a gRPC code (UNKNOWN for the codes
 *  that Triton has no counterpart of). */
TRITONSERVER_Error_Code api_error_code_from_grpc(grpc_status_code code);

#endif
