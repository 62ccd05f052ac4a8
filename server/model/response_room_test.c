/* A response's room (issue 21): outputs whose names, shapes and buffers
 * fit are carved out of the response itself; parts that do not are
 * malloc'd, mark the response as spilled, and srv_response_free frees
 * them (under ASan a leak or a bad free would show). */
#include <stdio.h>
#include <string.h>

#include "server/model/request.h"
#include "server/model/response.h"
#include "test/unit/unit.h"

/* Output `name` of `bytes` bytes, written; NULL if a call failed. */
static TRITONBACKEND_Output *output_with_buffer(TRITONBACKEND_Response *r,
                                                const char *name, uint64_t bytes) {
  const int64_t shape[1] = {(int64_t)bytes};
  TRITONBACKEND_Output *o = NULL;
  void *buffer = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  if (TRITONBACKEND_ResponseOutput(r, &o, name, TRITONSERVER_TYPE_UINT8, shape, 1) !=
          NULL ||
      TRITONBACKEND_OutputBuffer(o, &buffer, bytes, &type, &id) != NULL)
    return NULL;
  memset(buffer, 7, bytes);
  return o;
}

static void a_small_response_stays_in_its_room(void) {
  struct TRITONBACKEND_Request req = {.state = srv_infer_state_new(NULL)};
  TRITONBACKEND_Response *r = NULL;
  REQUIRE(TRITONBACKEND_ResponseNew(&r, &req) == NULL);
  TRITONBACKEND_Output *a = output_with_buffer(r, "OUTPUT0", 64);
  TRITONBACKEND_Output *b = output_with_buffer(r, "OUTPUT1", 64);
  REQUIRE(a != NULL && b != NULL);
  CHECK(!r->spilled);
  CHECK(srv_response_room_has(r, a->buffer) && srv_response_room_has(r, b->name));
  srv_response_free(r);
  srv_infer_state_unref(req.state);
}

static void parts_that_do_not_fit_are_freed_with_the_response(void) {
  struct TRITONBACKEND_Request req = {.state = srv_infer_state_new(NULL)};
  TRITONBACKEND_Response *r = NULL;
  REQUIRE(TRITONBACKEND_ResponseNew(&r, &req) == NULL);
  TRITONBACKEND_Output *small = output_with_buffer(r, "OUTPUT0", 16);
  REQUIRE(small != NULL);
  CHECK(!r->spilled);
  char name[SRV_RESPONSE_INLINE_BYTES + 8];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  TRITONBACKEND_Output *big = output_with_buffer(r, name, 4 * SRV_RESPONSE_INLINE_BYTES);
  REQUIRE(big != NULL);
  CHECK(r->spilled);
  CHECK(srv_response_room_has(r, small->buffer));
  CHECK(!srv_response_room_has(r, big->buffer) && !srv_response_room_has(r, big->name));
  /* More outputs than the inline ones: the array moves to the heap too. */
  for (int i = 0; i < SRV_RESPONSE_INLINE_OUTPUTS; i++) {
    char more[16];
    snprintf(more, sizeof more, "MORE%d", i);
    CHECK(output_with_buffer(r, more, 8) != NULL);
  }
  CHECK(r->outputs != r->inline_outputs);
  srv_response_free(r);
  srv_infer_state_unref(req.state);
}

UNIT_MAIN("response_room", UNIT_CASE(a_small_response_stays_in_its_room),
          UNIT_CASE(parts_that_do_not_fit_are_freed_with_the_response))
