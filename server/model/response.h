/* Responses as backends build them (TRITONBACKEND_Response, _Output,
 * _ResponseFactory). A backend thread builds a response and sends it; it
 * reaches the request's owner as a message, and the owner frees it with
 * srv_response_free after encoding it. */
#ifndef NEREID_SERVER_MODEL_RESPONSE_H
#define NEREID_SERVER_MODEL_RESPONSE_H

#include "server/api/buffer_attributes.h"
#include "server/model/request.h"

struct TRITONBACKEND_Output {
  /* The model's own string when it names one of the model's outputs
   * (`name_shared`, below: the model outlives the response through its
   * state), else a copy the response owns. */
  char *name;
  TRITONSERVER_DataType datatype;
  int64_t *shape;
  uint32_t dims_count;
  void *buffer; /* NULL until TRITONBACKEND_OutputBuffer */
  uint64_t byte_size;
  /* Where the client wants the output (a shared-memory region), if it
   * asked; `in_place` when the buffer is the region's memory itself. */
  const srv_shm_ref_t *shm;
  bool in_place;
  /* What TRITONBACKEND_OutputBufferAttributes hands out (the output owns
   * it): the defaults until the buffer exists, then the buffer's. */
  TRITONSERVER_BufferAttributes attrs;
  struct TRITONBACKEND_Response *response; /* whose room its buffer may use */
  bool name_shared; /* last: tests build outputs by position */
};

typedef struct {
  char *name;
  TRITONSERVER_ParameterType type;
  union {
    char *s;
    int64_t i;
    bool b;
    double d;
  } value;
} srv_response_param_t;

/* Room in each response for its first outputs, without an allocation. */
enum { SRV_RESPONSE_INLINE_OUTPUTS = 4, SRV_RESPONSE_INLINE_BYTES = 512 };

struct TRITONBACKEND_Response {
  act_msg_t msg; /* kind SRV_MSG_INFER_RESPONSE, to state->owner */
  srv_infer_state_t *state;
  uint32_t flags;            /* TRITONSERVER_ResponseCompleteFlag */
  TRITONSERVER_Error *error; /* our copy of the backend's error */
  struct TRITONBACKEND_Output *outputs;
  uint32_t output_count, output_cap;
  srv_response_param_t *params;
  uint32_t param_count, param_cap;
  /* Outputs shared between responses (ensembles, sched/ensemble.md). A
   * response whose outputs other responses borrow is `lent`: from then on
   * `holders` counts who frees it (the first being its receiver), and the
   * last srv_response_free frees it. A response that `borrows` points its
   * outputs' names, shapes and buffers into others' memory and holds one
   * count on each of its `lenders`; its `outputs` and `lenders` arrays
   * are in the response's own allocation. */
  bool lent, borrows;
  /* From response.c's block pool (else calloc'd by its maker). */
  bool pooled;
  /* Some name, shape or buffer of its outputs was malloc'd, not taken
   * from inline_mem: srv_response_free looks for them only then. */
  bool spilled;
  _Atomic uint32_t holders;
  struct TRITONBACKEND_Response **lenders;
  uint32_t lender_count;
  /* What a small response needs (issue 21: no allocation per request):
   * its first outputs and, bump-allocated from `inline_mem`, their names,
   * shapes and small buffers. Larger ones are malloc'd; srv_response_free
   * frees only those. Not zeroed at allocation: outputs are cleared as
   * they are added, inline_used counts the bytes handed out. */
  uint32_t inline_used;
  struct TRITONBACKEND_Output inline_outputs[SRV_RESPONSE_INLINE_OUTPUTS];
  _Alignas(16) char inline_mem[SRV_RESPONSE_INLINE_BYTES];
};

/** Whether p lies in r's own room (inline_mem): memory that goes with r,
 *  which nobody may take over or free. */
static inline bool srv_response_room_has(const TRITONBACKEND_Response *r, const void *p) {
  return r != NULL && (const char *)p >= r->inline_mem &&
         (const char *)p < r->inline_mem + sizeof r->inline_mem;
}

/** Whether a response (or a final-flags message) with these flags is its
 *  request's last: a model that is not decoupled answers exactly once. */
static inline bool srv_response_final(bool decoupled, uint32_t flags) {
  return !decoupled || (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
}

/** Frees a response the owner received (or one never sent); a lent one
 *  only drops a holder until the last. Any thread. */
void srv_response_free(TRITONBACKEND_Response *response);

/** Sends `flags` without a response to the owner of `state` (through the
 *  model's ordering when it preserves it). Any thread holding state. */
void srv_final_flags_send(srv_infer_state_t *state, uint32_t flags);

/** The flags of a received final-flags message (SRV_MSG_INFER_FINAL_FLAGS),
 *  after dropping the state reference it held and freeing it: what every
 *  owner does with one. Its state's owner_data is read before. */
uint32_t srv_final_flags_take(act_msg_t *msg);

/** Puts r's outputs that the client placed in shared memory there (a copy
 *  unless the backend wrote them in place) and checks that no region the
 *  request used faulted; on failure r carries the error instead. Called
 *  for every response to a frontend before it is sent. Any thread. */
void srv_response_shm_settle(TRITONBACKEND_Response *r);

/** A response to `state`'s owner with room for n outputs that borrow
 *  others' memory, and their lenders (an ensemble's answer): from the
 *  block pool when n fits its inline outputs, else one allocation. */
TRITONBACKEND_Response *srv_response_new_borrowing(srv_infer_state_t *state,
                                                   uint32_t flags, uint32_t n);

/** Makes r lendable before anyone borrows from it: its receiver, alone
 *  with it, becomes its first holder. */
void srv_response_lend_start(TRITONBACKEND_Response *r);

/** One more holder of a lent response (a response that borrows from it). */
void srv_response_hold(TRITONBACKEND_Response *r);

#endif
