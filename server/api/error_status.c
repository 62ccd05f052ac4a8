/* Server statuses as API errors (see error_status.h). */
#include "server/api/error_status.h"

#include "server/api/error.h"

TRITONSERVER_Error *api_error_from_status(srv_status_t *st) {
  TRITONSERVER_Error_Code code;
  switch (srv_status_code(st)) {
    case GRPC_STATUS_INVALID_ARGUMENT:
      code = TRITONSERVER_ERROR_INVALID_ARG;
      break;
    case GRPC_STATUS_UNAVAILABLE:
      code = TRITONSERVER_ERROR_UNAVAILABLE;
      break;
    case GRPC_STATUS_NOT_FOUND:
      code = TRITONSERVER_ERROR_NOT_FOUND;
      break;
    case GRPC_STATUS_UNIMPLEMENTED:
      code = TRITONSERVER_ERROR_UNSUPPORTED;
      break;
    case GRPC_STATUS_ALREADY_EXISTS:
      code = TRITONSERVER_ERROR_ALREADY_EXISTS;
      break;
    case GRPC_STATUS_INTERNAL:
      code = TRITONSERVER_ERROR_INTERNAL;
      break;
    default:
      code = TRITONSERVER_ERROR_UNKNOWN;
  }
  TRITONSERVER_Error *err = api_error_new(code, "%s", srv_status_message(st));
  srv_status_free(st);
  return err;
}
