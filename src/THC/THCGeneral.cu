// Device discovery, the CUDA allocator and host<->device copies.
#include <cuda_runtime.h>
#include <stdio.h>

#include "THCGeneral.h"

extern "C" {

int THC_deviceCount(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear: "no device" is an answer, not an error
    return 0;
  }
  return n;
}

static void *cuda_malloc(const THAllocator *self, size_t nbytes, void **ctx) {
  (void)self;
  *ctx = NULL;
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, nbytes ? nbytes : 1);
  if (e != cudaSuccess) {
    THError_set(TH_ERR_MEMORY, "CUDA out of memory. Tried to allocate %zu bytes (%s)", nbytes, cudaGetErrorString(e));
    return NULL;
  }
  return p;
}

static void cuda_free(const THAllocator *self, void *ptr, size_t nbytes, void *ctx) {
  (void)self; (void)nbytes; (void)ctx;
  cudaFree(ptr);
}

const THAllocator THCudaAllocator = {cuda_malloc, cuda_free, "cuda"};

static int check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 0;
  THError_set(TH_ERR_RUNTIME, "CUDA error in %s: %s", what, cudaGetErrorString(e));
  return -1;
}

int THCuda_memcpyToDevice(void *dst, const void *src, size_t n) {
  return check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "memcpy to device");
}
int THCuda_memcpyToHost(void *dst, const void *src, size_t n) {
  return check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "memcpy to host");
}
}
