/* ModelInfer calls of the load (see load_internal.h): one batch per call,
 * with every op from the initial metadata to the status, so that a call
 * costs one completion-queue event. Worker thread only. */
#include <grpc/support/time.h>
#include <stdlib.h>

#include "tools/perf/load_internal.h"
#include "tools/perf/rpc.h"

perf_unary_t *perf_unary_new(perf_worker_t *w, unsigned channel) {
  perf_unary_t *u = perf_calloc(1, sizeof *u);
  u->tag.kind = TAG_UNARY;
  u->tag.owner = u;
  u->w = w;
  u->channel = channel;
  u->details = grpc_empty_slice();
  grpc_metadata_array_init(&u->initial_md);
  grpc_metadata_array_init(&u->trailing_md);
  return u;
}

void perf_unary_start(perf_unary_t *u, uint64_t start_ns) {
  perf_worker_t *w = u->w;
  perf_load_t *l = w->load;
  grpc_slice parts[1 + PERF_SEQ_SLICES];
  size_t n = 1;
  parts[0] = perf_worker_next_body(w);
  if (u->seq != NULL) {
    perf_worker_seq_step(w, u->seq);
    n += perf_seq_params(u->seq, l->cfg.seq.string_ids, parts + 1);
  }
  u->send = grpc_raw_byte_buffer_create(parts, n); /* refs the prebuilt bytes */
  for (size_t k = 0; k < n; k++) grpc_slice_unref(parts[k]);
  u->start_ns = start_ns;
  u->call = grpc_channel_create_registered_call(
      l->channels[u->channel], NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
      l->infer_method[u->channel], gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  grpc_op ops[6];
  perf_unary_ops(ops, 0, u->send, &u->initial_md, &u->recv, &u->trailing_md, &u->status,
                 &u->details);
  grpc_call_error e = grpc_call_start_batch(u->call, ops, 6, &u->tag, NULL);
  if (e != GRPC_CALL_OK) PERF_FATAL("ModelInfer batch refused (gRPC error %d)", (int)e);
  w->inflight++;
}

/* Back to idle: what the call received is released, the arrays kept. */
static void unary_reset(perf_unary_t *u) {
  grpc_byte_buffer_destroy(u->send);
  u->send = NULL;
  if (u->recv != NULL) grpc_byte_buffer_destroy(u->recv);
  u->recv = NULL;
  grpc_slice_unref(u->details);
  u->details = grpc_empty_slice();
  /* The metadata belong to the call: forget them before it goes. */
  u->initial_md.count = 0;
  u->trailing_md.count = 0;
  grpc_call_unref(u->call);
  u->call = NULL;
}

void perf_unary_done(perf_unary_t *u, bool ok) {
  uint64_t now = perf_now_ns();
  perf_worker_t *w = u->w;
  static const char no_batch[] = "ModelInfer: the call's batch failed";
  static const char no_reply[] = "ModelInfer: status OK without a response message";
  if (!ok)
    perf_worker_error(w, no_batch, sizeof no_batch - 1);
  else if (u->status != GRPC_STATUS_OK)
    perf_worker_status_error(w, u->status, &u->details);
  else if (u->recv == NULL)
    perf_worker_error(w, no_reply, sizeof no_reply - 1);
  else
    perf_worker_ok(w, now - u->start_ns, u->seq && perf_seq_is_end(u->seq));
  unary_reset(u);
  w->inflight--;
  if (w->load->cfg.concurrency == 0) { /* open loop: idle until the schedule wants it */
    u->next_free = w->free_unary;
    w->free_unary = u;
    perf_seq_t *seq = u->seq;
    u->seq = NULL;
    if (seq != NULL) perf_worker_lane_done(w, seq, now);
  } else if (u->seq ? perf_worker_seq_goes_on(w, u->seq) : !w->stopping) {
    perf_unary_start(u, now);
  }
  perf_worker_request_done(w);
}

void perf_unary_free(perf_unary_t *u) {
  if (u->call != NULL) PERF_FATAL("freeing a ModelInfer call in flight");
  grpc_slice_unref(u->details);
  grpc_metadata_array_destroy(&u->initial_md);
  grpc_metadata_array_destroy(&u->trailing_md);
  free(u);
}
