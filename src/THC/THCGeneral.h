/* THC: the CUDA side of TH. Built only where nvcc exists; used only where a
 * GPU answers. Same error protocol as TH: status returns, THError_set. */
#ifndef THC_GENERAL_H
#define THC_GENERAL_H

#include "../TH/THAllocator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of visible CUDA devices; 0 when there is no GPU or no driver. */
int THC_deviceCount(void);
/* Device memory, as a TH allocator (storages on the GPU). */
extern const THAllocator THCudaAllocator;
/* out[i] = a[i] + alpha * b[i] over n contiguous floats on the device */
int THCudaFloat_add(float *out, const float *a, const float *b, float alpha, long long n);
int THCudaFloat_fill(float *out, float value, long long n);
int THCuda_memcpyToDevice(void *dst, const void *src, size_t nbytes);
int THCuda_memcpyToHost(void *dst, const void *src, size_t nbytes);

#ifdef __cplusplus
}
#endif
#endif
