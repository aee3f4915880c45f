// Elementwise kernels on contiguous device memory (the GPU twin of
// src/TH/generic/THTensorBinary.c for float32): a grid-stride loop per op.
#include <cuda_runtime.h>

#include "THCGeneral.h"

extern "C" 
__global__ void add_kernel(float *out, const float *a, const float *b, float alpha, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    out[i] = a[i] + alpha * b[i];
}

__global__ void fill_kernel(float *out, float v, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    out[i] = v;
}

static int launched(const char *what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return 0;
  THError_set(TH_ERR_RUNTIME, "CUDA kernel %s failed: %s", what, cudaGetErrorString(e));
  return -1;
}

static unsigned blocks_for(long long n) {
  long long b = (n + 255) / 256;
  return (unsigned)(b > 65535 ? 65535 : (b ? b : 1));
}

extern "C" int THCudaFloat_add(float *out, const float *a, const float *b, float alpha, long long n) {
  add_kernel<<<blocks_for(n), 256>>>(out, a, b, alpha, n);
  return launched("add");
}

extern "C" int THCudaFloat_fill(float *out, float v, long long n) {
  fill_kernel<<<blocks_for(n), 256>>>(out, v, n);
  return launched("fill");
}
