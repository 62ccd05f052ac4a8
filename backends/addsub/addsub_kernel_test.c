/* addsub arithmetic: wrapping integers (int8 as in simple_int8), floats,
 * FP16/BF16 rounding, unaligned buffers, unsupported types. */
#include "backends/addsub/addsub_kernel.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backends/addsub/half.h"
#include "test/unit/unit.h"

static void int8_wraps(void) {
  int8_t a[4] = {127, -128, 100, -5}, b[4] = {1, 1, 100, 7}, sum[4], diff[4];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT8, false, a, b, sum, 4));
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT8, true, a, b, diff, 4));
  CHECK(sum[0] == -128 && sum[1] == -127 && sum[2] == -56 && sum[3] == 2);
  CHECK(diff[0] == 126 && diff[1] == 127 && diff[2] == 0 && diff[3] == -12);
}

static void int32_like_simple(void) {
  int32_t a[16], b[16], sum[16], diff[16];
  for (int i = 0; i < 16; i++) {
    a[i] = i;
    b[i] = 1;
  }
  a[15] = INT32_MAX;
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT32, false, a, b, sum, 16));
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT32, true, a, b, diff, 16));
  for (int i = 0; i < 15; i++) CHECK(sum[i] == i + 1 && diff[i] == i - 1);
  CHECK(sum[15] == INT32_MIN && diff[15] == INT32_MAX - 1);
}

static void unsigned_and_wide(void) {
  uint8_t a8[1] = {0}, b8[1] = {1}, o8[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_UINT8, true, a8, b8, o8, 1) && o8[0] == 255);
  uint16_t a16[1] = {65535}, b16[1] = {2}, o16[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_UINT16, false, a16, b16, o16, 1) &&
        o16[0] == 1);
  int16_t s16[1] = {-32768}, one16[1] = {1}, r16[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT16, true, s16, one16, r16, 1) &&
        r16[0] == 32767);
  int64_t a64[1] = {INT64_MIN}, b64[1] = {1}, o64[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT64, true, a64, b64, o64, 1) &&
        o64[0] == INT64_MAX);
  uint32_t a32[1] = {0}, b32[1] = {1}, o32[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_UINT32, true, a32, b32, o32, 1) &&
        o32[0] == UINT32_MAX);
}

static void floats(void) {
  float a[2] = {1.5f, -2.0f}, b[2] = {0.25f, 0.5f}, o[2];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_FP32, false, a, b, o, 2));
  CHECK(o[0] == 1.75f && o[1] == -1.5f);
  double da[1] = {1e300}, db[1] = {1e300}, od[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_FP64, true, da, db, od, 1) && od[0] == 0.0);
}

static void half_floats(void) {
  uint16_t a[1] = {addsub_fp16_from_float(1.5f)}, b[1] = {addsub_fp16_from_float(2.25f)};
  uint16_t o[1];
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_FP16, false, a, b, o, 1));
  CHECK(addsub_fp16_to_float(o[0]) == 3.75f);
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_FP16, true, a, b, o, 1));
  CHECK(addsub_fp16_to_float(o[0]) == -0.75f);
  uint16_t c[1] = {addsub_bf16_from_float(3.0f)}, d[1] = {addsub_bf16_from_float(0.5f)};
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_BF16, false, c, d, o, 1));
  CHECK(addsub_bf16_to_float(o[0]) == 3.5f);
}

/* Every finite FP16 value survives float and back; rounding and the
 * special values follow IEEE. */
static void fp16_conversions(void) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue; /* nan payloads */
    if (addsub_fp16_from_float(addsub_fp16_to_float((uint16_t)h)) != h) {
      CHECK_EQ_U64(addsub_fp16_from_float(addsub_fp16_to_float((uint16_t)h)), h);
      return;
    }
  }
  CHECK(addsub_fp16_to_float(0x3c00) == 1.0f);
  CHECK(addsub_fp16_to_float(0x0001) == ldexpf(1.0f, -24)); /* smallest subnormal */
  CHECK(addsub_fp16_from_float(65504.0f) == 0x7bff);        /* largest finite */
  CHECK(addsub_fp16_from_float(65520.0f) == 0x7c00);        /* rounds to infinity */
  CHECK(addsub_fp16_from_float(ldexpf(1.0f, -25)) == 0);    /* tie to even: zero */
  CHECK(addsub_fp16_from_float(ldexpf(1.5f, -25)) == 1);
  CHECK(addsub_fp16_from_float(1.0f + ldexpf(1.0f, -11)) == 0x3c00); /* tie, even */
  CHECK(addsub_fp16_from_float(1.0f + ldexpf(3.0f, -11)) == 0x3c02); /* tie, to even */
  CHECK(addsub_fp16_from_float(-0.0f) == 0x8000);
  CHECK(isnan(addsub_fp16_to_float(addsub_fp16_from_float(NAN))));
  CHECK(addsub_bf16_from_float(1.0f + ldexpf(1.0f, -8)) == 0x3f80); /* tie, even */
  CHECK(isnan(addsub_bf16_to_float(addsub_bf16_from_float(NAN))));
}

static void unaligned_buffers(void) {
  unsigned char raw[3 * 4 * 3 + 3];
  int32_t va[3] = {1, 2, 3}, vb[3] = {10, 20, 30}, got[3];
  unsigned char *a = raw + 1, *b = a + 12, *o = b + 13;
  memcpy(a, va, 12);
  memcpy(b, vb, 12);
  CHECK(addsub_kernel_run(TRITONSERVER_TYPE_INT32, false, a, b, o, 3));
  memcpy(got, o, 12);
  CHECK(got[0] == 11 && got[1] == 22 && got[2] == 33);
}

/* Lengths around the 16-byte blocks (a block, a block and a tail, odd
 * lengths) at an odd offset, each element against its scalar result. */
#define BLOCKS_AND_TAILS(NAME, TYPE, U, T)                                        \
  static void NAME(void) {                                                        \
    static const size_t lengths[] = {0, 1, 15, 16, 17, 31, 33, 67};               \
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {             \
      size_t n = lengths[k];                                                      \
      unsigned char raw[3 * 67 * sizeof(T) + 1];                                  \
      unsigned char *a = raw + 1, *b = a + n * sizeof(T), *o = b + n * sizeof(T); \
      for (size_t i = 0; i < n; i++) {                                            \
        T x = (T)(U)(i * 2654435761u), y = (T)(U)(~i * 40503u + 7);               \
        memcpy(a + i * sizeof x, &x, sizeof x);                                   \
        memcpy(b + i * sizeof y, &y, sizeof y);                                   \
      }                                                                           \
      for (int sub = 0; sub < 2; sub++) {                                         \
        CHECK(addsub_kernel_run(TYPE, sub, a, b, o, n));                          \
        for (size_t i = 0; i < n; i++) {                                          \
          T x, y, r;                                                              \
          memcpy(&x, a + i * sizeof x, sizeof x);                                 \
          memcpy(&y, b + i * sizeof y, sizeof y);                                 \
          memcpy(&r, o + i * sizeof r, sizeof r);                                 \
          T want = sub ? (T)(U)((U)x - (U)y) : (T)(U)((U)x + (U)y);               \
          CHECK(memcmp(&r, &want, sizeof r) == 0);                                \
        }                                                                         \
      }                                                                           \
    }                                                                             \
  }

BLOCKS_AND_TAILS(blocks_int8, TRITONSERVER_TYPE_INT8, uint8_t, int8_t)
BLOCKS_AND_TAILS(blocks_uint16, TRITONSERVER_TYPE_UINT16, uint16_t, uint16_t)
BLOCKS_AND_TAILS(blocks_int32, TRITONSERVER_TYPE_INT32, uint32_t, int32_t)
BLOCKS_AND_TAILS(blocks_int64, TRITONSERVER_TYPE_INT64, uint64_t, int64_t)

static void blocks_floats(void) {
  float fa[19], fb[19], fo[19];
  double da[9], db[9], dout[9];
  for (int i = 0; i < 19; i++) {
    fa[i] = 0.1f * (float)i - 0.7f;
    fb[i] = 1.0f / (float)(i + 3);
  }
  for (int i = 0; i < 9; i++) {
    da[i] = 0.1 * i + 1e-17;
    db[i] = 1.0 / (i + 3);
  }
  for (int sub = 0; sub < 2; sub++) {
    CHECK(addsub_kernel_run(TRITONSERVER_TYPE_FP32, sub, fa, fb, fo, 19));
    for (int i = 0; i < 19; i++) CHECK(fo[i] == (sub ? fa[i] - fb[i] : fa[i] + fb[i]));
    CHECK(addsub_kernel_run(TRITONSERVER_TYPE_FP64, sub, da, db, dout, 9));
    for (int i = 0; i < 9; i++) CHECK(dout[i] == (sub ? da[i] - db[i] : da[i] + db[i]));
  }
}

static void unsupported_types(void) {
  CHECK(!addsub_kernel_supports(TRITONSERVER_TYPE_BYTES));
  CHECK(!addsub_kernel_supports(TRITONSERVER_TYPE_BOOL));
  CHECK(!addsub_kernel_supports(TRITONSERVER_TYPE_INVALID));
  CHECK(addsub_kernel_supports(TRITONSERVER_TYPE_BF16));
  char x = 0;
  CHECK(!addsub_kernel_run(TRITONSERVER_TYPE_BYTES, false, &x, &x, &x, 1));
}

UNIT_MAIN("addsub_kernel", UNIT_CASE(int8_wraps), UNIT_CASE(int32_like_simple),
          UNIT_CASE(unsigned_and_wide), UNIT_CASE(floats), UNIT_CASE(half_floats),
          UNIT_CASE(fp16_conversions), UNIT_CASE(unaligned_buffers),
          UNIT_CASE(blocks_int8), UNIT_CASE(blocks_uint16), UNIT_CASE(blocks_int32),
          UNIT_CASE(blocks_int64), UNIT_CASE(blocks_floats), UNIT_CASE(unsupported_types))
