/* TRITONSERVER_ApiVersion answers the version the header declares (1.34,
 * DESIGN.md). Main thread. */
#include "test/unit/unit.h"
#include "triton/core/tritonserver.h"

static void declared_version(void) {
  uint32_t major = 0, minor = 0;
  REQUIRE(TRITONSERVER_ApiVersion(&major, &minor) == NULL);
  CHECK_EQ_U64(major, TRITONSERVER_API_VERSION_MAJOR);
  CHECK_EQ_U64(minor, TRITONSERVER_API_VERSION_MINOR);
  CHECK(major == 1 && minor == 34);
  TRITONSERVER_Error *err = TRITONSERVER_ApiVersion(NULL, &minor);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
}

UNIT_MAIN("version", UNIT_CASE(declared_version))
