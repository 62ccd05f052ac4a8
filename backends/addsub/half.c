/* FP16/BF16 <-> float conversions on bit patterns. Any thread. */
#include "backends/addsub/half.h"

#include <string.h>

static uint32_t float_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

static float bits_float(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

float addsub_fp16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13)); /* inf, nan */
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  /* Subnormal: shift the leading 1 up to the implicit bit position. */
  uint32_t e = 0;
  while (!(mant & 0x400u)) {
    mant <<= 1;
    e++;
  }
  return bits_float(sign | ((113u - e) << 23) | ((mant & 0x3ffu) << 13));
}

/* Drops `shift` low bits of m, rounding to nearest, ties to even. */
static uint32_t round_shift(uint32_t m, uint32_t shift) {
  uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1u)));
}

uint16_t addsub_fp16_from_float(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0)); /* inf, nan */
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u); /* overflow: infinity */
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign; /* below half the smallest subnormal */
    /* A carry out of the subnormal range lands on the smallest normal. */
    return (uint16_t)(sign | round_shift(mant | 0x800000u, (uint32_t)(14 - e)));
  }
  /* A carry out of the mantissa bumps the exponent, up to infinity. */
  return (uint16_t)(sign | round_shift(((uint32_t)e << 23) | mant, 13));
}

float addsub_bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

uint16_t addsub_bf16_from_float(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) {
    return (uint16_t)((x >> 16) | 0x40u); /* keep a nan a (quiet) nan */
  }
  return (uint16_t)round_shift(x, 16);
}
