/* TRITONBACKEND_OutputBufferAttributes and TRITONBACKEND_InputBufferAttributes:
 * each describes the buffer the backend got, host memory or a client's
 * shared-memory region. Main thread. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/model/response.h"
#include "server/shm/shm.h"
#include "test/unit/unit.h"

static size_t size_of(TRITONSERVER_BufferAttributes *a) {
  size_t n = 0;
  CHECK(TRITONSERVER_BufferAttributesByteSize(a, &n) == NULL);
  return n;
}

static TRITONSERVER_MemoryType type_of(TRITONSERVER_BufferAttributes *a) {
  TRITONSERVER_MemoryType t = TRITONSERVER_MEMORY_CPU_PINNED;
  CHECK(TRITONSERVER_BufferAttributesMemoryType(a, &t) == NULL);
  return t;
}

static int64_t id_of(TRITONSERVER_BufferAttributes *a) {
  int64_t id = -1;
  CHECK(TRITONSERVER_BufferAttributesMemoryTypeId(a, &id) == NULL);
  return id;
}

static void *handle_of(TRITONSERVER_BufferAttributes *a) {
  void *h = &h;
  CHECK(TRITONSERVER_BufferAttributesCudaIpcHandle(a, &h) == NULL);
  return h;
}

/* A response to req with one INT32 output "OUT" of `elements`; NULL
 * output when the API refused. */
static TRITONBACKEND_Response *response_with_output(TRITONBACKEND_Request *req,
                                                    int64_t elements,
                                                    TRITONBACKEND_Output **out) {
  TRITONBACKEND_Response *r = NULL;
  *out = NULL;
  CHECK(TRITONBACKEND_ResponseNew(&r, req) == NULL);
  if (r != NULL)
    CHECK(TRITONBACKEND_ResponseOutput(r, out, "OUT", TRITONSERVER_TYPE_INT32, &elements,
                                       1) == NULL);
  return r;
}

static void output_in_host_memory(void) {
  TRITONBACKEND_Request req = {.state = srv_infer_state_new(NULL)};
  TRITONBACKEND_Output *out = NULL;
  TRITONBACKEND_Response *r = response_with_output(&req, 4, &out);
  REQUIRE(out != NULL);
  TRITONSERVER_BufferAttributes *a = NULL;
  /* Before the buffer: Triton's defaults. */
  REQUIRE(TRITONBACKEND_OutputBufferAttributes(out, &a) == NULL && a != NULL);
  CHECK_EQ_U64(size_of(a), 0);
  CHECK(type_of(a) == TRITONSERVER_MEMORY_CPU);
  void *buf = NULL;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_GPU; /* asked; host given */
  int64_t id = 3;
  REQUIRE(TRITONBACKEND_OutputBuffer(out, &buf, 16, &mt, &id) == NULL);
  REQUIRE(TRITONBACKEND_OutputBufferAttributes(out, &a) == NULL);
  CHECK_EQ_U64(size_of(a), 16);
  CHECK(type_of(a) == mt && mt == TRITONSERVER_MEMORY_CPU);
  CHECK(id_of(a) == 0);
  CHECK(handle_of(a) == NULL);
  TRITONSERVER_Error *err = TRITONBACKEND_OutputBufferAttributes(out, NULL);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  CHECK(TRITONBACKEND_ResponseDelete(r) == NULL);
  srv_infer_state_unref(req.state);
}

/* A client's system region: the backend writes in place, and the
 * attributes say so (host memory, the region's size for the output). */
static void output_in_system_region(void) {
  char key[64];
  snprintf(key, sizeof key, "/nereid_bufattr_%d", (int)getpid());
  int fd = shm_open(key, O_RDWR | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, 4096) == 0);
  close(fd);
  srv_shm_t *shm = srv_shm_new(true);
  srv_status_t *st = srv_shm_register_system(shm, "r", 1, key, strlen(key), 0, 4096);
  CHECK(st == NULL);
  srv_shm_ref_t ref;
  if (st == NULL) st = srv_shm_acquire(shm, "r", 1, 64, 128, &ref);
  if (st != NULL) {
    fprintf(stderr, "  %s\n", srv_status_message(st));
    srv_status_free(st);
    srv_shm_free(shm);
    shm_unlink(key);
    REQUIRE(false);
  }
  ref.output = "OUT";
  CHECK(srv_shm_cuda_ipc_handle(&ref) == NULL);
  TRITONBACKEND_Request req = {.state = srv_infer_state_new(NULL)};
  req.state->shm = srv_shm_uses_new(&ref, 1); /* freed with the state */
  TRITONBACKEND_Output *out = NULL;
  TRITONBACKEND_Response *r = response_with_output(&req, 8, &out);
  REQUIRE(out != NULL);
  void *buf = NULL;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  REQUIRE(TRITONBACKEND_OutputBuffer(out, &buf, 32, &mt, &id) == NULL);
  CHECK(out->in_place && buf == req.state->shm->refs[0].addr);
  TRITONSERVER_BufferAttributes *a = NULL;
  REQUIRE(TRITONBACKEND_OutputBufferAttributes(out, &a) == NULL);
  CHECK_EQ_U64(size_of(a), 32);
  CHECK(type_of(a) == TRITONSERVER_MEMORY_CPU);
  CHECK(handle_of(a) == NULL);
  TRITONBACKEND_ResponseDelete(r);
  srv_infer_state_unref(req.state);
  srv_shm_free(shm);
  shm_unlink(key);
}

/* Two buffers, one in (described) GPU memory: each index its own
 * attributes, stable across calls; a bad index fails and clears both. */
static void input_buffers(void) {
  static const char host[8] = "abcdefg";
  srv_buffer_t bufs[2] = {
      {.base = host, .size = 8},
      {.base = (const void *)0x1000, .size = 24, .memory_type = TRITONSERVER_MEMORY_GPU,
       .memory_type_id = 1},
  };
  const int64_t shape[1] = {32};
  struct TRITONBACKEND_Input in = {.name = "IN",
                                   .datatype = TRITONSERVER_TYPE_UINT8,
                                   .shape = shape,
                                   .dims_count = 1,
                                   .byte_size = 32,
                                   .buffers = bufs,
                                   .buffer_count = 2};
  const void *base = NULL;
  TRITONSERVER_BufferAttributes *a0 = NULL, *a1 = NULL, *again = NULL;
  REQUIRE(TRITONBACKEND_InputBufferAttributes(&in, 0, &base, &a0) == NULL);
  CHECK(base == host);
  CHECK_EQ_U64(size_of(a0), 8);
  CHECK(type_of(a0) == TRITONSERVER_MEMORY_CPU && id_of(a0) == 0);
  REQUIRE(TRITONBACKEND_InputBufferAttributes(&in, 1, &base, &a1) == NULL);
  CHECK(base == bufs[1].base);
  CHECK_EQ_U64(size_of(a1), 24);
  CHECK(type_of(a1) == TRITONSERVER_MEMORY_GPU && id_of(a1) == 1);
  CHECK(handle_of(a1) == NULL);
  REQUIRE(TRITONBACKEND_InputBufferAttributes(&in, 0, &base, &again) == NULL);
  CHECK(again == a0 && size_of(a0) == 8);
  TRITONSERVER_Error *err = TRITONBACKEND_InputBufferAttributes(&in, 2, &base, &again);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(base == NULL && again == NULL);
  TRITONSERVER_ErrorDelete(err);
  srv_input_release(&in); /* what the release does; LSan sees a leak otherwise */
  CHECK(in.attrs == NULL);
}

UNIT_MAIN("buffer_attributes_io", UNIT_CASE(output_in_host_memory),
          UNIT_CASE(output_in_system_region), UNIT_CASE(input_buffers))
