// Random numbers on the GPU: Philox4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3"), the counter-based generator PyTorch's CUDA
// generator uses. A call's stream of numbers is fixed by (seed, offset):
// element i takes word i % 4 of the block at counter (i / 4, offset), so no
// state lives on the device and every thread computes its own numbers.
// ATen advances the offset after each call. The values differ from PyTorch's
// CUDA streams (which split the counter differently); the distribution is the same.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "THCGeneral.h"

namespace {

struct U4 { unsigned x, y, z, w; };

__device__ __forceinline__ U4 philox(unsigned long long idx, unsigned long long offset, unsigned long long seed) {
  unsigned c0 = (unsigned)idx, c1 = (unsigned)(idx >> 32), c2 = (unsigned)offset, c3 = (unsigned)(offset >> 32);
  unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  U4 r = {c0, c1, c2, c3};
  return r;
}

// [0, 1) with 24 random bits, as PyTorch's float uniform
__device__ __forceinline__ float u01(unsigned v) { return (v >> 8) * (1.0f / 16777216.0f); }

template <typename T> __device__ __forceinline__ T cast_out(float v) { return (T)v; }
template <> __device__ __forceinline__ __half cast_out<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 cast_out<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

// kind: 0 uniform [a, b), 1 normal (mean a, std b), 2 bernoulli (p = a)
template <typename T>
__global__ void random_kernel(T *out, long long n, int kind, double a, double b, unsigned long long seed,
                              unsigned long long offset) {
  long long blocks = (n + 3) / 4;
  for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < blocks; blk += (long long)blockDim.x * gridDim.x) {
    U4 r = philox((unsigned long long)blk, offset, seed);
    unsigned w[4] = {r.x, r.y, r.z, r.w};
    float v[4];
    if (kind == 1) {   // Box-Muller on two pairs
      for (int j = 0; j < 4; j += 2) {
        float u1 = 1.0f - u01(w[j]), u2 = u01(w[j + 1]);   // u1 in (0, 1]: log is finite
        float rad = sqrtf(-2.0f * logf(u1)), th = 6.283185307179586f * u2;
        v[j] = (float)(a + b * rad * cosf(th));
        v[j + 1] = (float)(a + b * rad * sinf(th));
      }
    } else {
      for (int j = 0; j < 4; j++) {
        float u = u01(w[j]);
        if (kind == 0) {
          float x = (float)(a + (b - a) * u);
          v[j] = x < (float)b ? x : (float)a;   // rounding must not reach b
        } else {
          v[j] = u < (float)a ? 1.0f : 0.0f;
        }
      }
    }
    for (int j = 0; j < 4; j++) {
      long long i = blk * 4 + j;
      if (i < n) out[i] = cast_out<T>(v[j]);
    }
  }
}

template <typename T>
int launch(void *out, long long n, int kind, double a, double b, unsigned long long seed, unsigned long long offset) {
  long long blocks = (n + 3) / 4;
  random_kernel<T><<<thc_blocks(blocks, 256), 256, 0, thc_stream()>>>((T *)out, n, kind, a, b, seed, offset);
  return thc_launched("random");
}

}  // namespace

extern "C" int thc_random(int kind, THDtype dt, void *out, int64_t n, double a, double b, uint64_t seed, uint64_t offset) {
  if (n == 0) return 0;
  switch (dt) {
    case TH_Float: return launch<float>(out, n, kind, a, b, seed, offset);
    case TH_Double: return launch<double>(out, n, kind, a, b, seed, offset);
    case TH_Half: return launch<__half>(out, n, kind, a, b, seed, offset);
    case TH_BFloat16: return launch<__nv_bfloat16>(out, n, kind, a, b, seed, offset);
    default: break;
  }
  if (kind == 2) {   // bernoulli into integer and bool tensors
    switch (dt) {
      case TH_Bool: return launch<bool>(out, n, kind, a, b, seed, offset);
      case TH_UInt8: return launch<unsigned char>(out, n, kind, a, b, seed, offset);
      case TH_Int8: return launch<signed char>(out, n, kind, a, b, seed, offset);
      case TH_Int16: return launch<short>(out, n, kind, a, b, seed, offset);
      case TH_Int32: return launch<int>(out, n, kind, a, b, seed, offset);
      case TH_Int64: return launch<long long>(out, n, kind, a, b, seed, offset);
      default: break;
    }
  }
  THError_set(TH_ERR_NOTIMPL, "random numbers on CUDA: not implemented for this dtype");
  return -1;
}
