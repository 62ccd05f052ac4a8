/* Tests of TRITONSERVER_BufferAttributes. Main thread. */
#include "server/api/buffer_attributes.h"

#include <string.h>

#include "server/api/error.h"
#include "test/unit/unit.h"

static void defaults(void) {
  TRITONSERVER_BufferAttributes *a = NULL;
  REQUIRE(TRITONSERVER_BufferAttributesNew(&a) == NULL && a != NULL);
  size_t size = 1;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
  int64_t id = 7;
  void *handle = &size;
  CHECK(TRITONSERVER_BufferAttributesByteSize(a, &size) == NULL && size == 0);
  CHECK(TRITONSERVER_BufferAttributesMemoryType(a, &type) == NULL &&
        type == TRITONSERVER_MEMORY_CPU);
  CHECK(TRITONSERVER_BufferAttributesMemoryTypeId(a, &id) == NULL && id == 0);
  CHECK(TRITONSERVER_BufferAttributesCudaIpcHandle(a, &handle) == NULL && handle == NULL);
  CHECK(TRITONSERVER_BufferAttributesDelete(a) == NULL);
}

static void setters_and_getters(void) {
  TRITONSERVER_BufferAttributes *a = NULL;
  REQUIRE(TRITONSERVER_BufferAttributesNew(&a) == NULL);
  CHECK(TRITONSERVER_BufferAttributesSetByteSize(a, 4096) == NULL);
  CHECK(TRITONSERVER_BufferAttributesSetMemoryType(a, TRITONSERVER_MEMORY_GPU) == NULL);
  CHECK(TRITONSERVER_BufferAttributesSetMemoryTypeId(a, 3) == NULL);
  size_t size;
  TRITONSERVER_MemoryType type;
  int64_t id;
  TRITONSERVER_BufferAttributesByteSize(a, &size);
  TRITONSERVER_BufferAttributesMemoryType(a, &type);
  TRITONSERVER_BufferAttributesMemoryTypeId(a, &id);
  CHECK_EQ_U64(size, 4096);
  CHECK_EQ_U64(type, TRITONSERVER_MEMORY_GPU);
  CHECK_EQ_U64(id, 3);
  TRITONSERVER_BufferAttributesDelete(a);
}

/* Triton copies the 64 bytes of a cudaIpcMemHandle_t: the caller's handle
 * may go away, the getter returns the copy. */
static void cuda_ipc_handle_is_copied(void) {
  TRITONSERVER_BufferAttributes *a = NULL;
  REQUIRE(TRITONSERVER_BufferAttributesNew(&a) == NULL);
  unsigned char handle[API_CUDA_IPC_HANDLE_SIZE];
  for (int i = 0; i < API_CUDA_IPC_HANDLE_SIZE; i++) handle[i] = (unsigned char)i;
  CHECK(TRITONSERVER_BufferAttributesSetCudaIpcHandle(a, handle) == NULL);
  memset(handle, 0xff, sizeof handle);
  void *got = NULL;
  CHECK(TRITONSERVER_BufferAttributesCudaIpcHandle(a, &got) == NULL);
  REQUIRE(got != NULL);
  CHECK(got != (void *)handle);
  const unsigned char *bytes = got;
  CHECK(bytes[0] == 0 && bytes[63] == 63);
  CHECK(TRITONSERVER_BufferAttributesSetCudaIpcHandle(a, NULL) == NULL);
  CHECK(TRITONSERVER_BufferAttributesCudaIpcHandle(a, &got) == NULL && got == NULL);
  TRITONSERVER_BufferAttributesDelete(a);
}

static void embedded_init(void) {
  TRITONSERVER_BufferAttributes a;
  memset(&a, 0x5a, sizeof a);
  api_buffer_attributes_init(&a);
  size_t size = 9;
  void *handle = &size;
  TRITONSERVER_BufferAttributesByteSize(&a, &size);
  TRITONSERVER_BufferAttributesCudaIpcHandle(&a, &handle);
  CHECK(size == 0 && handle == NULL && a.memory_type == TRITONSERVER_MEMORY_CPU);
}

static void null_arguments_fail(void) {
  TRITONSERVER_Error *err = TRITONSERVER_BufferAttributesNew(NULL);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  err = TRITONSERVER_BufferAttributesSetByteSize(NULL, 1);
  CHECK(err != NULL);
  TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_BufferAttributes *a = NULL;
  TRITONSERVER_BufferAttributesNew(&a);
  err = TRITONSERVER_BufferAttributesByteSize(a, NULL);
  CHECK(err != NULL);
  TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_BufferAttributesDelete(a);
  CHECK(TRITONSERVER_BufferAttributesDelete(NULL) == NULL);
}

UNIT_MAIN("api_buffer_attributes", UNIT_CASE(defaults), UNIT_CASE(setters_and_getters),
          UNIT_CASE(cuda_ipc_handle_is_copied), UNIT_CASE(embedded_init),
          UNIT_CASE(null_arguments_fail))
