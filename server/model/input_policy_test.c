/* TRITONBACKEND_InputPropertiesForHostPolicy and ...InputBufferForHostPolicy:
 * an instance whose host policy has data of its own reads that, any other
 * reads the input's own data, as in Triton. Main thread. */
#include "server/model/request.h"
#include "test/unit/unit.h"

static void policy_data_or_own(void) {
  static const char own[6] = "own-a", gpu[3] = "gp";
  const srv_buffer_t own_bufs[2] = {{.base = own, .size = 3}, {.base = own + 3, .size = 3}};
  const srv_buffer_t gpu_bufs[1] = {{.base = gpu, .size = 3}};
  const srv_policy_data_t policies[1] = {
      {.policy = "gpu_0", .buffers = gpu_bufs, .buffer_count = 1, .byte_size = 3}};
  const int64_t shape[1] = {6};
  struct TRITONBACKEND_Input in = {.name = "IN",
                                   .datatype = TRITONSERVER_TYPE_UINT8,
                                   .shape = shape,
                                   .dims_count = 1,
                                   .byte_size = 6,
                                   .buffers = own_bufs,
                                   .buffer_count = 2,
                                   .policies = policies,
                                   .policy_count = 1};
  uint64_t size = 0;
  uint32_t count = 0;
  REQUIRE(TRITONBACKEND_InputPropertiesForHostPolicy(&in, "gpu_0", NULL, NULL, NULL, NULL,
                                                     &size, &count) == NULL);
  CHECK(size == 3 && count == 1);
  REQUIRE(TRITONBACKEND_InputPropertiesForHostPolicy(&in, "cpu", NULL, NULL, NULL, NULL,
                                                     &size, &count) == NULL);
  CHECK(size == 6 && count == 2);
  REQUIRE(TRITONBACKEND_InputPropertiesForHostPolicy(&in, NULL, NULL, NULL, NULL, NULL,
                                                     &size, &count) == NULL);
  CHECK(size == 6 && count == 2);
  const void *base = NULL;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  REQUIRE(TRITONBACKEND_InputBufferForHostPolicy(&in, "gpu_0", 0, &base, &size, &mt, &id) ==
          NULL);
  CHECK(base == gpu && size == 3);
  REQUIRE(TRITONBACKEND_InputBufferForHostPolicy(&in, "cpu", 1, &base, &size, &mt, &id) ==
          NULL);
  CHECK(base == own + 3 && size == 3);
  TRITONSERVER_Error *err =
      TRITONBACKEND_InputBufferForHostPolicy(&in, "gpu_0", 1, &base, &size, &mt, &id);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  srv_input_release(&in);
}

UNIT_MAIN("input_policy", UNIT_CASE(policy_data_or_own))
