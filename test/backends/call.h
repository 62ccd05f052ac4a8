/* One inference request of a backend test, and everything the client got
 * back for it: the test describes the request (inputs, split into several
 * buffers if it likes, id, requested outputs), sends it to a running
 * server (fixture.h) and reads the responses, final flags and release as a
 * client would see them. Two routes:
 *   - bt_call_send: Triton's in-process API (TRITONSERVER_InferenceRequest*,
 *     TRITONSERVER_ServerInferAsync), the route a BLS backend takes;
 *   - bt_call_send_cancellable: owned by an actor of its own and sent
 *     through the core's frontend interface (core.h), as the gRPC frontend
 *     sends ModelInfer (call_direct.c), so that a case cancels it as a
 *     client's cancel arrives (TRITONSERVER_InferenceRequestCancel, the
 *     in-process cancel, is tested by pyshape_test and bls_flight_test).
 * The test thread builds, sends, waits and frees; runtime workers record
 * what arrives, under the call's lock. */
#ifndef NEREID_TEST_BACKENDS_CALL_H
#define NEREID_TEST_BACKENDS_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "test/backends/fixture.h"

#define BT_MAX_DIMS 8
#define BT_MAX_TENSORS 8
#define BT_MAX_PIECES 8
#define BT_MAX_SENT 256
#define BT_MAX_PARAMS 16

/* An output tensor as the client received it (a copy of its bytes). */
typedef struct {
  char name[64];
  TRITONSERVER_DataType datatype;
  int64_t shape[BT_MAX_DIMS];
  uint32_t dims;
  void *data; /* NULL when size is 0 */
  uint64_t size;
} bt_tensor_t;

/* A response, or flags without one, as the client received it. */
typedef struct {
  uint64_t seq;                 /* order of arrival across all calls */
  uint32_t flags;               /* TRITONSERVER_RESPONSE_COMPLETE_FINAL or 0 */
  bool is_response;             /* false: flags only (ResponseFactorySendFlags) */
  TRITONSERVER_Error_Code code; /* meaningful when error != NULL */
  char *error;                  /* NULL on success */
  bt_tensor_t outputs[BT_MAX_TENSORS];
  uint32_t output_count;
} bt_sent_t;

typedef struct bt_call bt_call_t;

/** A request for `model` on a running server, not sent yet. */
bt_call_t *bt_call_new(bt_server_t *s, const char *model);

/** Frees the call and what it received. Before sending, or once
 *  bt_call_wait_done said it is done. */
void bt_call_free(bt_call_t *c);

/** Sets the request's id (copied). Without one the request has none. */
void bt_call_id(bt_call_t *c, const char *id);

/** Adds an input whose data (not copied: keep it alive until the call is
 *  done) the server receives split into `pieces` buffers of nearly equal
 *  size (empty ones left out). */
void bt_call_input(bt_call_t *c, const char *name, TRITONSERVER_DataType datatype,
                   const int64_t *shape, uint32_t dims, const void *data, uint64_t size,
                   uint32_t pieces);

/** Adds a raw input (TRITONSERVER_InferenceRequestAddRawInput: type and
 *  shape come from the model's only input) with data as bt_call_input.
 *  The in-process route (bt_call_send) only. */
void bt_call_raw_input(bt_call_t *c, const char *name, const void *data, uint64_t size,
                       uint32_t pieces);

/** Asks for an output (copied). Asking for none gets all of the model's,
 *  as in Triton. */
void bt_call_output(bt_call_t *c, const char *name);

/** A trace that bt_call_send hands to TRITONSERVER_ServerInferAsync (the
 *  server owns it once the request is taken). */
void bt_call_trace(bt_call_t *c, TRITONSERVER_InferenceTrace *trace);

/** Adds a request parameter of each type (key and string copied; at most
 *  BT_MAX_PARAMS), for the in-process route. */
void bt_call_param_string(bt_call_t *c, const char *key, const char *value);
void bt_call_param_int(bt_call_t *c, const char *key, int64_t value);
void bt_call_param_bool(bt_call_t *c, const char *key, bool value);
void bt_call_param_double(bt_call_t *c, const char *key, double value);

/** The request's queue timeout and priority (in-process route; 0: none). */
void bt_call_timeout(bt_call_t *c, uint64_t timeout_us);
void bt_call_priority(bt_call_t *c, uint64_t priority);

/** Sends the request through the in-process API, with the parameters,
 *  timeout and priority set above; false, printing why, when
 *  the server refused it (nothing will come back then). */
bool bt_call_send(bt_call_t *c);

/** Whether the server refuses the request at TRITONSERVER_ServerInferAsync
 *  with `code` and a message containing `needle` (printed when not). */
bool bt_call_refused(bt_call_t *c, TRITONSERVER_Error_Code code, const char *needle);

/** Sends the request through the core's frontend interface, so that
 *  bt_call_cancel can cancel it; false, printing why, when refused. */
bool bt_call_send_cancellable(bt_call_t *c);

/** Cancels a call sent with bt_call_send_cancellable, as a client that
 *  goes away does: backends see it through TRITONBACKEND_RequestIsCancelled
 *  and ResponseFactoryIsCancelled; a request still queued is answered
 *  CANCELLED without running. Any thread, once, before bt_call_free. */
void bt_call_cancel(bt_call_t *c);

/** Waits until the call got its final flag and its request was released
 *  (and, on the cancellable route, its owner stopped); false after
 *  timeout_ms. */
bool bt_call_wait_done(bt_call_t *c, int timeout_ms);

size_t bt_call_sent_count(bt_call_t *c);

/** Snapshot of what came i-th, under the call's lock (the struct, not a
 *  deep copy: the outputs stay the call's). */
bt_sent_t bt_call_sent(bt_call_t *c, size_t i);

/** Whether the request was released; then *sent_before (may be NULL) is how
 *  many responses had come before the release, and *after_ns (may be NULL)
 *  the time from sending to the release. */
bool bt_call_released(bt_call_t *c, size_t *sent_before, uint64_t *after_ns);

/** Output `name` of a received response, or NULL. */
const bt_tensor_t *bt_sent_output(const bt_sent_t *sent, const char *name);

/** Element i of a BYTES tensor copied into buf as a C string; false when
 *  there is no element i. */
bool bt_bytes_at(const bt_tensor_t *t, size_t i, char *buf, size_t len);

/** Serializes C strings as BYTES tensor data into buf; returns the size. */
size_t bt_bytes_make(uint8_t *buf, const char *const *elems, size_t count);

#endif
