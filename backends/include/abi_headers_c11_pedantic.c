/* Compile-only: the Triton API headers are valid ISO C11 (-Wpedantic). Built
 * by `bazel test //backends/include:all`; no code runs. */
#include "triton/core/tritonbackend.h"

/* A translation unit must declare something; this also checks an enum. */
_Static_assert(TRITONSERVER_TYPE_BF16 == 14, "ISO C sees Triton's values");
