/* What the sequence scheduler's model actor shares among its files:
 * sequence.c (its behaviour, cancels, the stop), sequence_route.c (requests
 * to their sequence's slot) and sequence_batch.c (batches). All of it runs
 * on the model actor only, inside its behaviour. */
#ifndef NEREID_SERVER_SCHED_SEQUENCE_INTERNAL_H
#define NEREID_SERVER_SCHED_SEQUENCE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/model/model.h"
#include "server/sched/sequence.h"

static inline srv_seq_sched_t *srv_seq_sched_of(srv_model_t *m) { return m->seq; }

static inline srv_seq_instance_t *srv_seq_inst_of(srv_model_t *m,
                                                  const srv_instance_t *inst) {
  return &m->seq->instances[inst->index];
}

/* A statistics counter (relaxed: readers want a recent value). */
static inline void srv_seq_count(_Atomic uint64_t *counter) {
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* ---- sequence_route.c: sequences and their slots ---- */

/** Routes a request of the model to its sequence's slot, or into the
 *  backlog; refuses it (in Triton's words) when the rules say so. */
void srv_seq_route(srv_model_t *m, TRITONBACKEND_Request *r);

/** A slot freed itself: it takes the next backlog sequence, or goes back to
 *  the free heap. */
void srv_seq_slot_freed(srv_model_t *m, srv_seq_slot_t *slot);

/** When the least recently used bound sequence goes idle; 0: none bound. */
uint64_t srv_seq_idle_deadline(const srv_seq_sched_t *s);

/** Ends the sequences idle past max_sequence_idle_microseconds at `now`. */
void srv_seq_reap(srv_model_t *m, uint64_t now);

/** Ends, now, the live sequence with this correlation ID if `owner` gave
 *  its last START (its client left); nothing when there is none, or when
 *  another client started it again since. */
void srv_seq_end_by_id(srv_model_t *m, uint64_t id, const char *id_string,
                       uint64_t owner);

/** r, cancelled, waits in the backlog: its whole sequence ends with it. */
void srv_seq_backlog_cancel(srv_model_t *m, TRITONBACKEND_Request *r);

/** The model stops: every backlog request is answered `code`, `why`. */
void srv_seq_backlog_fail(srv_model_t *m, TRITONSERVER_Error_Code code, const char *why);

/* ---- sequence_batch.c: lent requests, batches, padding requests ---- */

/** A slot lent r out: it waits for its instance's next batch. */
void srv_seq_offered(srv_model_t *m, TRITONBACKEND_Request *r);

/** Every idle instance whose last batch's slots have all answered gets its
 *  next batch; the timer is armed for the earliest wait. */
void srv_seq_dispatch(srv_model_t *m);

/** Frees msg (a response or final flags) when it answers a padding request;
 *  false when it is a real request's, left to the caller. */
bool srv_seq_padding_answer(act_msg_t *msg);

/** A padding request the instance released goes back to its free list. */
void srv_seq_padding_back(TRITONBACKEND_Request *r);

#endif
