/* Checks of an inference request against its model's configuration, in
 * Triton's wording, shared by every frontend that builds a
 * TRITONBACKEND_Request (gRPC ModelInfer, the in-process API of
 * tritonserver.h), so that both refuse the same requests with the same
 * texts. Pure functions of a loaded model (read-only while it serves): any
 * thread. Every failure is an INVALID_ARGUMENT status the caller owns. */
#ifndef NEREID_SERVER_MODEL_INFER_CHECK_H
#define NEREID_SERVER_MODEL_INFER_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/model/model_view.h"

/** The model's input named by the `len` bytes at `name`, or "unexpected
 *  inference input". */
srv_status_t *srv_check_input_spec(const srv_model_t *m, const char *name, size_t len,
                                   const srv_tensor_spec_t **spec);

/** The same, looking at the model's input `first` before the others (then
 *  on in order, wrapping): a frontend passes the input's position in the
 *  request, as clients mostly send inputs in the config's order, so each
 *  is found by one compare. */
srv_status_t *srv_check_input_spec_from(const srv_model_t *m, size_t first,
                                        const char *name, size_t len,
                                        const srv_tensor_spec_t **spec);

/** The datatype must be the config's. `given` (len bytes) is the spelling
 *  the client used, quoted in the error as it came. */
srv_status_t *srv_check_input_datatype(const srv_model_t *m,
                                       const srv_tensor_spec_t *spec,
                                       TRITONSERVER_DataType type, const char *given,
                                       size_t given_len);

/** The shape must be the config's dims (-1 matches any size), preceded by
 *  the batch dimension when the model batches; no dimension negative; and
 *  its data must fit in 2^64 bytes (BYTES: 4 per element at least), so that
 *  element counts and byte sizes computed from it never wrap. */
srv_status_t *srv_check_input_shape(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                    const int64_t *shape, size_t dims_count);

/** The data, the concatenation of `count` buffers, must hold exactly the
 *  shape's elements: element count x element size bytes, or for BYTES that
 *  many 4-byte little-endian lengths each followed by its bytes (a length
 *  may straddle two buffers). Sets *byte_size to the total on success. */
srv_status_t *srv_check_input_data(const srv_model_t *m, const srv_tensor_spec_t *spec,
                                   TRITONSERVER_DataType type, const int64_t *shape,
                                   size_t dims_count, const srv_buffer_t *buffers,
                                   uint32_t count, uint64_t *byte_size);

/** srv_check_input_shape, then srv_check_input_data, for a caller whose
 *  data is at hand before the shape is checked and whose datatype passed
 *  srv_check_input_datatype (it is the spec's): the same refusals in the
 *  same order, the size both need computed once. */
srv_status_t *srv_check_input_shape_data(const srv_model_t *m,
                                         const srv_tensor_spec_t *spec,
                                         const int64_t *shape, size_t dims_count,
                                         const srv_buffer_t *buffers, uint32_t count,
                                         uint64_t *byte_size);

/** An input's name as a request gave it (not NUL-terminated). */
typedef struct {
  const char *s;
  size_t len;
} srv_input_name_t;

/** Triton's first check of a request's inputs, before any input is looked
 *  at: no more inputs than the model has, and at least its required ones.
 *  Triton's text: "expected 2 inputs but got 1 inputs for model 'simple'.
 *  Got inputs ['INPUT0'], but missing required inputs ['INPUT1']. Please
 *  provide all required inputs." ("expected number of inputs between R and
 *  N ..." when some are optional; an empty list prints "[]" where Triton
 *  prints "]"). */
srv_status_t *srv_check_input_count(const srv_model_t *m, const srv_input_name_t *given,
                                    size_t n);

/** Whether n inputs pass srv_check_input_count: a caller that gathers the
 *  names only for its error text asks this first. */
bool srv_check_input_count_ok(const srv_model_t *m, size_t n);

/** Every non-optional input of the model is among r's inputs (whose names
 *  are the model's own name pointers, as the checks above give them); else
 *  the text of srv_check_input_count. */
srv_status_t *srv_check_required_inputs(const srv_model_t *m,
                                        const TRITONBACKEND_Request *r);

/** Every input agrees on the batch size, within max_batch_size; sets
 *  r->batch_size (1 for models that do not batch). */
srv_status_t *srv_check_batch(const srv_model_t *m, TRITONBACKEND_Request *r);

/** The model's output named by the `len` bytes at `name` (its own name
 *  pointer, which lives as long as the model), or "unexpected inference
 *  output". */
srv_status_t *srv_check_output_name(const srv_model_t *m, const char *name, size_t len,
                                    const char **found);

/** Longest string correlation ID (`sequence_id`), in bytes, for every
 *  frontend (Triton has no bound; its CORRID control tensor once held
 *  128). */
#define SRV_SEQUENCE_ID_MAX 256u

/** A string `sequence_id` of `len` bytes: within SRV_SEQUENCE_ID_MAX and
 *  without a NUL inside (Triton would cut it there, making two ids one). */
srv_status_t *srv_check_sequence_id_string(const srv_model_t *m, const char *s,
                                           size_t len);

/** The error for a `priority` or `timeout` parameter (`key`) that is not a
 *  non-negative integer. */
srv_status_t *srv_check_param_uint_error(const srv_model_t *m, const char *key);

#endif
