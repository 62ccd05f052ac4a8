/* The GPU half of the addsub_cuda backend, compiled by nvcc
 * (addsub_device.cu) and linked with the static CUDA runtime: the C half
 * sees only plain C types, no CUDA header. Each call acts on the calling
 * thread's current device. Failures return false and set *why to CUDA's
 * own text (static). */
#ifndef NEREID_BACKENDS_ADDSUB_CUDA_ADDSUB_DEVICE_H
#define NEREID_BACKENDS_ADDSUB_CUDA_ADDSUB_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** GPUs visible to the runtime; 0 with *why when there are none. */
int acu_device_count(const char **why);

/** Makes `device` current on the calling thread. */
bool acu_set_device(int device, const char **why);

/** Device memory, and its release (NULL is a no-op). */
bool acu_malloc(void **ptr, size_t n, const char **why);
void acu_free(void *ptr);

/** Copies n bytes between any two of host and device memory (unified
 *  addressing tells which is which), synchronously. */
bool acu_copy(void *dst, const void *src, size_t n, const char **why);

/** out[i] = a[i] + b[i] (or a[i] - b[i] when subtract) for n INT32 or
 *  (fp32) FP32 elements, all three in device memory; waits for the kernel.
 *  INT32 wraps around on overflow, as the CPU backend's. */
bool acu_addsub(bool fp32, bool subtract, const void *a, const void *b, void *out,
                size_t n, const char **why);

#ifdef __cplusplus
}
#endif

#endif
