/* The stream write queue: FIFO order across ring growth and wrap-around,
 * and its counts (in all and per tally) through pushes and pops. */
#include "server/grpc/stream_writes.h"

#include <grpc/grpc.h>
#include <grpc/slice.h>

#include "test/unit/unit.h"

/* A message of n bytes whose first byte is tag. */
static grpc_byte_buffer *message(size_t n, uint8_t tag) {
  grpc_slice s = grpc_slice_malloc(n);
  memset(GRPC_SLICE_START_PTR(s), 0, n);
  GRPC_SLICE_START_PTR(s)[0] = tag;
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

static uint8_t tag_of(grpc_byte_buffer *bb) {
  return GRPC_SLICE_START_PTR(bb->data.raw.slice_buffer.slices[0])[0];
}

static void counts_follow_pushes_and_pops(void) {
  grpc_init();
  srv_write_queue_t q = {0};
  srv_write_tally_t a = {0}, b = {0};
  srv_write_queue_push(&q, message(10, 1), &a, NULL);
  srv_write_queue_push(&q, message(20, 2), &b, NULL);
  srv_write_queue_push(&q, message(30, 3), NULL, &b); /* a note comes back */
  srv_write_queue_push(&q, message(40, 4), &a, NULL);
  CHECK_EQ_U64(q.len, 4);
  CHECK_EQ_U64(q.bytes, 100);
  CHECK_EQ_U64(a.count, 2);
  CHECK_EQ_U64(a.bytes, 50);
  CHECK_EQ_U64(b.count, 1);
  CHECK_EQ_U64(b.bytes, 20);
  srv_write_tally_t *t;
  void *note;
  grpc_byte_buffer *bb = srv_write_queue_pop(&q, &t, &note);
  CHECK(t == &a && tag_of(bb) == 1 && note == NULL);
  CHECK_EQ_U64(a.count, 1);
  CHECK_EQ_U64(a.bytes, 40);
  CHECK_EQ_U64(q.bytes, 90);
  grpc_byte_buffer_destroy(bb);
  bb = srv_write_queue_pop(&q, &t, &note);
  CHECK(t == &b && tag_of(bb) == 2 && b.count == 0 && b.bytes == 0);
  grpc_byte_buffer_destroy(bb);
  bb = srv_write_queue_pop(&q, &t, &note);
  CHECK(t == NULL && tag_of(bb) == 3 && note == &b);
  grpc_byte_buffer_destroy(bb);
  bb = srv_write_queue_pop(&q, &t, &note);
  CHECK(t == &a && tag_of(bb) == 4 && a.count == 0 && a.bytes == 0);
  grpc_byte_buffer_destroy(bb);
  CHECK(srv_write_queue_pop(&q, &t, &note) == NULL && t == NULL);
  CHECK_EQ_U64(q.len, 0);
  CHECK_EQ_U64(q.bytes, 0);
  srv_write_queue_free(&q);
  grpc_shutdown();
}

/* The ring wraps, then grows while wrapped: order and counts survive. */
static void order_survives_wrap_and_growth(void) {
  grpc_init();
  srv_write_queue_t q = {0};
  srv_write_tally_t t = {0};
  uint8_t next_in = 0, next_out = 0;
  void *note;
  for (int round = 0; round < 50; round++) {
    for (int i = 0; i < 7; i++) srv_write_queue_push(&q, message(1, next_in++), &t, NULL);
    for (int i = 0; i < 5; i++) {
      srv_write_tally_t *got;
      grpc_byte_buffer *bb = srv_write_queue_pop(&q, &got, &note);
      REQUIRE(bb != NULL);
      CHECK_EQ_U64(tag_of(bb), next_out++);
      grpc_byte_buffer_destroy(bb);
    }
  }
  CHECK_EQ_U64(q.len, 100);
  CHECK_EQ_U64(t.count, 100);
  CHECK_EQ_U64(q.bytes, 100);
  srv_write_tally_t *got;
  grpc_byte_buffer *bb;
  while ((bb = srv_write_queue_pop(&q, &got, &note)) != NULL) {
    CHECK_EQ_U64(tag_of(bb), next_out++);
    grpc_byte_buffer_destroy(bb);
  }
  CHECK_EQ_U64(t.count, 0);
  CHECK_EQ_U64(t.bytes, 0);
  srv_write_queue_free(&q);
  grpc_shutdown();
}

UNIT_MAIN("stream_writes", UNIT_CASE(counts_follow_pushes_and_pops),
          UNIT_CASE(order_survives_wrap_and_growth))
