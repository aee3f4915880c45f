/* Out-of-place transposes of 4-byte elements (float32 and int32 alike: bits are moved, not values),
 * shared by the LSTM's gate transposes (ATen/ATRNN.c) and contiguous copies of transposed views
 * (ATen/ATCopy.c). */
#ifndef TH_TRANSPOSE_H
#define TH_TRANSPOSE_H
#include <stdint.h>

/* dst[j * ldd + i] = src[i * lds + j] for i < m, j < n (serial; callers split the work) */
void THTranspose_f32(int64_t m, int64_t n, const float *src, int64_t lds, float *dst, int64_t ldd);

#endif
