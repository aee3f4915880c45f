// Fused optimizer steps on the GPU: the updates of src/ATen/ATOptim.h, one
// thread per element, one launch per parameter. The arithmetic follows the
// CPU loops (ATOptim.c) operation for operation, fmas where they have fmas;
// nvcc's default contraction is off here (-fmad=false is not global, so the
// products that must round alone use __fmul_rn/__dmul_rn).
#include <math.h>

#include "THCGeneral.h"

namespace {

__device__ __forceinline__ float fma_t(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_t(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float mul_t(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_t(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_t(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_t(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float div_t(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_t(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float sqrt_t(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double sqrt_t(double a) { return __dsqrt_rn(a); }

template <typename T>
__global__ void sgd_kernel(T *p, const T *g, T *buf, long long n, T lr, T mom, T damp1, T wd, bool neg, bool decay,
                           bool first, bool nesterov) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T d = neg ? -g[i] : g[i];
    if (decay) d = fma_t(wd, p[i], d);
    if (buf) {
      T b = first ? d : fma_t(damp1, d, mul_t(buf[i], mom));
      buf[i] = b;
      d = nesterov ? fma_t(mom, b, d) : b;
    }
    p[i] = fma_t(-lr, d, p[i]);
  }
}

template <typename T>
__global__ void adam_kernel(T *p, const T *gr, T *m, T *v, T *vmax, long long n, T w1, T beta2, T c2, T wd, T pdecay,
                            T bc2s, T eps, T neg_step, bool neg, bool l2, bool decay_p) {
  bool small = w1 < (T)0.5 && w1 > (T)-0.5;
  T coef = small ? w1 : w1 - 1;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T g = neg ? -gr[i] : gr[i], pi = p[i];
    if (l2) g = fma_t(wd, pi, g);
    if (decay_p) pi = mul_t(pi, pdecay);
    T mi = m[i], diff = add_t(g, -mi);
    mi = fma_t(coef, diff, small ? mi : g);
    m[i] = mi;
    T vi = fma_t(mul_t(c2, g), g, mul_t(v[i], beta2));
    v[i] = vi;
    if (vmax) { vi = vmax[i] > vi ? vmax[i] : vi; vmax[i] = vi; }
    T denom = add_t(div_t(sqrt_t(vi), bc2s), eps);
    p[i] = add_t(pi, div_t(mul_t(neg_step, mi), denom));
  }
}

int float_or_double(THDtype dt, const char *what) {
  if (dt == TH_Float || dt == TH_Double) return 0;
  THError_set(TH_ERR_RUNTIME, "%s on CUDA: expected float32 or float64 parameters, got %s", what,
              THDtype_info[dt].legacy);
  return -1;
}

}  // namespace

extern "C" {

int thc_sgd_step(THDtype dt, void *p, const void *g, void *buf, int64_t n, double lr, double momentum,
                 double dampening, double weight_decay, bool nesterov, bool maximize, bool first) {
  if (float_or_double(dt, "_sgd_step") < 0) return -1;
  if (n == 0) return 0;
  bool decay = weight_decay != 0;
  unsigned blocks = thc_blocks(n, 256);
  if (dt == TH_Float)
    sgd_kernel<float><<<blocks, 256, 0, thc_stream()>>>((float *)p, (const float *)g, (float *)buf, n, (float)lr,
                                                       (float)momentum, (float)(1 - dampening), (float)weight_decay,
                                                       maximize, decay, first, nesterov);
  else
    sgd_kernel<double><<<blocks, 256, 0, thc_stream()>>>((double *)p, (const double *)g, (double *)buf, n, lr, momentum,
                                                        1 - dampening, weight_decay, maximize, decay, first, nesterov);
  return thc_launched("_sgd_step");
}

int thc_adam_step(THDtype dt, void *p, const void *g, void *m, void *v, void *vmax, int64_t n, double lr,
                  double beta1, double beta2, double eps, double weight_decay, double step, bool maximize,
                  bool decoupled) {
  if (float_or_double(dt, "_adam_step") < 0) return -1;
  if (n == 0) return 0;
  // the scalars as ATOptim.c (and torch's Python step) computes them, in double
  double bc1 = 1 - pow(beta1, step), bc2 = 1 - pow(beta2, step);
  double neg_step = -(lr / bc1), bc2s = pow(bc2, 0.5), pdecay = 1 - lr * weight_decay;
  bool l2 = weight_decay != 0 && !decoupled, decay_p = weight_decay != 0 && decoupled;
  unsigned blocks = thc_blocks(n, 256);
  if (dt == TH_Float)
    adam_kernel<float><<<blocks, 256, 0, thc_stream()>>>(
        (float *)p, (const float *)g, (float *)m, (float *)v, (float *)vmax, n, (float)(1 - beta1), (float)beta2,
        (float)(1 - beta2), (float)weight_decay, (float)pdecay, (float)bc2s, (float)eps, (float)neg_step, maximize, l2,
        decay_p);
  else
    adam_kernel<double><<<blocks, 256, 0, thc_stream()>>>(
        (double *)p, (const double *)g, (double *)m, (double *)v, (double *)vmax, n, 1 - beta1, beta2, 1 - beta2,
        weight_decay, pdecay, bc2s, eps, neg_step, maximize, l2, decay_p);
  return thc_launched("_adam_step");
}

}  // extern "C"
