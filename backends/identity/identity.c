/* The identity backend (Triton's `simple_identity`): OUTPUT<x> = INPUT<x>
 * for any datatype and shape, BYTES included, like Triton's identity
 * backend. Entry points: server loading threads and each instance's
 * execute thread; state is read-only after model load. */
#include "backends/common/passthrough.h"
#include "backends/common/simple_backend.h"

static const bk_simple_backend_t kBackend = {"identity", bk_passthrough_validate,
                                             bk_passthrough_respond};

BK_DEFINE_SIMPLE_BACKEND(kBackend)
