/* Stream write queue (see stream_writes.h). */
#include "server/grpc/stream_writes.h"

#include <stdlib.h>

#include "server/common/log.h"

#define FIRST_CAP 64u

/* Unwraps the ring into a new one twice the size, oldest first. */
static void grow(srv_write_queue_t *q) {
  uint32_t cap = q->cap ? 2 * q->cap : FIRST_CAP;
  srv_write_t *slots = malloc(cap * sizeof *slots);
  if (slots == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < q->len; i++) slots[i] = q->slots[(q->head + i) & (q->cap - 1)];
  free(q->slots);
  q->slots = slots;
  q->head = 0;
  q->cap = cap;
}

void srv_write_queue_push(srv_write_queue_t *q, grpc_byte_buffer *bb,
                          srv_write_tally_t *tally, void *note) {
  if (q->len == q->cap) grow(q);
  /* O(1): a raw buffer keeps its length. */
  size_t bytes = grpc_byte_buffer_length(bb);
  q->slots[(q->head + q->len) & (q->cap - 1)] =
      (srv_write_t){.bb = bb, .tally = tally, .bytes = bytes, .note = note};
  q->len++;
  q->bytes += bytes;
  if (tally != NULL) {
    tally->count++;
    tally->bytes += bytes;
  }
}

grpc_byte_buffer *srv_write_queue_pop(srv_write_queue_t *q, srv_write_tally_t **tally,
                                      void **note) {
  *tally = NULL;
  *note = NULL;
  if (q->len == 0) return NULL;
  srv_write_t w = q->slots[q->head];
  q->head = (q->head + 1) & (q->cap - 1);
  q->len--;
  q->bytes -= w.bytes;
  if (w.tally != NULL) {
    w.tally->count--;
    w.tally->bytes -= w.bytes;
  }
  *tally = w.tally;
  *note = w.note;
  return w.bb;
}

void srv_write_queue_free(srv_write_queue_t *q) {
  if (q->len != 0) SRV_FATAL("stream write queue freed with %u messages", q->len);
  free(q->slots);
  q->slots = NULL;
  q->head = q->len = q->cap = 0;
  q->bytes = 0;
}
