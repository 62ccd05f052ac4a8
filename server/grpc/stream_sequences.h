/* The sequences a ModelStreamInfer stream started and has not ended yet,
 * so that they end when the stream closes or is cancelled, at once, and
 * free their sequence slots (beyond Triton, which keeps them until their
 * idle timeout). The stream's STARTs carry a token of its own
 * (TRITONBACKEND_Request.seq_owner), and its end ends only the sequences
 * whose last START still is one of its: an ID another client started
 * again meanwhile (after an idle reap, say) is left alone, whichever
 * reaches the model first. A stream's actor only. */
#ifndef NEREID_SERVER_GRPC_STREAM_SEQUENCES_H
#define NEREID_SERVER_GRPC_STREAM_SEQUENCES_H

#include <stdint.h>

#include "server/core/core.h"

/** Sequences one stream keeps track of; past it, a sequence started on the
 *  stream ends by its idle timeout only (README, "Limits"). */
#define SRV_STREAM_SEQUENCES_MAX 16384u

typedef struct srv_stream_seq srv_stream_seq_t;

typedef struct {
  srv_stream_seq_t *items;
  uint32_t count, cap;
  uint64_t owner; /* the stream's token, taken at its first START; 0 before */
} srv_stream_sequences_t;

/** Notes what request r (just accepted for model m, not sent yet) does to
 *  its sequence: START adds it and marks r with the stream's token, END
 *  drops it. Requests to models without a sequence batcher are ignored.
 *  No reference on m is kept: an open sequence must not hold its model's
 *  unload back, so the model is found again by name and version at the
 *  end, and only the same load of it is told. */
void srv_stream_sequences_note(srv_stream_sequences_t *t, srv_model_t *m,
                               TRITONBACKEND_Request *r);

/** Ends every sequence still noted (srv_model_sequence_end) on the models
 *  of `srv` that are still the loads that started them, and empties t. */
void srv_stream_sequences_end_all(srv_stream_sequences_t *t, srv_server_t *srv);

/** Frees t; what is still noted is forgotten (call end_all first). */
void srv_stream_sequences_free(srv_stream_sequences_t *t);

#endif
