/* Sequence mode (stateful models): lanes, each of which runs sequences one
 * after another with at most one step in flight; the ids the lanes take;
 * and the request parameters that mark a step (sequence_id,
 * sequence_start, sequence_end), appended to the prebuilt request bytes
 * as extra slices. The plan is set on the main thread and read-only after;
 * a lane belongs to one worker thread. See README.md, "Sequences". */
#ifndef NEREID_TOOLS_PERF_SEQ_H
#define NEREID_TOOLS_PERF_SEQ_H

#include <grpc/slice.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/perf/common.h"

/* Ids stay in int64_param's range. */
#define PERF_SEQ_ID_MAX ((uint64_t)INT64_MAX)

/* Slices that perf_seq_params fills at most. */
#define PERF_SEQ_SLICES 3

typedef struct {
  unsigned length;    /* --sequence-length: steps of a sequence, before variation */
  unsigned variation; /* --sequence-length-variation: percent either way */
  uint64_t id_start;  /* --sequence-id-range START (>= 1) */
  uint64_t id_end;    /* its END, excluded; 0: none (ids up to PERF_SEQ_ID_MAX) */
  unsigned lanes;     /* sequences kept at once over the whole load */
  bool string_ids;    /* sequence_id as string_param (the model's CORRID is a string) */
} perf_seq_plan_t;

/** Checks that plan p's id range holds an id for each of its lanes, so
 *  that no two live sequences ever share one (perf_analyzer's rule);
 *  fails naming the flags. */
bool perf_seq_plan_check(const perf_seq_plan_t *p, const char *lanes_flag,
                         perf_err_t *err);

/** The lane index's id after prev (0: its first). Lane k of n takes
 *  start + k, start + k + n, start + k + 2n, ... and wraps back to
 *  start + k past the range's end: the lanes' ids never meet, with no
 *  state shared between them. */
uint64_t perf_seq_id_next(const perf_seq_plan_t *p, uint32_t index, uint64_t prev);

/** A steps length drawn as perf_analyzer does: uniform within
 *  length +/- variation%, at least 1. rng: the caller's xorshift state. */
uint32_t perf_seq_length_draw(const perf_seq_plan_t *p, uint64_t *rng);

/** One lane. The worker that owns it is the only one to touch it. */
typedef struct perf_seq {
  uint64_t id;     /* the current sequence's; 0 before the lane's first */
  uint32_t index;  /* over the load: which ids it takes */
  uint32_t length; /* steps of the current sequence */
  uint32_t sent;   /* steps of it sent; == length: it ended */
  uint32_t stream; /* open loop, stream modes: the worker's stream it sends on */
  struct perf_seq *next_idle; /* open loop: the worker's FIFO of idle lanes */
} perf_seq_t;

/** A lane before its first sequence. */
void perf_seq_init(perf_seq_t *s, uint32_t index);

/** Takes the lane's next step: the first of a new sequence (a new id and
 *  length) when the last one ended. */
void perf_seq_advance(perf_seq_t *s, const perf_seq_plan_t *p, uint64_t *rng);

/** The step taken last was its sequence's first / last. */
static inline bool perf_seq_is_start(const perf_seq_t *s) { return s->sent == 1; }
static inline bool perf_seq_is_end(const perf_seq_t *s) { return s->sent == s->length; }

/** A sequence was started and not ended: the load must still send its END. */
static inline bool perf_seq_open(const perf_seq_t *s) {
  return s->sent > 0 && s->sent < s->length;
}

/** The load stops: the lane's next step is its sequence's last. */
void perf_seq_end_next(perf_seq_t *s);

/** The sequence is given up (its stream ended): the next step starts a new one. */
void perf_seq_abandon(perf_seq_t *s);

/** The parameters of the step taken last, as map entries of
 *  ModelInferRequest.parameters (field 4), in Triton's client's form:
 *  sequence_id (int64_param, or string_param of its decimal digits),
 *  sequence_start and sequence_end (bool_param) on every step. Fills
 *  out[0..n) and returns n; each slice is inlined or static, so nothing
 *  is allocated; the caller unrefs them (after the byte buffer took its
 *  references). */
size_t perf_seq_params(const perf_seq_t *s, bool string_ids,
                       grpc_slice out[PERF_SEQ_SLICES]);

#endif
