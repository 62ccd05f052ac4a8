/* The call record that both routes fill (call.c: the in-process API,
 * call_direct.c: the cancellable route). The test thread writes the
 * description before sending and reads the rest under `mu`; runtime
 * workers add what arrives under `mu`. */
#ifndef NEREID_TEST_BACKENDS_CALL_INTERNAL_H
#define NEREID_TEST_BACKENDS_CALL_INTERNAL_H

#include <pthread.h>

#include "test/backends/call.h"

typedef struct {
  char name[64];
  TRITONSERVER_DataType datatype;
  int64_t shape[BT_MAX_DIMS];
  uint32_t dims;
  const uint8_t *data; /* the test's */
  uint64_t size;
  uint32_t pieces;
  bool raw; /* bt_call_raw_input */
} bt_input_t;

/* A request parameter the test set (in-process route only). */
typedef struct {
  char key[64];
  TRITONSERVER_ParameterType type;
  char s[256];
  int64_t i;
  bool b;
  double d;
} bt_param_t;

typedef struct bt_direct bt_direct_t;

struct bt_call {
  /* The request, as the test described it. */
  bt_server_t *server;
  char model[256];
  char *id; /* NULL: none */
  bt_input_t inputs[BT_MAX_TENSORS];
  uint32_t input_count;
  char *outputs[BT_MAX_TENSORS];
  uint32_t output_count;
  bt_param_t params[BT_MAX_PARAMS];
  uint32_t param_count;
  uint64_t timeout_us, priority;
  uint64_t sent_ns;
  TRITONSERVER_InferenceTrace *trace;        /* handed to ServerInferAsync */
  TRITONSERVER_ResponseAllocator *allocator; /* the in-process route's */
  bt_direct_t *direct;                       /* the cancellable route's */
  /* What came back. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bt_sent_t sent[BT_MAX_SENT];
  size_t sent_count;
  bool final_seen, released;
  size_t sent_before_release;
  uint64_t released_ns;
  /* The cancellable route: the test asked for a cancel; the owner actor
   * decided to stop (no cancel may be sent to it after that); it stopped. */
  bool cancel_asked, owner_stopping, owner_done;
};

/** Piece k of an input's data: bytes [*from, *to). */
void bt_input_piece(const bt_input_t *in, uint32_t k, uint64_t *from, uint64_t *to);

/** Adds what arrived, taking s's error text and output data. */
void bt_record_sent(bt_call_t *c, bt_sent_t *s);

/** The request came back from the server. */
void bt_record_released(bt_call_t *c);

/** The cancellable route's owner actor has stopped: nothing touches the
 *  call from its side any more. */
void bt_record_owner_done(bt_call_t *c);

/** Frees what the cancellable route kept (its owner has stopped). */
void bt_direct_free(bt_direct_t *d);

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t bt_now_ns(void);

#endif
