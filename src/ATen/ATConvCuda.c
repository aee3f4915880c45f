/* conv2d forward and backward on the GPU: im2col (src/THC/THCConv.cu) and a
 * batched cuBLAS GEMM per group, over chunks of images so the columns stay
 * under COL_BYTES. The GEMMs in BLAS's column-major terms, with L = OH*OW,
 * K = Cg*KH*KW and row-major buffers read as their transposes:
 *   forward      out (L x Og)  = col (L x K)  * W (K x Og)
 *   grad_input   col (L x K)   = gy (L x Og)  * W^T
 *   grad_weight  gW (K x Og)  += col^T        * gy
 *   grad_bias    gb (O)        = sum over images of gy^T * ones(L)
 * A 1x1 convolution with stride 1 and no padding uses the image itself as its
 * columns. Floating dtypes; float16/bfloat16 GEMMs accumulate in float.
 *
 * cuDNN (src/THC/THCCudnn.cu) takes each direction first when
 * torch.backends.cudnn.enabled; what it declines (cuDNN absent, a dtype or
 * geometry it refuses) runs the im2col path above, as PyTorch falls back to
 * its native convolution. */
#include "ATConv.h"
#include "ATCuda.h"

#define COL_BYTES ((int64_t)256 << 20)

static bool no_columns(const ConvGeom *g) {
  return g->KH == 1 && g->KW == 1 && g->SH == 1 && g->SW == 1 && g->PH == 0 && g->PW == 0;
}

static void conv_shape(const ConvGeom *g, int64_t *s) {
  const int64_t v[13] = { g->C / g->G, g->H, g->W, g->KH, g->KW, g->OH, g->OW, g->SH, g->SW, g->PH, g->PW, g->DH, g->DW };
  for (int i = 0; i < 13; i++) s[i] = v[i];
}

/* one direction through cuDNN: 1 done, 0 not taken (disabled or declined), -1 error */
static int via_cudnn(int dir, const ConvGeom *g, THDtype dt, const void *a, const void *b, void *out) {
  if (!at_cudnn_flags.enabled || !at_cuda->cudnn_conv) return 0;
  ATCudnnConv p = { dt, g->N, g->C, g->H, g->W, g->O, g->KH, g->KW, g->SH, g->SW, g->PH, g->PW, g->DH, g->DW,
                    g->OH, g->OW, g->G, at_cudnn_flags };
  int r = at_cuda->cudnn_conv(dir, &p, a, b, out);
  if (r > 0) at_cudnn_taken++;
  else if (r == 0) at_cudnn_declined++;
  return r;
}

static int check_dtype(const THTensor *x, const char *op) {
  if (THDtype_isFloating(x->dtype)) return 0;
  THError_set(TH_ERR_NOTIMPL, "\"%s\" on CUDA is not implemented for '%s' (floating point only)", op,
              THDtype_info[x->dtype].legacy);
  return -1;
}

/* images per chunk, and the column scratch for it (NULL when none is needed) */
static int columns(const ConvGeom *g, THDtype dt, int dev, int64_t *nb, THTensor **col) {
  int64_t K = g->C / g->G * g->KH * g->KW, L = g->OH * g->OW, per = K * L * THDtype_size(dt);
  *nb = per > 0 ? COL_BYTES / per : g->N;
  if (*nb < 1) *nb = 1;
  if (*nb > g->N) *nb = g->N;
  *col = NULL;
  if (no_columns(g)) return 0;
  int64_t n = *nb * K * L;
  *col = at_new_on(dev, dt, 1, &n, NULL);
  return *col ? 0 : -1;
}

/* the columns of images [n0, n0 + m) of group gr: the images themselves for a
 * 1x1 convolution (no col), else im2col into col; *stride: elements between
 * images' columns. NULL with the error set when the kernel fails. */
static const char *group_columns(const ConvGeom *g, THDtype dt, const char *xd, THTensor *col, const int64_t *shape,
                                 int64_t n0, int64_t m, int64_t gr, int64_t *stride) {
  int es = THDtype_size(dt);
  int64_t Cg = g->C / g->G, xs = g->C * g->H * g->W;
  const char *xg = xd + (n0 * xs + gr * Cg * g->H * g->W) * es;
  *stride = xs;
  if (!col) return xg;
  if (at_cuda->im2col(dt, xg, THTensor_data(col), m, shape, xs) < 0) return NULL;
  *stride = Cg * g->KH * g->KW * g->OH * g->OW;
  return THTensor_data(col);
}

THTensor *at_conv2d_cuda(const THTensor *input, const THTensor *weight, const THTensor *bias, const ConvGeom *g) {
  if (check_dtype(input, "conv2d") < 0) return NULL;
  int dev = THTensor_device(input);
  THDtype dt = input->dtype;
  int es = THDtype_size(dt);
  int64_t Og = g->O / g->G, K = g->C / g->G * g->KH * g->KW, L = g->OH * g->OW, nb = 1, shape[13], os = g->O * L;
  conv_shape(g, shape);
  THTensor *x = at_contiguous(input), *w = x ? at_contiguous(weight) : NULL, *col = NULL, *out = NULL;
  if (!w) goto fail;
  if (!(out = at_new_on(dev, dt, 4, (int64_t[]){ g->N, g->O, g->OH, g->OW }, NULL))) goto fail;
  if (THTensor_numel(out) == 0) goto done;
  const char *xd = THTensor_data(x), *wd = THTensor_data(w);
  char *od = THTensor_data(out);
  int by_cudnn = via_cudnn(AT_CUDNN_FWD, g, dt, xd, wd, od);
  if (by_cudnn < 0) goto fail;
  if (!by_cudnn && columns(g, dt, dev, &nb, &col) < 0) goto fail;
  for (int64_t n0 = 0; !by_cudnn && n0 < g->N; n0 += nb) {
    int64_t m = g->N - n0 < nb ? g->N - n0 : nb;
    for (int64_t gr = 0; gr < g->G; gr++) {
      int64_t sa;
      const char *a = group_columns(g, dt, xd, col, shape, n0, m, gr, &sa);
      if (!a || at_cuda->gemm(dt, 'n', 'n', L, Og, K, 1.0, a, L, sa, wd + gr * Og * K * es, K, 0, 0.0,
                        od + (n0 * os + gr * Og * L) * es, L, os, m) < 0)
        goto fail;
    }
  }
  if (bias) {
    if (bias->ndim != 1 || bias->sizes[0] != g->O) {
      THError_set(TH_ERR_RUNTIME, "Given weight of size [%lld, ...], expected bias to be 1-dimensional with %lld "
                  "elements, but got bias of size [%lld] instead", (long long)g->O, (long long)g->O,
                  (long long)THTensor_numel(bias));
      goto fail;
    }
    /* out += bias seen as (1, O, 1, 1) */
    THTensor *bv = THTensor_newView(bias, 4, (int64_t[]){ 1, g->O, 1, 1 }, (int64_t[]){ 0, bias->strides[0], 0, 0 },
                                    bias->offset);
    THTensor *r = bv ? at_add(out, bv, at_scalar_int(1), out) : NULL;
    THTensor_free(bv);
    if (!r) goto fail;
    THTensor_free(r);
  }
done:
  THTensor_free(x); THTensor_free(w); THTensor_free(col);
  return out;
fail:
  THTensor_free(out);
  out = NULL;
  goto done;
}

int at_conv2d_backward_cuda(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                            const ConvGeom *g, bool need_i, bool need_w, bool need_b) {
  outs[0] = outs[1] = outs[2] = NULL;
  if (check_dtype(input, "conv2d_backward") < 0) return -1;
  int dev = THTensor_device(input);
  THDtype dt = input->dtype;
  int es = THDtype_size(dt);
  int64_t Cg = g->C / g->G, Og = g->O / g->G, K = Cg * g->KH * g->KW, L = g->OH * g->OW, nb = 1, shape[13];
  int64_t xs = g->C * g->H * g->W, os = g->O * L;
  conv_shape(g, shape);
  int rc = -1;
  THTensor *x = at_contiguous(input), *w = x ? at_contiguous(weight) : NULL;
  THTensor *gy0 = w ? at_to_dtype(grad, dt, false) : NULL, *gy = gy0 ? at_contiguous(gy0) : NULL;
  THTensor *col = NULL, *ones = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
  if (!gy) goto done;
  if (need_i && !(gi = at_new_on(dev, dt, 4, (int64_t[]){ g->N, g->C, g->H, g->W }, NULL))) goto done;
  if (need_w && !(gw = at_new_on(dev, dt, 4, weight->sizes, NULL))) goto done;
  if (need_b && !(gb = at_new_on(dev, dt, 1, &g->O, NULL))) goto done;
  /* an empty batch (or output) contributes nothing: zero gradients */
  bool empty = g->N == 0 || L == 0;
  if (empty) {
    if ((gw && at_fill_(gw, at_scalar_int(0)) < 0) || (gb && at_fill_(gb, at_scalar_int(0)) < 0) ||
        (gi && at_fill_(gi, at_scalar_int(0)) < 0))
      goto done;
    rc = 0;
    goto done;
  }
  const char *xd = THTensor_data(x), *wd = THTensor_data(w), *gd = THTensor_data(gy);
  char *gid = gi ? THTensor_data(gi) : NULL, *gwd = gw ? THTensor_data(gw) : NULL;
  /* what cuDNN computes leaves the loop below (gid/gwd NULL there) */
  int ri = gid ? via_cudnn(AT_CUDNN_BWD_DATA, g, dt, gd, wd, gid) : 0;
  if (ri < 0) goto done;
  int rw = gwd ? via_cudnn(AT_CUDNN_BWD_FILTER, g, dt, xd, gd, gwd) : 0;
  if (rw < 0) goto done;
  if (ri) gid = NULL;
  if (rw) gwd = NULL;
  if (gwd && at_fill_(gw, at_scalar_int(0)) < 0) goto done;   /* the loop adds into it */
  if ((gid || gwd) && columns(g, dt, dev, &nb, &col) < 0) goto done;
  int64_t nones = L > g->N ? L : g->N;
  if (gb) {
    if (!(ones = at_new_on(dev, dt, 1, &nones, NULL)) || at_fill_(ones, at_scalar_int(1)) < 0) goto done;
  }
  for (int64_t n0 = 0; (gid || gwd) && n0 < g->N; n0 += nb) {
    int64_t m = g->N - n0 < nb ? g->N - n0 : nb;
    for (int64_t gr = 0; gr < g->G; gr++) {
      const char *gyg = gd + (n0 * os + gr * Og * L) * es;
      const char *wg = wd + gr * Og * K * es;
      if (gwd) {
        int64_t sc;
        const char *cb = group_columns(g, dt, xd, col, shape, n0, m, gr, &sc);
        if (!cb) goto done;
        for (int64_t i = 0; i < m; i++)
          if (at_cuda->gemm(dt, 't', 'n', K, Og, L, 1.0, cb + i * sc * es, L, 0, gyg + i * os * es, L, 0, 1.0,
                            gwd + gr * Og * K * es, K, 0, 1) < 0)
            goto done;
      }
      if (gid) {
        char *gig = gid + (n0 * xs + gr * Cg * g->H * g->W) * es;
        if (!col) {
          if (at_cuda->gemm(dt, 'n', 't', L, K, Og, 1.0, gyg, L, os, wg, K, 0, 0.0, gig, L, xs, m) < 0) goto done;
        } else {
          if (at_cuda->gemm(dt, 'n', 't', L, K, Og, 1.0, gyg, L, os, wg, K, 0, 0.0, THTensor_data(col), L, K * L, m) < 0 ||
              at_cuda->col2im(dt, THTensor_data(col), gig, m, shape, xs) < 0)
            goto done;
        }
      }
    }
  }
  if (gb) {
    /* per image, its column of per-channel sums (a batched GEMV into sums: N x O), then the sum over images */
    int64_t no[2] = { g->N, g->O };
    THTensor *sums = at_new_on(dev, dt, 2, no, NULL);
    int r = sums ? at_cuda->gemm(dt, 't', 'n', g->O, 1, L, 1.0, gd, L, os, THTensor_data(ones), L, 0, 0.0,
                                 THTensor_data(sums), g->O, g->O, g->N) : -1;
    if (r == 0)
      r = at_cuda->gemm(dt, 'n', 'n', g->O, 1, g->N, 1.0, THTensor_data(sums), g->O, 0, THTensor_data(ones), g->N,
                        0, 0.0, THTensor_data(gb), g->O, 0, 1);
    THTensor_free(sums);
    if (r < 0) goto done;
  }
  rc = 0;
done:
  THTensor_free(x); THTensor_free(w); THTensor_free(gy0); THTensor_free(gy); THTensor_free(col); THTensor_free(ones);
  if (rc < 0) { THTensor_free(gi); THTensor_free(gw); THTensor_free(gb); return -1; }
  outs[0] = gi; outs[1] = gw; outs[2] = gb;
  return 0;
}
