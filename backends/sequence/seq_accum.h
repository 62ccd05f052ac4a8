/* The arithmetic of the sequence models, apart from where an accumulator
 * is kept: the accumulating step of Triton's `sequence` and `dyna_sequence`
 * backends and the stateless control sum of Triton's quickstart
 * simple_sequence / simple_dyna_sequence graphs. int32 arithmetic wraps
 * (two's complement), as theirs does in practice. Any thread; pure
 * functions; value buffers may be unaligned. */
#ifndef NEREID_BACKENDS_SEQUENCE_SEQ_ACCUM_H
#define NEREID_BACKENDS_SEQUENCE_SEQ_ACCUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The controls of one ready request, decoded. `corrid32` is the
 *  correlation ID as seq_corrid_int32 gives it (0 when the model has no
 *  CORRID control). */
typedef struct {
  bool start, end;
  int32_t corrid32;
} seq_step_t;

/** One accumulating step: START sets the accumulator to the sum of the n
 *  INPUT elements (`acc` is then ignored), otherwise they are added to it;
 *  END then adds corrid32. Returns the new accumulator, which the model
 *  writes into every OUTPUT element. */
int32_t seq_accum_step(int32_t acc, const void *input, size_t n, const seq_step_t *step);

/** The control sum, elementwise with no state:
 *  out[i] = in[i] + START + (END ? corrid32 : 0), START counting 1 when
 *  set. `out` holds n int32 and may not alias `in`. */
void seq_control_sum(const void *input, void *out, size_t n, const seq_step_t *step);

/** Writes `value` into n int32 elements of `out`. */
void seq_fill(void *out, size_t n, int32_t value);

#endif
