/* Sequence model arithmetic (see seq_accum.h). Any thread. */
#include "backends/sequence/seq_accum.h"

#include <string.h>

/* Wrapping int32 addition: unsigned arithmetic has no overflow. */
static int32_t add32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t load32(const void *buf, size_t i) {
  int32_t v;
  memcpy(&v, (const char *)buf + i * sizeof v, sizeof v);
  return v;
}

static void store32(void *buf, size_t i, int32_t v) {
  memcpy((char *)buf + i * sizeof v, &v, sizeof v);
}

int32_t seq_accum_step(int32_t acc, const void *input, size_t n, const seq_step_t *step) {
  if (step->start) acc = 0;
  for (size_t i = 0; i < n; i++) acc = add32(acc, load32(input, i));
  if (step->end) acc = add32(acc, step->corrid32);
  return acc;
}

void seq_control_sum(const void *input, void *out, size_t n, const seq_step_t *step) {
  int32_t extra = add32(step->start ? 1 : 0, step->end ? step->corrid32 : 0);
  for (size_t i = 0; i < n; i++) store32(out, i, add32(load32(input, i), extra));
}

void seq_fill(void *out, size_t n, int32_t value) {
  for (size_t i = 0; i < n; i++) store32(out, i, value);
}
