/* Tensors of one input-data entry, shared by inputs.c (random and zero
 * data, batching, encoding) and input_json.c (--input-data files). */
#ifndef NEREID_TOOLS_PERF_INPUTS_INTERNAL_H
#define NEREID_TOOLS_PERF_INPUTS_INTERNAL_H

#include "tools/perf/inputs.h"

/* One input's value for one entry, in the protocol's raw layout (BYTES:
 * each element a 4-byte little-endian length, then its bytes). */
typedef struct {
  int64_t shape[PERF_MAX_DIMS]; /* without the batch dimension */
  size_t ndims;
  char *data;
  size_t len;
} perf_tensor_t;

/* entries[e * m->ninputs + i]: entry e's value of input i. */
typedef struct {
  perf_tensor_t *tensors;
  size_t n;
} perf_entries_t;

/** The shape that input in has without data of its own: the metadata's,
 *  with --shape applied; fails on a variable dimension left. */
bool perf_input_shape(const perf_options_t *o, const perf_input_t *in, int64_t *shape,
                      size_t *ndims, perf_err_t *err);

/** Product of the dimensions. */
size_t perf_shape_elements(const int64_t *shape, size_t ndims);

/** Reads an --input-data file into entries. */
bool perf_input_json_load(const perf_options_t *o, const perf_model_t *m,
                          const char *path, perf_entries_t *out, perf_err_t *err);

void perf_entries_free(perf_entries_t *e, size_t ninputs);

/** Appends one BYTES element (length prefix and bytes) to a growing buffer. */
void perf_bytes_append(char **data, size_t *len, size_t *cap, const char *s, size_t n);

/** IEEE half and bfloat16 encodings of a float. */
uint16_t perf_fp16_from_float(float f);
uint16_t perf_bf16_from_float(float f);

#endif
