/* Referenced output slices (see infer_slices.h). */
#include "server/grpc/infer_slices.h"

#include <grpc/slice.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/grpc/infer_response.h"

/* raw_output_contents: field 6, length-delimited. */
#define RAW_OUTPUT_TAG ((6u << 3) | 2u)

static bool requested(const TRITONBACKEND_Request *req, const char *name) {
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

/* The slices being gathered. Copied bytes are written once, straight into
 * one slice allocated up front (`run`, sized for all of them); each stretch
 * between two referenced outputs goes out as a sub-slice of it (a
 * reference, no copy). */
typedef struct {
  grpc_slice *slices;
  size_t count;
  grpc_slice run;
  size_t run_start, run_len; /* the stretch not yet in a slice */
} gather_t;

static void run_flush(gather_t *g) {
  if (g->run_len == 0) return;
  g->slices[g->count++] = grpc_slice_sub(g->run, g->run_start, g->run_start + g->run_len);
  g->run_start += g->run_len;
  g->run_len = 0;
}

static void run_put(gather_t *g, const void *p, size_t n) {
  memcpy(GRPC_SLICE_START_PTR(g->run) + g->run_start + g->run_len, p, n);
  g->run_len += n;
}

static void run_varint(gather_t *g, uint64_t v) {
  unsigned char b[10];
  size_t n = 0;
  do {
    b[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v != 0) b[n] |= 0x80;
    n++;
  } while (v != 0);
  run_put(g, b, n);
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

/* Which of r's outputs the request asked for, once per reply (in a). */
static bool *wanted(const TRITONBACKEND_Request *request, const TRITONBACKEND_Response *r,
                    upb_Arena *a) {
  bool *want = upb_Arena_Malloc(a, r->output_count ? r->output_count : 1);
  if (want == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < r->output_count; i++)
    want[i] = requested(request, r->outputs[i].name);
  return want;
}

/* The slice array and the run, sized for a head of head_len bytes. */
static void gather_start(gather_t *g, size_t head_len, const TRITONBACKEND_Response *r,
                         upb_Arena *a) {
  /* At most: the head, and per output one copied run and one reference. */
  size_t small = head_len + 22; /* the outer tag and length, if any */
  for (uint32_t i = 0; i < r->output_count; i++) {
    small += 11;
    if (!taken(r, &r->outputs[i])) small += r->outputs[i].byte_size;
  }
  *g = (gather_t){
      .slices = upb_Arena_Malloc(a, (2 * r->output_count + 1) * sizeof(grpc_slice)),
      .run = grpc_slice_malloc(small)};
  if (g->slices == NULL) SRV_FATAL("out of memory");
}

static grpc_byte_buffer *gather_outputs(gather_t *g, TRITONBACKEND_Response *r,
                                        const bool *want);

/* The head written by hand: what srv_infer_response_encode builds and upb
 * serializes when the response has no parameters (model_name, model_version,
 * id, then each requested output's name, datatype and packed shape), byte
 * for byte as upb writes it: fields in number order, empty strings and
 * empty shapes left out as proto3 has them (infer_slices_test compares the
 * two). Building the message and encoding it was about 2,600 instructions
 * per `simple` reply, this a few hundred. With p NULL it only counts. */
typedef struct {
  unsigned char *p;
  size_t n;
} sink_t;

static void sink_varint(sink_t *s, uint64_t v) {
  if (s->p == NULL) {
    s->n += varint_len(v);
    return;
  }
  while (v >= 0x80) {
    s->p[s->n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  s->p[s->n++] = (unsigned char)v;
}

static void sink_field(sink_t *s, uint32_t field, const char *str) {
  size_t len = str != NULL ? strlen(str) : 0;
  if (len == 0) return;
  sink_varint(s, (field << 3) | 2u);
  sink_varint(s, len);
  if (s->p != NULL) memcpy(s->p + s->n, str, len);
  s->n += len;
}

/* A string field's size on the wire (0 when left out). */
static size_t field_len(const char *str) {
  size_t len = str != NULL ? strlen(str) : 0;
  return len ? 1 + varint_len(len) + len : 0;
}

static void sink_output(sink_t *s, const struct TRITONBACKEND_Output *o) {
  const char *dt = api_datatype_protocol_name(o->datatype);
  size_t packed = 0;
  for (uint32_t d = 0; d < o->dims_count; d++) packed += varint_len((uint64_t)o->shape[d]);
  size_t len = field_len(o->name) + field_len(dt) +
               (o->dims_count ? 1 + varint_len(packed) + packed : 0);
  sink_varint(s, (5u << 3) | 2u); /* outputs */
  sink_varint(s, len);
  sink_field(s, 1, o->name);
  sink_field(s, 2, dt);
  if (o->dims_count == 0) return;
  sink_varint(s, (3u << 3) | 2u); /* shape, packed */
  sink_varint(s, packed);
  for (uint32_t d = 0; d < o->dims_count; d++) sink_varint(s, (uint64_t)o->shape[d]);
}

static void sink_head(sink_t *s, const srv_model_desc_t *d,
                      const TRITONBACKEND_Request *request, const TRITONBACKEND_Response *r,
                      const bool *want) {
  sink_field(s, 1, d->name);
  sink_field(s, 2, d->version_string);
  sink_field(s, 3, request->id);
  for (uint32_t i = 0; i < r->output_count; i++)
    if (want[i]) sink_output(s, &r->outputs[i]);
}

grpc_byte_buffer *srv_infer_slices_encode(const srv_model_t *m,
                                          const TRITONBACKEND_Request *request,
                                          TRITONBACKEND_Response *r, upb_Arena *a) {
  if (r->param_count != 0) /* a map, which upb writes */
    return srv_infer_slices_encode_message(srv_infer_response_encode(m, request, r, a), 0,
                                           request, r, a);
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  bool *want = wanted(request, r, a);
  sink_t s = {.p = NULL, .n = 0};
  sink_head(&s, &d, request, r, want);
  gather_t g;
  gather_start(&g, s.n, r, a);
  s = (sink_t){.p = GRPC_SLICE_START_PTR(g.run), .n = 0};
  sink_head(&s, &d, request, r, want);
  g.run_len = s.n;
  return gather_outputs(&g, r, want);
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
  bool *want = wanted(request, r, a);
  gather_t g;
  gather_start(&g, head_len, r, a);
  if (field != 0) { /* the reply nested in an outer message's field */
    size_t inner = head_len;
    for (uint32_t i = 0; i < r->output_count; i++) {
      if (!want[i]) continue;
      size_t len = wire_len(r, &r->outputs[i]);
      inner += varint_len(RAW_OUTPUT_TAG) + varint_len(len) + len;
    }
    run_varint(&g, (field << 3) | 2u);
    run_varint(&g, inner);
  }
  run_put(&g, head, head_len);
  return gather_outputs(&g, r, want);
}

/* After the head: each requested output's raw_output_contents entry, copied
 * into the run or, when taken, as a slice of its own; then the byte buffer. */
static grpc_byte_buffer *gather_outputs(gather_t *g, TRITONBACKEND_Response *r,
                                        const bool *want) {
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct TRITONBACKEND_Output *o = &r->outputs[i];
    if (!want[i]) continue;
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
    g->slices[g->count++] = grpc_slice_new_with_user_data(buffer, len, detached_free, d);
    /* Last of the actor's accesses to d and the buffer: gRPC sees the slice
     * only once the byte buffer is handed over, after this. */
    atomic_store_explicit(&d->handed, true, memory_order_release);
  }
  run_flush(g);
  grpc_slice_unref(g->run); /* its sub-slices keep it */
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(g->slices, g->count);
  for (size_t i = 0; i < g->count; i++) grpc_slice_unref(g->slices[i]);
  return bb;
}
