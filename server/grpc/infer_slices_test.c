/* The unary reply's head, written by hand (srv_infer_slices_encode, a
 * response without parameters), against the same reply built by
 * srv_infer_response_encode and serialized by upb
 * (srv_infer_slices_encode_message): the bytes must be the same, for ids
 * given or not, outputs asked for or not, empty names, shapes with no,
 * negative and large dimensions, unknown types, outputs without a buffer
 * and outputs large enough to go by reference. One thread. */
#include "server/grpc/infer_slices.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <stdlib.h>
#include <string.h>

#include "server/grpc/infer_response.h"
#include "server/model/model_bare.h"
#include "test/unit/unit.h"

static srv_model_t *model;

/* One output as the backend made it. */
typedef struct {
  const char *name;
  TRITONSERVER_DataType datatype;
  int64_t shape[4];
  uint32_t dims_count;
  uint64_t byte_size; /* 0 with no_buffer: TRITONBACKEND_OutputBuffer never called */
  bool no_buffer;
} out_t;

/* A reply's bytes, flat, malloc'd. */
typedef struct {
  unsigned char *p;
  size_t n;
} bytes_t;

static void flatten(grpc_byte_buffer *bb, bytes_t *out) {
  grpc_byte_buffer_reader reader;
  REQUIRE(grpc_byte_buffer_reader_init(&reader, bb));
  grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
  grpc_byte_buffer_reader_destroy(&reader);
  bytes_t b = {.n = GRPC_SLICE_LENGTH(all)};
  b.p = malloc(b.n ? b.n : 1);
  REQUIRE(b.p != NULL);
  memcpy(b.p, GRPC_SLICE_START_PTR(all), b.n);
  grpc_slice_unref(all);
  grpc_byte_buffer_destroy(bb);
  *out = b;
}

/* The reply to a request with `id` asking for `asked` (NULL: every output
 * made), carried by a response with `outs`; by hand when `by_hand`, else
 * through upb, into *out. Each call makes its own response: a taken buffer
 * is gone. */
static void reply(const char *id, const char **asked, uint32_t nasked, const out_t *outs,
                  uint32_t n, bool by_hand, bytes_t *out) {
  TRITONBACKEND_Request req;
  memset(&req, 0, sizeof req);
  req.model = model;
  req.id = id;
  const char *all[8];
  for (uint32_t i = 0; i < n; i++) all[i] = outs[i].name;
  req.outputs = asked != NULL ? asked : all;
  req.output_count = asked != NULL ? nasked : n;
  TRITONBACKEND_Response r;
  memset(&r, 0, sizeof r);
  struct TRITONBACKEND_Output o[8];
  memset(o, 0, sizeof o);
  for (uint32_t i = 0; i < n; i++) {
    o[i].name = (char *)outs[i].name;
    o[i].datatype = outs[i].datatype;
    o[i].shape = (int64_t *)outs[i].shape;
    o[i].dims_count = outs[i].dims_count;
    o[i].byte_size = outs[i].byte_size;
    if (!outs[i].no_buffer) {
      o[i].buffer = malloc(outs[i].byte_size ? outs[i].byte_size : 1);
      REQUIRE(o[i].buffer != NULL);
      memset(o[i].buffer, (int)('a' + i), outs[i].byte_size);
    }
  }
  r.outputs = o;
  r.output_count = n;
  upb_Arena *a = upb_Arena_New();
  grpc_byte_buffer *bb =
      by_hand ? srv_infer_slices_encode(model, &req, &r, a)
              : srv_infer_slices_encode_message(
                    srv_infer_response_encode(model, &req, &r, a), 0, &req, &r, a);
  flatten(bb, out);
  upb_Arena_Free(a);
  for (uint32_t i = 0; i < n; i++) free(o[i].buffer); /* NULL once taken */
}

static void same(const char *id, const char **asked, uint32_t nasked, const out_t *outs,
                 uint32_t n) {
  bytes_t hand = {NULL, 0}, upb = {NULL, 0};
  reply(id, asked, nasked, outs, n, true, &hand);
  reply(id, asked, nasked, outs, n, false, &upb);
  REQUIRE(hand.p != NULL && upb.p != NULL);
  CHECK_EQ_U64(hand.n, upb.n);
  CHECK(hand.n == upb.n && memcmp(hand.p, upb.p, hand.n) == 0);
  free(hand.p);
  free(upb.p);
}

static void simple_reply(void) {
  const out_t outs[] = {
      {"OUTPUT0", TRITONSERVER_TYPE_INT32, {1, 16}, 2, 64, false},
      {"OUTPUT1", TRITONSERVER_TYPE_INT32, {1, 16}, 2, 64, false},
  };
  same("", NULL, 0, outs, 2);
  same("request-7", NULL, 0, outs, 2);
  const char *one[] = {"OUTPUT1"};
  same("x", one, 1, outs, 2);
  /* Asked for by a copy of the name, not the string the output has: they
   * match by text (requested outputs compare pointers first). */
  char copy[] = "OUTPUT1";
  const char *by_text[] = {copy};
  same("x", by_text, 1, outs, 2);
  const char *none[] = {"OTHER"};
  same("", none, 1, outs, 2);
  same("", NULL, 0, outs, 0);
}

static void odd_outputs(void) {
  const out_t outs[] = {
      {"", TRITONSERVER_TYPE_FP32, {3}, 1, 12, false},
      {"NEG", TRITONSERVER_TYPE_INT64, {-1, 0, (int64_t)1 << 40, INT64_MIN}, 4, 0, false},
      {"SCALAR", TRITONSERVER_TYPE_BYTES, {0}, 0, 0, true},
      {"BAD_TYPE", (TRITONSERVER_DataType)99, {127, 128, 16384}, 3, 5, false},
      {"LONG_NAME_OF_MORE_THAN_ONE_HUNDRED_AND_TWENTY_SEVEN_BYTES_"
       "SO_THAT_ITS_LENGTH_TAKES_TWO_BYTES_OF_VARINT_ON_THE_WIRE_"
       "xxxxxxxxxxxxxxxxxxxxxxxxxx",
       TRITONSERVER_TYPE_BOOL,
       {2},
       1,
       2,
       false},
  };
  same("", NULL, 0, outs, 5);
  char id[300];
  memset(id, 'i', sizeof id - 1);
  id[sizeof id - 1] = '\0';
  same(id, NULL, 0, outs, 5);
}

static void large_outputs_by_reference(void) {
  const out_t outs[] = {
      {"BIG",
       TRITONSERVER_TYPE_UINT8,
       {SRV_INFER_SLICE_MIN + 3},
       1,
       SRV_INFER_SLICE_MIN + 3,
       false},
      {"SMALL", TRITONSERVER_TYPE_UINT8, {5}, 1, 5, false},
      {"BIG2",
       TRITONSERVER_TYPE_UINT8,
       {SRV_INFER_SLICE_MIN},
       1,
       SRV_INFER_SLICE_MIN,
       false},
  };
  same("big", NULL, 0, outs, 3);
  const char *some[] = {"BIG2", "SMALL"};
  same("", some, 2, outs, 3);
}

int main(void) {
  grpc_init();
  /* Only the model's name and version reach the reply. */
  if (srv_model_bare_from_text("m",
                               "name: 'm' backend: 'none'\n"
                               "input [{ name: 'IN' data_type: TYPE_INT32 dims: [1] }]\n"
                               "output [{ name: 'OUT' data_type: TYPE_INT32 dims: [1] }]",
                               &model) != NULL)
    return 1;
  static const unit_case_t cases[] = {
      UNIT_CASE(simple_reply),
      UNIT_CASE(odd_outputs),
      UNIT_CASE(large_outputs_by_reference),
  };
  int rc = unit_run("infer_slices", cases, sizeof cases / sizeof cases[0]);
  srv_model_bare_free(model);
  grpc_shutdown();
  return rc;
}
