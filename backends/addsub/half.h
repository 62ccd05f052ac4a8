/* 16-bit floats (IEEE binary16 "FP16" and bfloat16 "BF16") to and from
 * float, rounding to nearest even, so addsub can compute them in float. Any
 * thread; pure functions on bit patterns (no compiler _Float16 needed). */
#ifndef NEREID_BACKENDS_ADDSUB_HALF_H
#define NEREID_BACKENDS_ADDSUB_HALF_H

#include <stdint.h>

float addsub_fp16_to_float(uint16_t h);
uint16_t addsub_fp16_from_float(float f);
float addsub_bf16_to_float(uint16_t h);
uint16_t addsub_bf16_from_float(float f);

#endif
