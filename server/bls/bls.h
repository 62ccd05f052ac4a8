/* The in-process inference API of tritonserver.h ("BLS": a backend, or an
 * embedding program, sends requests to models): the user-owned request
 * (TRITONSERVER_InferenceRequest), the response allocator, and the
 * responses the user receives (TRITONSERVER_InferenceResponse). A request
 * is touched only by the thread that owns it: the user's until
 * TRITONSERVER_ServerInferAsync succeeds, then nobody's (the server works
 * on its own copy) until the release callback hands it back. See
 * bls_infer.c for the actor that owns one request in flight. */
#ifndef NEREID_SERVER_BLS_BLS_H
#define NEREID_SERVER_BLS_BLS_H

#include <stdint.h>

#include "server/common/status.h"
#include "server/model/model.h"
#include "server/model/request_params.h"

/** A parameter as the user set it; key and string value are the request's. */
typedef struct {
  char *key;
  TRITONSERVER_ParameterType type;
  srv_param_value_t value;
} srv_bls_param_t;

/** Data of an input in pieces the user appended, referenced not copied. */
typedef struct {
  srv_buffer_t *buffers;
  uint32_t buffer_count, buffer_cap;
} srv_bls_data_t;

/** An input's data for one host policy
 *  (TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy): what an
 *  instance of that policy reads instead of the input's own data. */
typedef struct {
  char *policy;
  srv_bls_data_t data;
} srv_bls_policy_data_t;

/** An input as the user added it: its data is referenced, never copied. */
typedef struct {
  char *name;
  TRITONSERVER_DataType datatype;
  int64_t *shape; /* batch dimension included */
  uint32_t dims_count;
  srv_buffer_t *buffers;
  uint32_t buffer_count, buffer_cap;
  srv_bls_policy_data_t *policies;
  uint32_t policy_count, policy_cap;
  /* TRITONSERVER_InferenceRequestAddRawInput: type and shape are the
   * model's one input's, its name too, found at ServerInferAsync. */
  bool raw;
} srv_bls_input_t;

/** The raw input of u (added by TRITONSERVER_InferenceRequestAddRawInput)
 *  as the model's one input, with Triton's checks and deduction: the
 *  config's name, type and shape (a batch dimension of 1 when the model
 *  batches, the one variable dimension from the byte size; a BYTES input
 *  must have one element, and gets its 4-byte length prepended). *out
 *  points into u and `arena`. NULL status and out->name NULL when u has
 *  no raw input. On the caller's thread. */
srv_status_t *srv_bls_raw_input(const srv_model_t *m, const TRITONSERVER_InferenceRequest *u,
                                upb_Arena *arena, srv_bls_input_t *out);

struct TRITONSERVER_InferenceRequest {
  struct srv_server *server;
  srv_model_t *model; /* resolved by TRITONSERVER_InferenceRequestNew */
  char *id;           /* never NULL */
  uint32_t flags;
  uint64_t correlation_id;
  char *correlation_id_string; /* NULL unless a string id was set */
  srv_bls_input_t *inputs;
  uint32_t input_count, input_cap;
  char **outputs; /* requested outputs; none = all of the model's */
  uint32_t output_count, output_cap;
  TRITONSERVER_InferenceRequestReleaseFn_t release_fn;
  void *release_userp;
  TRITONSERVER_ResponseAllocator *allocator;
  void *allocator_userp;
  TRITONSERVER_InferenceResponseCompleteFn_t response_fn;
  void *response_userp;
  /* For the backend and the scheduler (bls_options.c), copied at each
   * TRITONSERVER_ServerInferAsync. */
  srv_bls_param_t *params;
  uint32_t param_count, param_cap;
  uint64_t priority;   /* 0: the model's default level */
  uint64_t timeout_us; /* queue timeout; 0: none */
  /* The last flight of this request (bls_infer.c), for
   * TRITONSERVER_InferenceRequestCancel: a reference on its state, which
   * outlives the flight, and its cancel message, which does not (see
   * SRV_BLS_LINK_*). NULL before the first ServerInferAsync. */
  srv_infer_state_t *flight_state;
  act_msg_t *flight_cancel;
  bool cancelled; /* Cancel was called since the last ServerInferAsync */
};

struct TRITONSERVER_ResponseAllocator {
  TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn;
  TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn;
  TRITONSERVER_ResponseAllocatorStartFn_t start_fn;
  TRITONSERVER_ResponseAllocatorQueryFn_t query_fn;
  TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn;
};

/** What turning a backend's response into the user's needs, copied from
 *  the request at TRITONSERVER_ServerInferAsync (the user may delete the
 *  request once it is released, before its last response). */
typedef struct {
  srv_model_t *model;
  const char *id;
  const char *const *outputs; /* requested outputs */
  uint32_t output_count;
  TRITONSERVER_ResponseAllocator *allocator;
  void *allocator_userp;
} srv_bls_origin_t;

/** Builds the user's response from the backend's `r`, taking r's error and
 *  parameters: calls the allocator's start_fn, then alloc_fn for each
 *  requested output and copies its bytes. A failed allocation turns the
 *  response into an error response (buffers already obtained are given
 *  back). Never fails; r is still the caller's to free. On the thread of
 *  the request's owner actor. */
TRITONSERVER_InferenceResponse *srv_bls_response_make(const srv_bls_origin_t *o,
                                                      TRITONBACKEND_Response *r);

/** An error response (taking err), for a request whose backend will send
 *  nothing more. On the owner actor's thread. */
TRITONSERVER_InferenceResponse *srv_bls_response_failed(const srv_bls_origin_t *o,
                                                        TRITONSERVER_Error *err);

/** Copies u's parameters, priority and timeout into r, in `arena` (at
 *  ServerInferAsync). The parameters were checked when set. */
srv_status_t *srv_bls_options_build(const TRITONSERVER_InferenceRequest *u,
                                    upb_Arena *arena, TRITONBACKEND_Request *r);

/** Frees u's parameters (at TRITONSERVER_InferenceRequestDelete). */
void srv_bls_params_free(TRITONSERVER_InferenceRequest *u);

/** Drops u's link to its last flight (at the next flight or the delete). */
void srv_bls_flight_unlink(TRITONSERVER_InferenceRequest *u);

/** The loaded model `name` at `version` (-1: the latest ready one) with a
 *  reference the caller drops (srv_model_unref), or UNAVAILABLE in
 *  Triton's wording ("Request for unknown model: ..."). Any thread
 *  (registry reads are lock-free). */
TRITONSERVER_Error *srv_bls_model_find(struct srv_server *srv, const char *name,
                                       int64_t version, srv_model_t **out);

#endif
