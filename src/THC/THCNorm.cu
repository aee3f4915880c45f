// Batch norm and layer norm (forward, backward) on contiguous float32/float64
// tensors; ATNN.c makes them so. The same math as the CPU loops in ATNN.c:
// statistics sum in double, the variance is the centered sum of squares (two
// passes, no cancellation), and the running variance is the unbiased one.
//
// Batch norm: blocks per (part of a channel) write partial sums, a thread per
// channel combines them, then a grid-stride elementwise pass (cuDNN takes
// float32 first when it loads: THCCudnn.cu). Layer norm: a block per row of M
// elements; its weight/bias gradients are column sums, a thread per column.
// group_norm is a composite over layer norm (cthtorch/_ops/nn.py).
#include <math.h>

#include "THCGeneral.h"

namespace {

const int NB = 256;   // threads of every block-per-channel/row kernel

// the block-wide sums of a and b (blockDim.x == NB), to every thread
__device__ double2 block_sum2(double a, double b) {
  __shared__ double sa[NB / 32], sb[NB / 32];
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, o);
    b += __shfl_down_sync(0xffffffffu, b, o);
  }
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  __syncthreads();   // a previous call's readers of sa[0] are done
  if (lane == 0) { sa[w] = a; sb[w] = b; }
  __syncthreads();
  if (w == 0) {
    a = lane < NB / 32 ? sa[lane] : 0.0;
    b = lane < NB / 32 ? sb[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) {
      a += __shfl_down_sync(0xffffffffu, a, o);
      b += __shfl_down_sync(0xffffffffu, b, o);
    }
    if (lane == 0) { sa[0] = a; sb[0] = b; }
  }
  __syncthreads();
  return make_double2(sa[0], sb[0]);
}

// blocks for a block-per-item kernel (the kernels loop over the rest)
unsigned items_blocks(long long n) { return (unsigned)(n < 65535LL * 32 ? (n > 0 ? n : 1) : 65535LL * 32); }

// ---- batch norm over [N, C, S]: element (n, c, k) at (n * C + c) * S + k ----
//
// Each channel's N*S elements are split into P parts, a block per (part,
// channel), so that few channels of many elements (ResNet's 64 channels at
// 64x112x112) still fill every SM. The blocks write double partial sums; a
// thread per channel combines them in a fixed order (deterministic), and an
// elementwise pass applies the result.

// f(o) summed over block (p, c)'s share [p * chunk, (p + 1) * chunk) of
// channel c's M elements (o: the element's offset), to every thread
template <typename F>
__device__ double2 channel_part_sum(long long c, long long p, long long C, long long S, long long M, long long chunk,
                                    F f) {
  long long i0 = p * chunk + threadIdx.x, i1 = (p + 1) * chunk < M ? (p + 1) * chunk : M;
  double a = 0, b = 0;
  if (i0 < i1) {
    long long n = i0 / S, k = i0 % S;
    for (long long i = i0; i < i1; i += NB) {
      double2 v = f((n * C + c) * S + k);
      a += v.x;
      b += v.y;
      k += NB;   // the next element of this thread: NB further along the channel
      if (k >= S) { n += k / S; k %= S; }
    }
  }
  return block_sum2(a, b);
}

// training, pass 1: the partial sums of x
template <typename T>
__global__ void bn_part_sum(const T *x, double *part, long long C, long long S, long long M, long long chunk) {
  long long P = gridDim.x;
  for (long long c = blockIdx.y; c < C; c += gridDim.y) {
    double2 r = channel_part_sum(c, blockIdx.x, C, S, M, chunk,
                                 [=](long long o) { return make_double2((double)x[o], 0.0); });
    if (threadIdx.x == 0) part[c * P + blockIdx.x] = r.x;
  }
}

// training, pass 2: the partial sums of (x - mean)^2, the mean from pass 1's partials
template <typename T>
__global__ void bn_part_sq(const T *x, const double *part, double *part2, long long C, long long S, long long M,
                           long long chunk) {
  long long P = gridDim.x;
  for (long long c = blockIdx.y; c < C; c += gridDim.y) {
    double t = 0;
    for (long long q = 0; q < P; q++) t += part[c * P + q];
    double m = t / (double)M;
    double2 r = channel_part_sum(c, blockIdx.x, C, S, M, chunk, [=](long long o) {
      double v = (double)x[o] - m;
      return make_double2(v * v, 0.0);
    });
    if (threadIdx.x == 0) part2[c * P + blockIdx.x] = r.x;
  }
}

// a thread per channel. training: batch mean and invstd (biased variance)
// from the partials, and the running stats moved toward them (nrm/nrv, when
// rm/rv exist); eval: the running stats themselves. Absent vectors are
// torch's defaults (mean 0, var 1).
template <typename T>
__global__ void bn_finish(const double *part, const double *part2, long long P, const T *rm, const T *rv, T *mean,
                          T *invstd, T *nrm, T *nrv, long long C, long long M, bool training, double momentum,
                          double eps) {
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < C; c += (long long)blockDim.x * gridDim.x) {
    double r_m = rm ? (double)rm[c] : 0.0, r_v = rv ? (double)rv[c] : 1.0;
    if (!training) { mean[c] = (T)r_m; invstd[c] = (T)(1.0 / sqrt(r_v + eps)); continue; }
    double t = 0, s2 = 0;
    for (long long q = 0; q < P; q++) { t += part[c * P + q]; s2 += part2[c * P + q]; }
    double m = t / (double)M, var = s2 / (double)M;
    mean[c] = (T)m;
    invstd[c] = (T)(1.0 / sqrt(var + eps));
    if (nrm) nrm[c] = (T)((1 - momentum) * r_m + momentum * m);
    if (nrv) nrv[c] = (T)((1 - momentum) * r_v + momentum * (M > 1 ? s2 / (double)(M - 1) : var));
  }
}

// y = x * a + b' with a = w * invstd, b' = b - mean * a per channel (as the CPU)
template <typename T>
__global__ void bn_apply(const T *x, const T *w, const T *b, const T *mean, const T *invstd, T *y, long long C,
                         long long S, long long total) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long c = (i / S) % C;
    double a = (w ? (double)w[c] : 1.0) * (double)invstd[c];
    double bb = (b ? (double)b[c] : 0.0) - (double)mean[c] * a;
    y[i] = x[i] * (T)a + (T)bb;
  }
}

// backward, pass 1: the partial sums of g and g * (x - mean)
template <typename T>
__global__ void bn_part_grad(const T *g, const T *x, const T *mean, double *part, double *part2, long long C,
                             long long S, long long M, long long chunk) {
  long long P = gridDim.x;
  for (long long c = blockIdx.y; c < C; c += gridDim.y) {
    double m = mean ? (double)mean[c] : 0.0;
    double2 r = channel_part_sum(c, blockIdx.x, C, S, M, chunk, [=](long long o) {
      double gv = (double)g[o];
      return make_double2(gv, gv * ((double)x[o] - m));
    });
    if (threadIdx.x == 0) { part[c * P + blockIdx.x] = r.x; part2[c * P + blockIdx.x] = r.y; }
  }
}

// backward, a thread per channel: db = sum g, dw = sum g * xhat, and the
// coefficients of dx = k1 * g + k2 * x + k0 (k2 = k0 = 0 in eval: the stats
// are constants). stat1 is invstd, or (is_var) the running variance to which
// eps is added.
template <typename T>
__global__ void bn_grad_finish(const double *part, const double *part2, long long P, const T *w, const T *mean,
                               const T *stat1, bool is_var, T *dw, T *db, double *k, long long C, long long M,
                               bool training, double eps) {
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < C; c += (long long)blockDim.x * gridDim.x) {
    double m = mean ? (double)mean[c] : 0.0, s1 = stat1 ? (double)stat1[c] : 1.0;
    double is = is_var ? 1.0 / sqrt(s1 + eps) : s1;
    double sg = 0, sgx = 0;
    for (long long q = 0; q < P; q++) { sg += part[c * P + q]; sgx += part2[c * P + q]; }
    db[c] = (T)sg;
    dw[c] = (T)(sgx * is);
    double k1 = (w ? (double)w[c] : 1.0) * is, k2 = 0, k0 = 0;
    if (training && M > 0) {
      k2 = -k1 * is * is * sgx / (double)M;
      k0 = -k2 * m - k1 * sg / (double)M;
    }
    k[3 * c] = k1; k[3 * c + 1] = k2; k[3 * c + 2] = k0;
  }
}

template <typename T>
__global__ void bn_grad_apply(const T *g, const T *x, const double *k, T *dx, long long C, long long S,
                              long long total) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long c = (i / S) % C;
    dx[i] = (T)k[3 * c] * g[i] + (T)k[3 * c + 1] * x[i] + (T)k[3 * c + 2];
  }
}

// the split of each channel: P parts of chunk elements, enough blocks in all
// (C * P >= 1024) to fill the GPU while each part keeps >= 2048 elements
struct Split {
  long long P, chunk;
  Split(long long C, long long M) {
    long long want = C > 0 ? (1024 + C - 1) / C : 1, most = (M + 2047) / 2048;
    P = want < most ? want : most;
    if (P > 256) P = 256;
    if (P < 1) P = 1;
    chunk = (M + P - 1) / P;
    if (chunk < 1) chunk = 1;
  }
  dim3 grid(long long C) const { return dim3((unsigned)P, (unsigned)(C < 65535 ? C : 65535)); }
};

template <typename T>
__global__ void ln_forward(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, long long R, long long M,
                           double eps) {
  for (long long r = blockIdx.x; r < R; r += gridDim.x) {
    const T *xr = x + r * M;
    T *yr = y + r * M;
    double s = 0;
    for (long long j = threadIdx.x; j < M; j += NB) s += (double)xr[j];
    double md = block_sum2(s, 0).x / (double)M;
    double s2 = 0;
    for (long long j = threadIdx.x; j < M; j += NB) {
      double v = (double)xr[j] - md;
      s2 += v * v;
    }
    s2 = block_sum2(s2, 0).x;
    T m = (T)md, is = (T)(1.0 / sqrt(s2 / (double)M + eps));
    if (threadIdx.x == 0) { mean[r] = m; rstd[r] = is; }
    for (long long j = threadIdx.x; j < M; j += NB) yr[j] = (xr[j] - m) * is * (w ? w[j] : (T)1) + (b ? b[j] : (T)0);
  }
}

// dx = rstd * (dxh - mean(dxh) - xhat * mean(dxh * xhat)), dxh = g * w, per row
template <typename T>
__global__ void ln_backward_dx(const T *g, const T *x, const T *mean, const T *rstd, const T *w, T *dx, long long R,
                               long long M) {
  for (long long r = blockIdx.x; r < R; r += gridDim.x) {
    const T *xr = x + r * M, *gr = g + r * M;
    T *dr = dx + r * M, m = mean[r], is = rstd[r];
    double a = 0, bs = 0;
    for (long long j = threadIdx.x; j < M; j += NB) {
      T xh = (xr[j] - m) * is, dxh = gr[j] * (w ? w[j] : (T)1);
      a += (double)dxh;
      bs += (double)dxh * (double)xh;
    }
    double2 s = block_sum2(a, bs);
    T ca = (T)(s.x / (double)M), cb = (T)(s.y / (double)M);
    for (long long j = threadIdx.x; j < M; j += NB) {
      T xh = (xr[j] - m) * is;
      dr[j] = is * (gr[j] * (w ? w[j] : (T)1) - ca - xh * cb);
    }
  }
}

// dw[j] = sum_r g * xhat, db[j] = sum_r g: a thread per column (reads coalesce across j)
template <typename T>
__global__ void ln_backward_dwdb(const T *g, const T *x, const T *mean, const T *rstd, T *dw, T *db, long long R,
                                 long long M) {
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < M; j += (long long)blockDim.x * gridDim.x) {
    double sw = 0, sb = 0;
    for (long long r = 0; r < R; r++) {
      T gv = g[r * M + j];
      sw += (double)(gv * ((x[r * M + j] - mean[r]) * rstd[r]));
      sb += (double)gv;
    }
    dw[j] = (T)sw;
    db[j] = (T)sb;
  }
}

int not_float(THDtype dt, const char *op) {
  THError_set(TH_ERR_NOTIMPL, "\"%s\" on CUDA is not implemented for '%s'", op, THDtype_info[dt].legacy);
  return -1;
}

template <typename T>
int batch_norm_t(const void *x, const void *w, const void *b, const void *rm, const void *rv, void *y, void *mean,
                 void *invstd, void *nrm, void *nrv, long long N, long long C, long long S, bool training,
                 double momentum, double eps) {
  if (C == 0) return 0;
  cudaStream_t st = thc_stream();
  long long M = N * S;
  Split sp(C, M);
  THCScratch scratch;
  double *part = NULL, *part2 = NULL;
  if (training) {
    if (scratch.get((size_t)(2 * C * sp.P) * sizeof(double)) < 0) return -1;
    part = (double *)scratch.ptr;
    part2 = part + C * sp.P;
    bn_part_sum<T><<<sp.grid(C), NB, 0, st>>>((const T *)x, part, C, S, M, sp.chunk);
    if (thc_launched("batch_norm") < 0) return -1;
    bn_part_sq<T><<<sp.grid(C), NB, 0, st>>>((const T *)x, part, part2, C, S, M, sp.chunk);
    if (thc_launched("batch_norm") < 0) return -1;
  }
  bn_finish<T><<<thc_blocks(C, 256), 256, 0, st>>>(part, part2, sp.P, (const T *)rm, (const T *)rv, (T *)mean,
                                                   (T *)invstd, (T *)nrm, (T *)nrv, C, M, training, momentum, eps);
  if (thc_launched("batch_norm") < 0) return -1;
  long long total = N * C * S;
  if (total == 0) return 0;
  bn_apply<T><<<thc_blocks(total, 256), 256, 0, st>>>((const T *)x, (const T *)w, (const T *)b, (const T *)mean,
                                                      (const T *)invstd, (T *)y, C, S, total);
  return thc_launched("batch_norm");
}

template <typename T>
int batch_norm_backward_t(const void *g, const void *x, const void *w, const void *mean, const void *stat1, bool is_var,
                          void *dx, void *dw, void *db, long long N, long long C, long long S, bool training,
                          double eps) {
  if (C == 0) return 0;
  cudaStream_t st = thc_stream();
  long long M = N * S;
  Split sp(C, M);
  THCScratch scratch;
  if (scratch.get((size_t)(2 * C * sp.P + 3 * C) * sizeof(double)) < 0) return -1;
  double *part = (double *)scratch.ptr, *part2 = part + C * sp.P, *k = part2 + C * sp.P;
  bn_part_grad<T><<<sp.grid(C), NB, 0, st>>>((const T *)g, (const T *)x, (const T *)mean, part, part2, C, S, M,
                                             sp.chunk);
  if (thc_launched("batch_norm_backward") < 0) return -1;
  bn_grad_finish<T><<<thc_blocks(C, 256), 256, 0, st>>>(part, part2, sp.P, (const T *)w, (const T *)mean,
                                                        (const T *)stat1, is_var, (T *)dw, (T *)db, k, C, M,
                                                        training, eps);
  if (thc_launched("batch_norm_backward") < 0) return -1;
  long long total = N * C * S;
  if (total == 0) return 0;
  bn_grad_apply<T><<<thc_blocks(total, 256), 256, 0, st>>>((const T *)g, (const T *)x, k, (T *)dx, C, S, total);
  return thc_launched("batch_norm_backward");
}

template <typename T>
int layer_norm_t(const void *x, const void *w, const void *b, void *y, void *mean, void *rstd, long long R, long long M,
                 double eps) {
  if (R == 0) return 0;
  ln_forward<T><<<items_blocks(R), NB, 0, thc_stream()>>>((const T *)x, (const T *)w, (const T *)b, (T *)y, (T *)mean,
                                                           (T *)rstd, R, M, eps);
  return thc_launched("layer_norm");
}

template <typename T>
int layer_norm_backward_t(const void *g, const void *x, const void *mean, const void *rstd, const void *w, void *dx,
                          void *dw, void *db, long long R, long long M) {
  cudaStream_t st = thc_stream();
  if (R > 0) {
    ln_backward_dx<T><<<items_blocks(R), NB, 0, st>>>((const T *)g, (const T *)x, (const T *)mean, (const T *)rstd,
                                                       (const T *)w, (T *)dx, R, M);
    if (thc_launched("layer_norm_backward") < 0) return -1;
  }
  if (M > 0) {
    ln_backward_dwdb<T><<<thc_blocks(M, 256), 256, 0, st>>>((const T *)g, (const T *)x, (const T *)mean,
                                                            (const T *)rstd, (T *)dw, (T *)db, R, M);
    if (thc_launched("layer_norm_backward") < 0) return -1;
  }
  return 0;
}

}  // namespace

extern "C" int thc_batch_norm(THDtype dt, const void *x, const void *w, const void *b, const void *rm, const void *rv,
                              void *y, void *mean, void *invstd, void *new_rm, void *new_rv, int64_t N, int64_t C,
                              int64_t S, bool training, double momentum, double eps) {
  if (dt == TH_Float) return batch_norm_t<float>(x, w, b, rm, rv, y, mean, invstd, new_rm, new_rv, N, C, S, training, momentum, eps);
  if (dt == TH_Double) return batch_norm_t<double>(x, w, b, rm, rv, y, mean, invstd, new_rm, new_rv, N, C, S, training, momentum, eps);
  return not_float(dt, "batch_norm");
}

extern "C" int thc_batch_norm_backward(THDtype dt, const void *g, const void *x, const void *w, const void *mean,
                                       const void *stat1, bool is_var, void *dx, void *dw, void *db, int64_t N,
                                       int64_t C, int64_t S, bool training, double eps) {
  if (dt == TH_Float) return batch_norm_backward_t<float>(g, x, w, mean, stat1, is_var, dx, dw, db, N, C, S, training, eps);
  if (dt == TH_Double) return batch_norm_backward_t<double>(g, x, w, mean, stat1, is_var, dx, dw, db, N, C, S, training, eps);
  return not_float(dt, "batch_norm_backward");
}

extern "C" int thc_layer_norm(THDtype dt, const void *x, const void *w, const void *b, void *y, void *mean, void *rstd,
                              int64_t R, int64_t M, double eps) {
  if (dt == TH_Float) return layer_norm_t<float>(x, w, b, y, mean, rstd, R, M, eps);
  if (dt == TH_Double) return layer_norm_t<double>(x, w, b, y, mean, rstd, R, M, eps);
  return not_float(dt, "layer_norm");
}

extern "C" int thc_layer_norm_backward(THDtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                                       const void *w, void *dx, void *dw, void *db, int64_t R, int64_t M) {
  if (dt == TH_Float) return layer_norm_backward_t<float>(g, x, mean, rstd, w, dx, dw, db, R, M);
  if (dt == TH_Double) return layer_norm_backward_t<double>(g, x, mean, rstd, w, dx, dw, db, R, M);
  return not_float(dt, "layer_norm_backward");
}
