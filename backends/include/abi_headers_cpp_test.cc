// C++17 compile check of Nereid's Triton API headers, the way Triton's
// backends (all C++) consume them. Everything is checked at compile time;
// the program only exits 0. Single-threaded.
#include <cstdint>
#include <type_traits>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

// C++ backends sometimes forward-declare the opaque types themselves; that
// must stay legal next to our typedefs.
struct TRITONSERVER_Error;
struct TRITONBACKEND_Request;

// Exact types: in C++ an enum is a distinct type, so these also catch an enum
// parameter swapped for its integer type.
static_assert(
    std::is_same<decltype(&TRITONBACKEND_RequestId),
                 TRITONSERVER_Error *(*)(TRITONBACKEND_Request *, const char **)>::value,
    "TRITONBACKEND_RequestId");
static_assert(
    std::is_same<decltype(&TRITONBACKEND_InputProperties),
                 TRITONSERVER_Error *(*)(TRITONBACKEND_Input *, const char **,
                                         TRITONSERVER_DataType *, const int64_t **,
                                         uint32_t *, uint64_t *, uint32_t *)>::value,
    "TRITONBACKEND_InputProperties");
static_assert(
    std::is_same<decltype(&TRITONBACKEND_OutputBuffer),
                 TRITONSERVER_Error *(*)(TRITONBACKEND_Output *, void **, uint64_t,
                                         TRITONSERVER_MemoryType *, int64_t *)>::value,
    "TRITONBACKEND_OutputBuffer");
static_assert(std::is_same<decltype(&TRITONBACKEND_ResponseOutput),
                           TRITONSERVER_Error *(*)(TRITONBACKEND_Response *,
                                                   TRITONBACKEND_Output **, const char *,
                                                   TRITONSERVER_DataType, const int64_t *,
                                                   uint32_t)>::value,
              "TRITONBACKEND_ResponseOutput");
static_assert(
    std::is_same<decltype(&TRITONSERVER_ErrorNew),
                 TRITONSERVER_Error *(*)(TRITONSERVER_Error_Code, const char *)>::value,
    "TRITONSERVER_ErrorNew");
static_assert(std::is_same<decltype(&TRITONSERVER_LogMessage),
                           TRITONSERVER_Error *(*)(TRITONSERVER_LogLevel, const char *,
                                                   int, const char *)>::value,
              "TRITONSERVER_LogMessage");

static_assert(TRITONSERVER_TYPE_BF16 == 14 && TRITONSERVER_TYPE_BYTES == 13,
              "data types");
static_assert(TRITONSERVER_MEMORY_GPU == 2, "memory types");
static_assert(TRITONSERVER_ERROR_CANCELLED == 7, "error codes");
static_assert(TRITONSERVER_RESPONSE_COMPLETE_FINAL == 1, "response flags");
static_assert(TRITONBACKEND_EXECUTION_DEVICE_BLOCKING == 1, "execution policy");
static_assert(TRITONSERVER_API_VERSION_MAJOR == 1 && TRITONSERVER_API_VERSION_MINOR == 34,
              "server API version");
static_assert(TRITONBACKEND_API_VERSION_MAJOR == 1 &&
                  TRITONBACKEND_API_VERSION_MINOR == 19,
              "backend API version");
static_assert(sizeof(TRITONSERVER_DataType) == sizeof(int), "enums are int-sized");

// A backend's entry points, defined as a C++ backend defines them: a
// conflicting extern "C" declaration in the header would not compile.
extern "C" TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *, TRITONBACKEND_Request **, const uint32_t) {
  return nullptr;
}
extern "C" TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *) {
  return nullptr;
}

int main() { return 0; }
