/* Referenced output slices (see infer_slices.h). */
#include "server/grpc/infer_slices.h"

#include <grpc/slice.h>
#include <grpc/slice_buffer.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/grpc/infer_response.h"

/* raw_output_contents: field 6, length-delimited. */
#define RAW_OUTPUT_TAG ((6u << 3) | 2u)

static bool requested(const TRITONBACKEND_Request *req, const char *name) {
  /* Pointers first: the gRPC frontend names requested outputs with the
   * model's own strings, and so does TRITONBACKEND_ResponseOutput the
   * outputs it makes, so a match is most often the same string (issue 21:
   * no strcmp per output). Names from elsewhere still compare by text. */
  for (uint32_t i = 0; i < req->output_count; i++)
    if (req->outputs[i] == name) return true;
  for (uint32_t i = 0; i < req->output_count; i++)
    if (strcmp(req->outputs[i], name) == 0) return true;
  return false;
}

/* An output that goes on the wire with its bytes (not in shared memory). */
static bool on_wire(const TRITONBACKEND_Response *r, const struct TRITONBACKEND_Output *o) {
  return r->state == NULL || srv_shm_uses_output(r->state->shm, o->name) == NULL;
}

bool srv_infer_slices_worth(const TRITONBACKEND_Request *request,
                            const TRITONBACKEND_Response *r) {
  /* Only buffers the response owns alone can be handed over: not those of
   * a response others borrow from or one that borrows (ensembles). */
  if (r->lent || r->borrows) return false;
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    if (o->byte_size >= SRV_INFER_SLICE_MIN && o->buffer != NULL && on_wire(r, o) &&
        requested(request, o->name))
      return true;
  }
  return false;
}

/* The slices being gathered, added to the byte buffer as they are made
 * (each handing its reference over: no ref and unref per slice). Copied
 * bytes are written once, straight into one slice allocated up front
 * (`run`, sized for all of them); each stretch between two referenced
 * outputs goes out as a sub-slice of it (a reference, no copy). */
typedef struct {
  grpc_byte_buffer *bb;
  grpc_slice run;
  size_t run_start, run_len; /* the stretch not yet in a slice */
} gather_t;

static void run_flush(gather_t *g) {
  if (g->run_len == 0) return;
  grpc_slice_buffer_add(&g->bb->data.raw.slice_buffer,
                        grpc_slice_sub(g->run, g->run_start, g->run_start + g->run_len));
  g->run_start += g->run_len;
  g->run_len = 0;
}

/* The last stretch takes the run's own reference over: most replies are
 * that one slice. */
static void run_flush_last(gather_t *g) {
  if (g->run_len == 0) {
    grpc_slice_unref(g->run);
    return;
  }
  grpc_slice_buffer_add(
      &g->bb->data.raw.slice_buffer,
      grpc_slice_sub_no_ref(g->run, g->run_start, g->run_start + g->run_len));
}

/* A varint at p (room for 10 bytes); returns the byte after it. */
static inline unsigned char *put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* Written in place: gather_start sized the run for every varint. */
static void run_varint(gather_t *g, uint64_t v) {
  unsigned char *at = GRPC_SLICE_START_PTR(g->run) + g->run_start + g->run_len;
  g->run_len += (size_t)(put_varint(at, v) - at);
}

static void run_put(gather_t *g, const void *p, size_t n) {
  memcpy(GRPC_SLICE_START_PTR(g->run) + g->run_start + g->run_len, p, n);
  g->run_len += n;
}

/* An output buffer taken out of its response for a slice: gRPC frees it,
 * on a thread of its own, once written. The slice owns the buffer alone
 * (never the response, whose state holds the model: a model must not
 * depend on when gRPC lets go of bytes). */
typedef struct {
  _Atomic bool handed;
  void *buffer;
} detached_t;

static void detached_free(void *p) {
  detached_t *d = p;
  /* Pairs with the release store of the hand-over: the frees below see
   * every write to the buffer (the backend's, then the actor's) on our
   * own terms rather than through whatever gRPC's hand-off orders. */
  (void)atomic_load_explicit(&d->handed, memory_order_acquire);
  free(d->buffer);
  free(d);
}

static size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, n++;
  return n;
}

/* The bytes of output o on the wire (0 for one in shared memory). */
static size_t wire_len(const TRITONBACKEND_Response *r, const struct TRITONBACKEND_Output *o) {
  return on_wire(r, o) && o->buffer != NULL ? o->byte_size : 0;
}

/* Whether output o goes as a slice of its own, its buffer taken over:
 * large, and owned by r alone (not lent to or borrowed from others). */
static bool taken(const TRITONBACKEND_Response *r, const struct TRITONBACKEND_Output *o) {
  return !r->lent && !r->borrows && o->byte_size >= SRV_INFER_SLICE_MIN;
}

/* Per output of r: whether the request asked for it and, for a head
 * written by hand, its sizes on the wire, measured once. */
typedef struct {
  bool want;
  const char *dt;
  size_t name_len, dt_len;
  size_t packed; /* the shape's varints */
  size_t len;    /* the InferOutputTensor message */
} plan_t;

/* Plans that fit the caller's stack (most replies): no arena allocation. */
enum { PLAN_ROOM = 4 };

/* The plan with only `want` set, once per reply: in `room` when it fits,
 * else in a. The same pass sets *run_bytes to what the requested outputs
 * need at most in the run: each one's tag and length, and its bytes when
 * copied. */
static plan_t *wanted(const TRITONBACKEND_Request *request,
                      const TRITONBACKEND_Response *r, upb_Arena *a,
                      plan_t room[PLAN_ROOM], size_t *run_bytes) {
  plan_t *plan = r->output_count <= PLAN_ROOM
                     ? room
                     : upb_Arena_Malloc(a, r->output_count * sizeof *plan);
  if (plan == NULL) SRV_FATAL("out of memory");
  size_t bytes = 0;
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    bool want = requested(request, o->name);
    plan[i] = (plan_t){.want = want};
    if (want) bytes += 11 + (taken(r, o) ? 0 : o->byte_size);
  }
  *run_bytes = bytes;
  return plan;
}

/* The byte buffer and the run, sized for a head of head_len bytes and
 * outputs of out_bytes (wanted's). */
static void gather_start(gather_t *g, size_t head_len, size_t out_bytes) {
  size_t small = head_len + 22 + out_bytes; /* 22: the outer tag and length, if any */
  *g = (gather_t){.bb = grpc_raw_byte_buffer_create(NULL, 0),
                  .run = grpc_slice_malloc(small)};
}

static grpc_byte_buffer *gather_outputs(gather_t *g, TRITONBACKEND_Response *r,
                                        const plan_t *plan);

/* The head written by hand: what srv_infer_response_encode builds and upb
 * serializes when the response has no parameters (model_name, model_version,
 * id, then each requested output's name, datatype and packed shape), byte
 * for byte as upb writes it: fields in number order, empty strings and
 * empty shapes left out as proto3 has them (infer_slices_test compares the
 * two). Building the message and encoding it with upb was about 2,600
 * instructions per `simple` reply. Sizes are measured first (the plan),
 * then the bytes written once, straight into the run. */

/* A string field's bytes on the wire: none when empty. */
static inline size_t string_len(size_t len) {
  return len ? 1 + varint_len(len) + len : 0;
}

static inline unsigned char *put_string(unsigned char *p, uint32_t field, const char *str,
                                        size_t len) {
  if (len == 0) return p;
  *p++ = (unsigned char)((field << 3) | 2u);
  p = put_varint(p, len);
  memcpy(p, str, len);
  return p + len;
}

/* The outputs' part of the plan; returns their bytes in the head. */
static size_t plan_outputs(plan_t *plan, const TRITONBACKEND_Response *r) {
  size_t total = 0;
  for (uint32_t i = 0; i < r->output_count; i++) {
    plan_t *p = &plan[i];
    if (!p->want) continue;
    const struct TRITONBACKEND_Output *o = &r->outputs[i];
    p->dt = api_datatype_protocol_name(o->datatype);
    p->dt_len = p->dt != NULL ? strlen(p->dt) : 0;
    p->name_len = o->name != NULL ? strlen(o->name) : 0;
    p->packed = 0;
    for (uint32_t d = 0; d < o->dims_count; d++)
      p->packed += varint_len((uint64_t)o->shape[d]);
    p->len = string_len(p->name_len) + string_len(p->dt_len) +
             (o->dims_count ? 1 + varint_len(p->packed) + p->packed : 0);
    total += 1 + varint_len(p->len) + p->len; /* outputs, field 5 */
  }
  return total;
}

static unsigned char *put_output(unsigned char *p, const plan_t *plan,
                                 const struct TRITONBACKEND_Output *o) {
  *p++ = (5u << 3) | 2u; /* outputs */
  p = put_varint(p, plan->len);
  p = put_string(p, 1, o->name, plan->name_len);
  p = put_string(p, 2, plan->dt, plan->dt_len);
  if (o->dims_count == 0) return p;
  *p++ = (3u << 3) | 2u; /* shape, packed */
  p = put_varint(p, plan->packed);
  for (uint32_t d = 0; d < o->dims_count; d++) p = put_varint(p, (uint64_t)o->shape[d]);
  return p;
}

grpc_byte_buffer *srv_infer_slices_encode(const srv_model_t *m,
                                          const TRITONBACKEND_Request *request,
                                          TRITONBACKEND_Response *r, upb_Arena *a) {
  if (r->param_count != 0) /* a map, which upb writes */
    return srv_infer_slices_encode_message(srv_infer_response_encode(m, request, r, a), 0,
                                           request, r, a);
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  size_t name_len = strlen(d.name), version_len = strlen(d.version_string);
  size_t id_len = request->id != NULL ? strlen(request->id) : 0;
  plan_t room[PLAN_ROOM];
  size_t out_bytes;
  plan_t *plan = wanted(request, r, a, room, &out_bytes);
  size_t head_len = string_len(name_len) + string_len(version_len) + string_len(id_len) +
                    plan_outputs(plan, r);
  gather_t g;
  gather_start(&g, head_len, out_bytes);
  unsigned char *p = GRPC_SLICE_START_PTR(g.run);
  p = put_string(p, 1, d.name, name_len);
  p = put_string(p, 2, d.version_string, version_len);
  p = put_string(p, 3, request->id, id_len);
  for (uint32_t i = 0; i < r->output_count; i++)
    if (plan[i].want) p = put_output(p, &plan[i], &r->outputs[i]);
  g.run_len = (size_t)(p - GRPC_SLICE_START_PTR(g.run));
  if (g.run_len != head_len)
    SRV_FATAL("reply head: %zu bytes planned, %zu written", head_len, g.run_len);
  return gather_outputs(&g, r, plan);
}

grpc_byte_buffer *srv_infer_slices_encode_message(inference_ModelInferResponse *resp,
                                                  uint32_t field,
                                                  const TRITONBACKEND_Request *request,
                                                  TRITONBACKEND_Response *r, upb_Arena *a) {
  /* The message without raw_output_contents: they follow it. */
  inference_ModelInferResponse_clear_raw_output_contents(resp);
  size_t head_len;
  char *head = inference_ModelInferResponse_serialize(resp, a, &head_len);
  if (head == NULL) SRV_FATAL("out of memory");
  plan_t room[PLAN_ROOM];
  size_t out_bytes;
  plan_t *plan = wanted(request, r, a, room, &out_bytes);
  gather_t g;
  gather_start(&g, head_len, out_bytes);
  if (field != 0) { /* the reply nested in an outer message's field */
    size_t inner = head_len;
    for (uint32_t i = 0; i < r->output_count; i++) {
      if (!plan[i].want) continue;
      size_t len = wire_len(r, &r->outputs[i]);
      inner += varint_len(RAW_OUTPUT_TAG) + varint_len(len) + len;
    }
    run_varint(&g, (field << 3) | 2u);
    run_varint(&g, inner);
  }
  run_put(&g, head, head_len);
  return gather_outputs(&g, r, plan);
}

/* After the head: each requested output's raw_output_contents entry, copied
 * into the run or, when taken, as a slice of its own; then the byte buffer. */
static grpc_byte_buffer *gather_outputs(gather_t *g, TRITONBACKEND_Response *r,
                                        const plan_t *plan) {
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct TRITONBACKEND_Output *o = &r->outputs[i];
    if (!plan[i].want) continue;
    size_t len = wire_len(r, o);
    run_varint(g, RAW_OUTPUT_TAG);
    run_varint(g, len);
    if (len == 0 || !taken(r, o)) {
      if (len > 0) run_put(g, o->buffer, len);
      continue;
    }
    run_flush(g);
    detached_t *d = malloc(sizeof *d);
    if (d == NULL) SRV_FATAL("out of memory");
    void *buffer = o->buffer;
    o->buffer = NULL; /* the response frees it no more */
    d->buffer = buffer;
    grpc_slice_buffer_add(&g->bb->data.raw.slice_buffer,
                          grpc_slice_new_with_user_data(buffer, len, detached_free, d));
    /* Last of the actor's accesses to d and the buffer: gRPC sees the slice
     * only once the byte buffer is handed over, after this. */
    atomic_store_explicit(&d->handed, true, memory_order_release);
  }
  run_flush_last(g); /* earlier sub-slices hold the run too */
  return g->bb;
}
