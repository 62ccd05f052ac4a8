/* Tensor data as JSON arrays, both ways, for the HTTP frontend's codecs
 * (infer_json.c, generate_json.c): JSON `data` (flat, or nested exactly as
 * the shape) into one buffer in the layout backends expect, and a buffer
 * back into JSON values. Pure functions: any thread; what they make lives
 * in the caller's arena (reads) or the caller's JSON tree (writes). */
#ifndef NEREID_SERVER_HTTP_JSON_TENSOR_H
#define NEREID_SERVER_HTTP_JSON_TENSOR_H

#include <jansson.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** Most entries of a request's `shape` (a config's dims are bounded the
 *  same, plus the batch dimension). */
#define SRV_JSON_DIMS_MAX 65u

/** Triton's text for `data` that does not fill the shape. */
#define SRV_JSON_SHAPE_TEXT \
  "Unable to parse 'data': Shape does not match true shape of 'data' field"

/** Whether `data` holds `count` elements laid out as `shape` (dims_count
 *  dimensions): a flat array of `count` scalars, or arrays nested exactly
 *  as the shape. Nothing is allocated; recursion is bounded by dims_count. */
bool srv_json_tensor_fits(const json_t *data, const int64_t *shape, uint32_t dims_count,
                          uint64_t count);

/** Reads the `count` elements of `data` (srv_json_tensor_fits must hold)
 *  as `type` into a buffer in `arena`: BOOL from true/false, integers from
 *  JSON integers within the type's range, FP32/FP64 from any number, BYTES
 *  from strings (4-byte little-endian length, then the bytes). FP16, BF16
 *  and INVALID get Triton's texts. `name` is the input's, for errors. */
srv_status_t *srv_json_tensor_read(const json_t *data, TRITONSERVER_DataType type,
                                   uint64_t count, const char *name, upb_Arena *arena,
                                   srv_buffer_t *out);

/** Appends the `count` elements of `type` at `base` (byte_size bytes) to the
 *  JSON array `array`. An INTERNAL status when the bytes do not hold them
 *  (Triton's text), or when a value has no JSON form here (NaN, infinity,
 *  UINT64 above INT64_MAX: ask for binary_data); INVALID_ARGUMENT for
 *  FP16/BF16 (Triton's text). `name` is the output's. */
srv_status_t *srv_json_tensor_write(const char *name, TRITONSERVER_DataType type,
                                    const void *base, uint64_t byte_size, uint64_t count,
                                    json_t *array);

/** One element of a fixed-width tensor (BOOL, integers, FP32/FP64). */
typedef union {
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  float f;
  double d;
} srv_json_scalar_t;

/** Element i of a fixed-width tensor of `type` at `base` (any alignment). */
srv_json_scalar_t srv_json_scalar_at(TRITONSERVER_DataType type, const void *base,
                                     uint64_t i);

/** Points `out` at the checked data of an input of spec: name, type,
 *  shape and its one buffer (byte_size is the check's, set before). */
void srv_json_input_set(struct TRITONBACKEND_Input *out, const srv_tensor_spec_t *spec,
                        TRITONSERVER_DataType type, const int64_t *shape, uint32_t dims,
                        const srv_buffer_t *buf);

/** Elements in `shape`; the caller checked that it does not wrap. */
uint64_t srv_json_tensor_count(const int64_t *shape, uint32_t dims_count);

#endif
