/* Server statuses as API errors (see error_status.h). */
#include "server/api/error_status.h"

#include "server/api/error.h"

TRITONSERVER_Error *api_error_from_status(srv_status_t *st) {
  TRITONSERVER_Error *err = api_error_new(api_error_code_from_grpc(srv_status_code(st)), "%s",
                                          srv_status_message(st));
  srv_status_free(st);
  return err;
}
