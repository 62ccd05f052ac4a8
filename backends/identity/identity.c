/* The identity backend (Triton's `simple_identity`): OUTPUT<x> = INPUT<x>
 * for any datatype and shape, BYTES included, like Triton's identity
 * backend, with its parameter `execute_delay_ms` (a sleep at the start of
 * each Execute, for tests that need a slow model). Entry points: server
 * loading threads and each instance's execute thread; state is read-only
 * after model load. */
#include "backends/common/passthrough.h"
#include "backends/common/simple_backend.h"

static const bk_simple_backend_t kBackend = {
    .name = "identity",
    .validate = bk_passthrough_validate,
    .respond = bk_passthrough_respond,
    .execute_delay = true,
};

BK_DEFINE_SIMPLE_BACKEND(kBackend)
