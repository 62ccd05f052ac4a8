/* Typed add/sub loops. Any thread. Elements are moved with memcpy so
 * unaligned buffers are fine; compilers turn those into plain loads. */
#include "backends/addsub/addsub_kernel.h"

#include <stdint.h>
#include <string.h>

#include "backends/addsub/half.h"

typedef void kernel_fn(bool subtract, const unsigned char *a, const unsigned char *b,
                       unsigned char *out, size_t n);

/* Integers of either signedness run as the unsigned type of their width:
 * unsigned arithmetic wraps by definition, and its bits are the two's
 * complement result. Floats run as themselves. The operation is chosen
 * once per call, not per element, and elements go 16 bytes at a time as
 * GCC vectors (SSE2 on x86-64, plain loops where a target has none): each
 * lane's result is the scalar operation's, rounding of floats included.
 * The tail goes one element at a time. */
#define ELEMENTWISE_LOOP(U, V, OP)                                       \
  do {                                                                   \
    size_t i = 0;                                                        \
    for (; i + sizeof(V) / sizeof(U) <= n; i += sizeof(V) / sizeof(U)) { \
      V x, y, r;                                                         \
      memcpy(&x, a + i * sizeof(U), sizeof x);                           \
      memcpy(&y, b + i * sizeof(U), sizeof y);                           \
      r = x OP y;                                                        \
      memcpy(out + i * sizeof(U), &r, sizeof r);                         \
    }                                                                    \
    for (; i < n; i++) {                                                 \
      U x, y, r;                                                         \
      memcpy(&x, a + i * sizeof x, sizeof x);                            \
      memcpy(&y, b + i * sizeof y, sizeof y);                            \
      r = (U)(x OP y);                                                   \
      memcpy(out + i * sizeof r, &r, sizeof r);                          \
    }                                                                    \
  } while (0)

#define ELEMENTWISE_KERNEL(NAME, U)                                               \
  typedef U NAME##_vec __attribute__((vector_size(16)));                          \
  static void NAME(bool subtract, const unsigned char *a, const unsigned char *b, \
                   unsigned char *out, size_t n) {                                \
    if (subtract)                                                                 \
      ELEMENTWISE_LOOP(U, NAME##_vec, -);                                         \
    else                                                                          \
      ELEMENTWISE_LOOP(U, NAME##_vec, +);                                         \
  }

ELEMENTWISE_KERNEL(add_u8, uint8_t)
ELEMENTWISE_KERNEL(add_u16, uint16_t)
ELEMENTWISE_KERNEL(add_u32, uint32_t)
ELEMENTWISE_KERNEL(add_u64, uint64_t)
ELEMENTWISE_KERNEL(add_f32, float)
ELEMENTWISE_KERNEL(add_f64, double)

/* 16-bit floats: widen, compute, round back. */
#define HALF_KERNEL(NAME, TO_FLOAT, FROM_FLOAT)                                   \
  static void NAME(bool subtract, const unsigned char *a, const unsigned char *b, \
                   unsigned char *out, size_t n) {                                \
    for (size_t i = 0; i < n; i++) {                                              \
      uint16_t x, y, r;                                                           \
      memcpy(&x, a + i * 2, 2);                                                   \
      memcpy(&y, b + i * 2, 2);                                                   \
      float fx = TO_FLOAT(x), fy = TO_FLOAT(y);                                   \
      r = FROM_FLOAT(subtract ? fx - fy : fx + fy);                               \
      memcpy(out + i * 2, &r, 2);                                                 \
    }                                                                             \
  }

HALF_KERNEL(add_fp16, addsub_fp16_to_float, addsub_fp16_from_float)
HALF_KERNEL(add_bf16, addsub_bf16_to_float, addsub_bf16_from_float)

static kernel_fn *kernel_for(TRITONSERVER_DataType datatype) {
  switch (datatype) {
    case TRITONSERVER_TYPE_UINT8:
    case TRITONSERVER_TYPE_INT8:
      return add_u8;
    case TRITONSERVER_TYPE_UINT16:
    case TRITONSERVER_TYPE_INT16:
      return add_u16;
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_INT32:
      return add_u32;
    case TRITONSERVER_TYPE_UINT64:
    case TRITONSERVER_TYPE_INT64:
      return add_u64;
    case TRITONSERVER_TYPE_FP16:
      return add_fp16;
    case TRITONSERVER_TYPE_BF16:
      return add_bf16;
    case TRITONSERVER_TYPE_FP32:
      return add_f32;
    case TRITONSERVER_TYPE_FP64:
      return add_f64;
    default:
      return NULL;
  }
}

bool addsub_kernel_supports(TRITONSERVER_DataType datatype) {
  return kernel_for(datatype) != NULL;
}

bool addsub_kernel_run(TRITONSERVER_DataType datatype, bool subtract, const void *a,
                       const void *b, void *out, size_t n) {
  kernel_fn *fn = kernel_for(datatype);
  if (fn == NULL) return false;
  fn(subtract, a, b, out, n);
  return true;
}
