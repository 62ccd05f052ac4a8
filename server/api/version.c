/* TRITONSERVER_ApiVersion: the version of tritonserver.h that Nereid
 * implements, as the header it was built with declares it. Any thread. */
#include "server/api/error.h"
#include "triton/core/tritonserver.h"

TRITONSERVER_Error *TRITONSERVER_ApiVersion(uint32_t *major, uint32_t *minor) {
  /* Triton writes through both without a check; NULL is refused here. */
  if (major == NULL || minor == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "major and minor must not be NULL");
  *major = TRITONSERVER_API_VERSION_MAJOR;
  *minor = TRITONSERVER_API_VERSION_MINOR;
  return NULL;
}
