/* TRITONSERVER_Error (see error.h). Any thread; an error is never shared, so
 * nothing here synchronises. */
#include "server/api/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/log.h"

/* One allocation per error: the message lives right after the code, so
 * ErrorMessage needs no second pointer and ErrorDelete one free(). */
struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  char msg[];
};

static TRITONSERVER_Error *error_alloc(TRITONSERVER_Error_Code code, size_t len) {
  TRITONSERVER_Error *err = malloc(sizeof *err + len + 1);
  if (err == NULL) API_FATAL("out of memory making a %zu-byte error", len);
  err->code = code;
  err->msg[len] = '\0';
  return err;
}

TRITONSERVER_Error *api_error_new(TRITONSERVER_Error_Code code, const char *fmt, ...) {
  /* Most messages fit the stack buffer: one vsnprintf and one malloc. */
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0, small[0] = '\0';
  TRITONSERVER_Error *err = error_alloc(code, (size_t)n);
  if ((size_t)n < sizeof small) {
    memcpy(err->msg, small, (size_t)n);
  } else {
    va_start(ap, fmt);
    vsnprintf(err->msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return err;
}

const char *api_error_code_string(TRITONSERVER_Error_Code code) {
  /* Triton's wording (Status::CodeString); a code outside the enum reads as
   * UNKNOWN there too. */
  switch (code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return "Unknown";
    case TRITONSERVER_ERROR_INTERNAL:
      return "Internal";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "Not found";
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "Invalid argument";
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return "Unavailable";
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return "Unsupported";
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return "Already exists";
    case TRITONSERVER_ERROR_CANCELLED:
      return "Cancelled";
  }
  return "Unknown";
}

grpc_status_code api_error_grpc_code(TRITONSERVER_Error_Code code) {
  /* Triton's gRPC frontend (GrpcStatusUtil::CodeToStatus). Clients branch on
   * these, e.g. UNAVAILABLE for a model that is not ready. */
  switch (code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return GRPC_STATUS_UNKNOWN;
    case TRITONSERVER_ERROR_INTERNAL:
      return GRPC_STATUS_INTERNAL;
    case TRITONSERVER_ERROR_NOT_FOUND:
      return GRPC_STATUS_NOT_FOUND;
    case TRITONSERVER_ERROR_INVALID_ARG:
      return GRPC_STATUS_INVALID_ARGUMENT;
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return GRPC_STATUS_UNAVAILABLE;
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return GRPC_STATUS_UNIMPLEMENTED;
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return GRPC_STATUS_ALREADY_EXISTS;
    case TRITONSERVER_ERROR_CANCELLED:
      return GRPC_STATUS_CANCELLED;
  }
  return GRPC_STATUS_UNKNOWN;
}

TRITONSERVER_Error_Code api_error_code_from_grpc(grpc_status_code code) {
  switch (code) {
    case GRPC_STATUS_INVALID_ARGUMENT:
      return TRITONSERVER_ERROR_INVALID_ARG;
    case GRPC_STATUS_UNAVAILABLE:
      return TRITONSERVER_ERROR_UNAVAILABLE;
    case GRPC_STATUS_NOT_FOUND:
      return TRITONSERVER_ERROR_NOT_FOUND;
    case GRPC_STATUS_UNIMPLEMENTED:
      return TRITONSERVER_ERROR_UNSUPPORTED;
    case GRPC_STATUS_ALREADY_EXISTS:
      return TRITONSERVER_ERROR_ALREADY_EXISTS;
    case GRPC_STATUS_INTERNAL:
      return TRITONSERVER_ERROR_INTERNAL;
    case GRPC_STATUS_CANCELLED:
      return TRITONSERVER_ERROR_CANCELLED;
    default:
      return TRITONSERVER_ERROR_UNKNOWN;
  }
}

/* ---- Exported API --------------------------------------------------------- */

TRITONSERVER_Error *TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char *msg) {
  /* Triton would crash on NULL; an empty message is the kinder reading. */
  if (msg == NULL) msg = "";
  size_t len = strlen(msg);
  TRITONSERVER_Error *err = error_alloc(code, len);
  memcpy(err->msg, msg, len);
  return err;
}

void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error) { free(error); }

/* NULL means success in this API; the getters answer harmlessly for it
 * rather than crash as Triton's do. */
TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error *error) {
  return error ? error->code : TRITONSERVER_ERROR_UNKNOWN;
}

const char *TRITONSERVER_ErrorCodeString(TRITONSERVER_Error *error) {
  return error ? api_error_code_string(error->code) : "OK";
}

const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error) {
  return error ? error->msg : "";
}
