/* The GPU half of addsub_cuda in a build without CUDA (no --define=cuda=1):
 * no devices, so the backend's models refuse to load with this reason. */
#include "backends/addsub_cuda/addsub_device.h"

static const char kNoCuda[] =
    "this addsub_cuda was built without CUDA (build with --define=cuda=1 where "
    "/usr/local/cuda/bin/nvcc exists)";

int acu_device_count(const char **why) {
  *why = kNoCuda;
  return 0;
}

bool acu_set_device(int device, const char **why) {
  (void)device;
  *why = kNoCuda;
  return false;
}

bool acu_malloc(void **ptr, size_t n, const char **why) {
  (void)n;
  *ptr = NULL;
  *why = kNoCuda;
  return false;
}

void acu_free(void *ptr) { (void)ptr; }

bool acu_copy(void *dst, const void *src, size_t n, const char **why) {
  (void)dst;
  (void)src;
  (void)n;
  *why = kNoCuda;
  return false;
}

bool acu_addsub(bool fp32, bool subtract, const void *a, const void *b, void *out,
                size_t n, const char **why) {
  (void)fp32;
  (void)subtract;
  (void)a;
  (void)b;
  (void)out;
  (void)n;
  *why = kNoCuda;
  return false;
}
