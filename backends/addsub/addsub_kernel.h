/* Elementwise a + b and a - b over any fixed-size numeric datatype. Integers
 * wrap in two's complement, as TensorFlow's and ONNX Runtime's integer Add
 * and Sub do for Triton's `simple`/`simple_int8` models; FP16 and BF16 are
 * computed in float and rounded to nearest even. Any thread; buffers may be
 * unaligned (tensor data often sits at odd offsets of a protobuf message). */
#ifndef NEREID_BACKENDS_ADDSUB_KERNEL_H
#define NEREID_BACKENDS_ADDSUB_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "triton/core/tritonserver.h"

/** Whether addsub_kernel_run handles the datatype (every integer and float
 * type; not BOOL, BYTES or INVALID). */
bool addsub_kernel_supports(TRITONSERVER_DataType datatype);

/** out[i] = a[i] + b[i] (or a[i] - b[i] when subtract) for n elements.
 * `out` may alias neither input. False (nothing written) for an unsupported
 * datatype. */
bool addsub_kernel_run(TRITONSERVER_DataType datatype, bool subtract, const void *a,
                       const void *b, void *out, size_t n);

#endif
