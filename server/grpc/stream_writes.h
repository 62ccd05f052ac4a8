/* A stream's write queue: serialized messages waiting for the one send that
 * gRPC allows in flight per call, in the order they were made. A ring that
 * doubles when full. It counts what waits, in messages and bytes, in total
 * and per tally (the request each message answers), so that the stream can
 * bound both (stream_rpc.c). One actor (the stream's) owns a queue and the
 * tallies of its messages. */
#ifndef NEREID_SERVER_GRPC_STREAM_WRITES_H
#define NEREID_SERVER_GRPC_STREAM_WRITES_H

#include <grpc/byte_buffer.h>
#include <stddef.h>
#include <stdint.h>

/** What one owner (a request of the stream) has waiting in the queue. */
typedef struct {
  uint32_t count;
  uint64_t bytes;
} srv_write_tally_t;

typedef struct {
  grpc_byte_buffer *bb;
  srv_write_tally_t *tally; /* NULL: counted in the queue's totals only */
  size_t bytes;             /* bb's length when it was queued */
  void *note;               /* the pusher's, given back with bb */
} srv_write_t;

typedef struct {
  srv_write_t *slots;
  uint32_t head; /* index of the oldest message */
  uint32_t len;
  uint32_t cap;   /* 0 or a power of two */
  uint64_t bytes; /* of every queued message */
} srv_write_queue_t;

/** Appends bb, counted in the totals and in *tally (may be NULL); the queue
 *  owns bb until popped, and tally must outlive it there. `note` (may be
 *  NULL) comes back with bb (a traced response's send stamps). */
void srv_write_queue_push(srv_write_queue_t *q, grpc_byte_buffer *bb,
                          srv_write_tally_t *tally, void *note);

/** The oldest message, now the caller's, taken off the totals and off its
 *  tally, which *tally receives (NULL when it had none), with its note;
 *  NULL when the queue is empty. */
grpc_byte_buffer *srv_write_queue_pop(srv_write_queue_t *q, srv_write_tally_t **tally,
                                      void **note);

/** Frees the ring of an empty queue; the queue may be reused afterwards. */
void srv_write_queue_free(srv_write_queue_t *q);

#endif
