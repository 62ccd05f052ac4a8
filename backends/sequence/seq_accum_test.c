/* Sequence arithmetic against the values Triton's example clients assert:
 * the control sum of the quickstart graphs (simple_sequence,
 * simple_dyna_sequence) and the accumulator of the dyna_sequence backend
 * (simple_string_dyna_sequence), plus multi-element inputs and wrapping. */
#include "backends/sequence/seq_accum.h"

#include <string.h>

#include "test/unit/unit.h"

/* The clients send these after a first value (0, 100 or 20). */
static const int32_t kValues[7] = {11, 7, 5, 3, 2, 0, 1};

static seq_step_t step_at(int i, int count, int32_t corrid32) {
  seq_step_t s = {i == 0, i == count - 1, corrid32};
  return s;
}

/* simple_sequence: 1 for the START request (0 + START), then each value. */
static void control_sum_like_simple_sequence(void) {
  int32_t seq[8] = {100};
  memcpy(seq + 1, kValues, sizeof kValues);
  for (int i = 0; i < 8; i++) {
    seq_step_t s = step_at(i, 8, 0);
    s.end = false; /* simple_sequence has no END control */
    int32_t out = 0;
    seq_control_sum(&seq[i], &out, 1, &s);
    CHECK(out == (i == 0 ? 101 : seq[i]));
  }
}

/* simple_dyna_sequence: as above, and the last request adds the ID. */
static void control_sum_like_simple_dyna_sequence(void) {
  int32_t seq[8] = {0};
  memcpy(seq + 1, kValues, sizeof kValues);
  for (int i = 0; i < 8; i++) {
    seq_step_t s = step_at(i, 8, 1000);
    int32_t out = 0;
    seq_control_sum(&seq[i], &out, 1, &s);
    int32_t want = i == 0 ? 1 : seq[i];
    if (i == 7) want += 1000;
    CHECK(out == want);
  }
}

/* simple_string_dyna_sequence: START sets the accumulator to 20, the
 * negated values are added, END adds the ID "1002". */
static void accumulate_like_string_dyna_sequence(void) {
  int32_t acc = 12345; /* a stale accumulator: START must replace it */
  int32_t expect = 0;
  for (int i = 0; i < 8; i++) {
    int32_t v = i == 0 ? 20 : -kValues[i - 1];
    seq_step_t s = step_at(i, 8, 1002);
    acc = seq_accum_step(acc, &v, 1, &s);
    expect = (i == 0 ? v : expect + v) + (i == 7 ? 1002 : 0);
    CHECK(acc == expect);
  }
  CHECK(acc == 20 - 29 + 1002);
}

static void accumulate_sums_elements(void) {
  int32_t in[3] = {1, 2, 3};
  seq_step_t start = {true, false, 0}, mid = {false, false, 0}, end = {false, true, -4};
  int32_t acc = seq_accum_step(99, in, 3, &start);
  CHECK(acc == 6);
  acc = seq_accum_step(acc, in, 3, &mid);
  CHECK(acc == 12);
  acc = seq_accum_step(acc, in, 3, &end);
  CHECK(acc == 14);
  /* START and END on one request: a one-step sequence. */
  seq_step_t both = {true, true, 10};
  CHECK(seq_accum_step(7, in, 3, &both) == 16);
  CHECK(seq_accum_step(7, in, 0, &mid) == 7);
}

static void wraps_and_unaligned(void) {
  unsigned char raw[1 + 2 * sizeof(int32_t)];
  int32_t v[2] = {INT32_MAX, 1};
  memcpy(raw + 1, v, sizeof v);
  seq_step_t start = {true, false, 0};
  CHECK(seq_accum_step(0, raw + 1, 2, &start) == INT32_MIN);
  unsigned char out[1 + 2 * sizeof(int32_t)];
  seq_step_t s = {true, true, INT32_MAX};
  seq_control_sum(raw + 1, out + 1, 2, &s);
  int32_t got[2];
  memcpy(got, out + 1, sizeof got);
  /* INT32_MAX + 1 + INT32_MAX and 1 + 1 + INT32_MAX, modulo 2^32. */
  CHECK(got[0] == -1);
  CHECK(got[1] == INT32_MIN + 1);
  seq_fill(out + 1, 2, -5);
  memcpy(got, out + 1, sizeof got);
  CHECK(got[0] == -5 && got[1] == -5);
}

UNIT_MAIN("seq_accum", UNIT_CASE(control_sum_like_simple_sequence),
          UNIT_CASE(control_sum_like_simple_dyna_sequence),
          UNIT_CASE(accumulate_like_string_dyna_sequence),
          UNIT_CASE(accumulate_sums_elements), UNIT_CASE(wraps_and_unaligned))
