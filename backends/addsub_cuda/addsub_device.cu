// The GPU half of addsub_cuda (see addsub_device.h): a grid-stride
// elementwise kernel and thin wrappers over the runtime.
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "addsub_device.h"

namespace {

// One thread per element, striding over the grid when n exceeds it. INT32
// arithmetic goes through uint32_t so that overflow wraps (defined).
template <typename T, typename U>
__global__ void addsub_kernel(bool subtract, const T *a, const T *b, T *out, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    U x = (U)a[i], y = (U)b[i];
    out[i] = (T)(subtract ? x - y : x + y);
  }
}

bool check(cudaError_t err, const char **why) {
  if (err == cudaSuccess) return true;
  *why = cudaGetErrorString(err);
  return false;
}

}  // namespace

extern "C" int acu_device_count(const char **why) {
  int n = 0;
  if (!check(cudaGetDeviceCount(&n), why)) return 0;
  if (n == 0) *why = "no CUDA-capable device is detected";
  return n;
}

extern "C" bool acu_set_device(int device, const char **why) {
  return check(cudaSetDevice(device), why);
}

extern "C" bool acu_malloc(void **ptr, size_t n, const char **why) {
  return check(cudaMalloc(ptr, n ? n : 1), why);
}

extern "C" void acu_free(void *ptr) {
  if (ptr != nullptr) cudaFree(ptr);
}

extern "C" bool acu_copy(void *dst, const void *src, size_t n, const char **why) {
  return n == 0 || check(cudaMemcpy(dst, src, n, cudaMemcpyDefault), why);
}

extern "C" bool acu_addsub(bool fp32, bool subtract, const void *a, const void *b,
                           void *out, size_t n, const char **why) {
  if (n == 0) return true;
  const unsigned threads = 256;
  // Enough blocks to fill a large GPU; the stride loop covers the rest.
  size_t want = (n + threads - 1) / threads;
  unsigned blocks = want < 65535 ? (unsigned)want : 65535;
  if (fp32)
    addsub_kernel<float, float><<<blocks, threads>>>(
        subtract, (const float *)a, (const float *)b, (float *)out, n);
  else
    addsub_kernel<int32_t, uint32_t><<<blocks, threads>>>(
        subtract, (const int32_t *)a, (const int32_t *)b, (int32_t *)out, n);
  return check(cudaGetLastError(), why) && check(cudaDeviceSynchronize(), why);
}
