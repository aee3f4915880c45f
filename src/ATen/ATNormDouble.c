/* Double backward of layer_norm. Per row of N normalized elements, with
 * xhat = (x - mean) * r, gxh = grad_out * w, and the incoming gradients ggI,
 * ggW, ggB of grad_input, grad_weight, grad_bias:
 *   A = sum gxh, B = sum gxh*xhat, S1 = sum ggI, S2 = sum ggI*xhat,
 *   P = sum ggI*gxh, c = ggW*grad_out, C = sum c, D = sum c*xhat,
 *   k = (r/N) (N ggI - S1 - xhat S2)
 *   d grad_out = w k + ggW xhat + ggB          d weight = sum over rows of grad_out k
 *   d input = -(r^2 xhat / N^2)(N P - A S1 - B S2)
 *             - (r^2/N) [B (ggI - S1/N - xhat S2/N) + S2 (gxh - A/N - xhat B/N)]
 *             + r (c - C/N - xhat D/N)
 * (from d xhat_k/d x_j = r (delta_jk - 1/N - xhat_j xhat_k / N) and
 *  d r / d x_j = -r^2 xhat_j / N). */
#include "ATen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static THTensor *dbl(const THTensor *t) {   /* contiguous double copy, or NULL for NULL */
  if (!t) return NULL;
  THTensor *d = at_to_dtype(t, TH_Double, true);
  if (!d) return NULL;
  THTensor *c = at_contiguous(d);
  THTensor_free(d);
  return c;
}

int at_layer_norm_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                                  const THTensor *grad, const THTensor *input, const ATIntList *shape,
                                  const THTensor *mean, const THTensor *rstd, const THTensor *weight,
                                  const ATIntList *output_mask) {
  outs[0] = outs[1] = outs[2] = NULL;
  bool want_go = !output_mask || (output_mask->n > 0 && output_mask->v[0]);
  bool want_x = !output_mask || (output_mask->n > 1 && output_mask->v[1]);
  bool want_w = weight && (!output_mask || (output_mask->n > 2 && output_mask->v[2]));
  int64_t M = 1;
  for (int i = 0; i < shape->n; i++) M *= shape->v[i];
  int64_t n = THTensor_numel(input), R = M ? n / M : 0;
  THTensor *x = dbl(input), *g = dbl(grad), *mt = dbl(mean), *st = dbl(rstd), *w = dbl(weight);
  THTensor *gi = dbl(ggI), *gw = dbl(ggW), *gb = dbl(ggB);
  THTensor *dgo = NULL, *dx = NULL, *dw = NULL;
  int rc = -1;
  if (!x || !g || !mt || !st || (weight && !w) || (ggI && !gi) || (ggW && !gw) || (ggB && !gb)) goto done;
  if (!(dgo = THTensor_new(TH_Double, input->ndim, input->sizes)) ||
      !(dx = THTensor_new(TH_Double, input->ndim, input->sizes)) ||
      !(dw = THTensor_new(TH_Double, shape->n, shape->v)))
    goto done;
#define DP(t) ((const double *)THTensor_data(t))
  const double *xv = DP(x), *gv = DP(g), *mv = DP(mt), *sv = DP(st);
  const double *wv = w ? DP(w) : NULL, *iv = gi ? DP(gi) : NULL, *wwv = gw ? DP(gw) : NULL, *bv = gb ? DP(gb) : NULL;
#undef DP
  double *ogo = (double *)THTensor_data(dgo), *ox = (double *)THTensor_data(dx), *ow = (double *)THTensor_data(dw);
  memset(ow, 0, (size_t)M * sizeof(double));
  double N = (double)M;
  for (int64_t r = 0; r < R; r++) {
    const double *xr = xv + r * M, *gr = gv + r * M, *ir = iv ? iv + r * M : NULL;
    double mu = mv[r], rs = sv[r];
    double A = 0, B = 0, S1 = 0, S2 = 0, P = 0, C = 0, D = 0;
    for (int64_t j = 0; j < M; j++) {
      double xh = (xr[j] - mu) * rs, wj = wv ? wv[j] : 1.0, gxh = gr[j] * wj, gg = ir ? ir[j] : 0.0;
      double c = wwv ? wwv[j] * gr[j] : 0.0;
      A += gxh; B += gxh * xh; S1 += gg; S2 += gg * xh; P += gg * gxh; C += c; D += c * xh;
    }
    for (int64_t j = 0; j < M; j++) {
      double xh = (xr[j] - mu) * rs, wj = wv ? wv[j] : 1.0, gxh = gr[j] * wj, gg = ir ? ir[j] : 0.0;
      double c = wwv ? wwv[j] * gr[j] : 0.0;
      double k = rs / N * (N * gg - S1 - xh * S2);
      ogo[r * M + j] = wj * k + (wwv ? wwv[j] * xh : 0.0) + (bv ? bv[j] : 0.0);
      ow[j] += gr[j] * k;
      ox[r * M + j] = -(rs * rs * xh / (N * N)) * (N * P - A * S1 - B * S2)
                      - (rs * rs / N) * (B * (gg - S1 / N - xh * S2 / N) + S2 * (gxh - A / N - xh * B / N))
                      + rs * (c - C / N - xh * D / N);
    }
  }
  if (want_go && !(outs[0] = at_to_dtype(dgo, grad->dtype, false))) goto done;
  if (want_x && !(outs[1] = at_to_dtype(dx, input->dtype, false))) goto done;
  if (want_w && !(outs[2] = at_to_dtype(dw, weight->dtype, false))) goto done;
  rc = 0;
done:
  if (rc < 0) for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
  THTensor_free(x); THTensor_free(g); THTensor_free(mt); THTensor_free(st); THTensor_free(w);
  THTensor_free(gi); THTensor_free(gw); THTensor_free(gb);
  THTensor_free(dgo); THTensor_free(dx); THTensor_free(dw);
  return rc;
}

/* Double backward of batch_norm: per channel the same algebra as a layer
 * norm row (over its N*S elements) with the channel's scalar weight; in eval
 * mode the normalisation is a fixed affine map, so only the products stay. */
int at_batch_norm_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                                  const THTensor *grad, const THTensor *input, const THTensor *weight,
                                  const THTensor *running_mean, const THTensor *running_var,
                                  const THTensor *save_mean, const THTensor *save_invstd, bool training, double eps,
                                  const ATIntList *output_mask) {
  outs[0] = outs[1] = outs[2] = NULL;
  bool want_go = !output_mask || (output_mask->n > 0 && output_mask->v[0]);
  bool want_x = !output_mask || (output_mask->n > 1 && output_mask->v[1]);
  bool want_w = weight && (!output_mask || (output_mask->n > 2 && output_mask->v[2]));
  int64_t N = input->sizes[0], C = input->ndim > 1 ? input->sizes[1] : 1;
  int64_t S = (N * C != 0) ? THTensor_numel(input) / (N * C) : 1;
  THTensor *x = dbl(input), *g = dbl(grad), *w = dbl(weight), *gi = dbl(ggI), *gw = dbl(ggW), *gb = dbl(ggB);
  THTensor *mt = dbl(training ? save_mean : running_mean), *st = dbl(training ? save_invstd : running_var);
  THTensor *dgo = NULL, *dx = NULL, *dw = NULL;
  int rc = -1;
  if (!x || !g || !mt || !st || (weight && !w) || (ggI && !gi) || (ggW && !gw) || (ggB && !gb)) goto done;
  if (!(dgo = THTensor_new(TH_Double, input->ndim, input->sizes)) ||
      !(dx = THTensor_new(TH_Double, input->ndim, input->sizes)) || !(dw = THTensor_new(TH_Double, 1, &C)))
    goto done;
#define DP(t) ((const double *)THTensor_data(t))
  const double *xv = DP(x), *gv = DP(g), *mv = DP(mt), *sv = DP(st);
  const double *wv = w ? DP(w) : NULL, *iv = gi ? DP(gi) : NULL, *wwv = gw ? DP(gw) : NULL, *bv = gb ? DP(gb) : NULL;
#undef DP
  double *ogo = (double *)THTensor_data(dgo), *ox = (double *)THTensor_data(dx), *ow = (double *)THTensor_data(dw);
  double M = (double)(N * S);
#define AT(n, k) (((n) * C + c) * S + (k))
  for (int64_t c = 0; c < C; c++) {
    double mu = mv[c], rs = training ? sv[c] : 1.0 / sqrt(sv[c] + eps), wc = wv ? wv[c] : 1.0;
    double ggw = wwv ? wwv[c] : 0.0, ggb = bv ? bv[c] : 0.0;
    double A = 0, B = 0, S1 = 0, S2 = 0, P = 0, Sg = 0, Sgx = 0;
    for (int64_t nn = 0; nn < N; nn++)
      for (int64_t k = 0; k < S; k++) {
        int64_t i = AT(nn, k);
        double xh = (xv[i] - mu) * rs, gxh = gv[i] * wc, gg = iv ? iv[i] : 0.0;
        A += gxh; B += gxh * xh; S1 += gg; S2 += gg * xh; P += gg * gxh; Sg += gv[i]; Sgx += gv[i] * xh;
      }
    double Cs = ggw * Sg, Ds = ggw * Sgx, wsum = 0;
    for (int64_t nn = 0; nn < N; nn++)
      for (int64_t k = 0; k < S; k++) {
        int64_t i = AT(nn, k);
        double xh = (xv[i] - mu) * rs, gxh = gv[i] * wc, gg = iv ? iv[i] : 0.0, cc = ggw * gv[i];
        if (training) {
          double kk = rs / M * (M * gg - S1 - xh * S2);
          ogo[i] = wc * kk + ggw * xh + ggb;
          wsum += gv[i] * kk;
          ox[i] = -(rs * rs * xh / (M * M)) * (M * P - A * S1 - B * S2)
                  - (rs * rs / M) * (B * (gg - S1 / M - xh * S2 / M) + S2 * (gxh - A / M - xh * B / M))
                  + rs * (cc - Cs / M - xh * Ds / M);
        } else {   /* y = xhat w + b with fixed mean and invstd */
          ogo[i] = gg * wc * rs + ggw * xh + ggb;
          wsum += gg * gv[i] * rs;
          ox[i] = cc * rs;
        }
      }
    ow[c] = wsum;
  }
#undef AT
  if (want_go && !(outs[0] = at_to_dtype(dgo, grad->dtype, false))) goto done;
  if (want_x && !(outs[1] = at_to_dtype(dx, input->dtype, false))) goto done;
  if (want_w && !(outs[2] = at_to_dtype(dw, weight->dtype, false))) goto done;
  rc = 0;
done:
  if (rc < 0) for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
  THTensor_free(x); THTensor_free(g); THTensor_free(w); THTensor_free(gi); THTensor_free(gw); THTensor_free(gb);
  THTensor_free(mt); THTensor_free(st); THTensor_free(dgo); THTensor_free(dx); THTensor_free(dw);
  return rc;
}
