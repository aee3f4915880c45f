/* Double backward of layer_norm and batch_norm. Both normalise groups of n
 * elements (a layer-norm row; a batch-norm channel over N*S positions) with
 * xhat = (x - mean) * r. With gxh = grad_out * w and the incoming gradients
 * ggI, ggW, ggB of grad_input, grad_weight, grad_bias, per group:
 *   A = sum gxh, B = sum gxh*xhat, S1 = sum ggI, S2 = sum ggI*xhat,
 *   P = sum ggI*gxh, c = ggW*grad_out, C = sum c, D = sum c*xhat,
 *   k = (r/n) (n ggI - S1 - xhat S2)
 *   d grad_out = w k + ggW xhat + ggB          d weight = sum of grad_out k
 *   d input = -(r^2 xhat / n^2)(n P - A S1 - B S2)
 *             - (r^2/n) [B (ggI - S1/n - xhat S2/n) + S2 (gxh - A/n - xhat B/n)]
 *             + r (c - C/n - xhat D/n)
 * (from d xhat_k/d x_j = r (delta_jk - 1/n - xhat_j xhat_k / n) and
 *  d r / d x_j = -r^2 xhat_j / n). In batch_norm's eval mode mean and r are
 * constants, so only the products remain. */
#include "ATArgChecks.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static THTensor *dbl(const THTensor *t) {   /* contiguous double copy, or NULL for NULL */
  if (!t) return NULL;
  THTensor *d = at_to_dtype(t, TH_Double, true);
  if (!d) return NULL;
  THTensor *c = at_contiguous(d);
  THTensor_free(d);
  return c;
}

/* One normalised group of n elements; element i sits at (i / S) * stride +
 * i % S from the group's start (a layer-norm row: S = n; a batch-norm
 * channel: N blocks of S, C*S apart). w, ggw, ggb are indexed by i % wmod:
 * per element for layer norm (wmod = n), one value per group for batch norm
 * (wmod = 1). */
typedef struct {
  const double *x, *g, *gi;   /* input, grad_out, ggI (may be NULL) */
  const double *w, *ggw, *ggb;   /* may be NULL */
  int64_t n, S, stride, wmod;    /* element i lives at (i / S) * stride + i % S */
  double mean, r;
  bool fixed;                    /* eval-mode batch norm: mean and r are constants */
} Group;

static inline int64_t at_(const Group *G, int64_t i) { return (i / G->S) * G->stride + i % G->S; }

/* Writes d grad_out and d input at the group's positions; returns d weight's
 * contribution for a per-group weight, or adds into dw[i % wmod] otherwise. */
static double group_double_backward(const Group *G, double *ogo, double *ox, double *dw) {
  double n = (double)G->n, r = G->r, A = 0, B = 0, S1 = 0, S2 = 0, P = 0, C = 0, D = 0, wsum = 0;
  for (int64_t i = 0; i < G->n; i++) {
    int64_t p = at_(G, i), j = i % G->wmod;
    double xh = (G->x[p] - G->mean) * r, gxh = G->g[p] * (G->w ? G->w[j] : 1.0), gg = G->gi ? G->gi[p] : 0.0;
    double c = G->ggw ? G->ggw[j] * G->g[p] : 0.0;
    A += gxh; B += gxh * xh; S1 += gg; S2 += gg * xh; P += gg * gxh; C += c; D += c * xh;
  }
  for (int64_t i = 0; i < G->n; i++) {
    int64_t p = at_(G, i), j = i % G->wmod;
    double wj = G->w ? G->w[j] : 1.0, xh = (G->x[p] - G->mean) * r, gxh = G->g[p] * wj;
    double gg = G->gi ? G->gi[p] : 0.0, c = G->ggw ? G->ggw[j] * G->g[p] : 0.0;
    double k = G->fixed ? gg * r : r / n * (n * gg - S1 - xh * S2);
    ogo[p] = wj * k + (G->ggw ? G->ggw[j] * xh : 0.0) + (G->ggb ? G->ggb[j] : 0.0);
    if (G->wmod == 1) wsum += G->g[p] * k; else dw[j] += G->g[p] * k;
    ox[p] = G->fixed ? c * r
                     : -(r * r * xh / (n * n)) * (n * P - A * S1 - B * S2)
                       - (r * r / n) * (B * (gg - S1 / n - xh * S2 / n) + S2 * (gxh - A / n - xh * B / n))
                       + r * (c - C / n - xh * D / n);
  }
  return wsum;
}

/* Shared driver: the double copies, the three outputs, and the error paths. */
typedef struct {
  THTensor *x, *g, *w, *gi, *gw, *gb, *mt, *st, *dgo, *dx, *dw;
} NormBufs;

static void free_bufs(NormBufs *b) {
  THTensor *all[] = { b->x, b->g, b->w, b->gi, b->gw, b->gb, b->mt, b->st, b->dgo, b->dx, b->dw };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) THTensor_free(all[i]);
}

static int load_bufs(NormBufs *b, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                     const THTensor *grad, const THTensor *input, const THTensor *weight, const THTensor *mean,
                     const THTensor *rstd, int dw_nd, const int64_t *dw_sizes, int64_t ngroups, const char *op) {
  memset(b, 0, sizeof *b);
  if (!mean || !rstd) {
    THError_set(TH_ERR_RUNTIME, "normalization double backward needs the forward's mean and inverse std");
    return -1;
  }
  /* the group loops index grad_out and ggI like input, the statistics per
   * group and weight, ggW and ggB per weight element: a bad call must not
   * make them read past an end */
  int64_t wn;
  bool wn_overflow = th_numel_overflow(dw_nd, dw_sizes, &wn);
  if (at_check_same_shape(grad, input, op, "grad_out", "input") < 0 ||
      (ggI && at_check_same_shape(ggI, input, op, "ggI", "input") < 0))
    return -1;
  if (wn_overflow || THTensor_numel(mean) != ngroups || THTensor_numel(rstd) != ngroups ||
      (weight && THTensor_numel(weight) != wn) || (ggW && THTensor_numel(ggW) != wn) || (ggB && THTensor_numel(ggB) != wn)) {
    THError_set(TH_ERR_RUNTIME, "%s: expected the statistics to have %lld elements and weight, ggW and ggB %lld", op,
                (long long)ngroups, (long long)wn);
    return -1;
  }
  if (!(b->x = dbl(input)) || !(b->g = dbl(grad)) || !(b->mt = dbl(mean)) || !(b->st = dbl(rstd)) ||
      (weight && !(b->w = dbl(weight))) || (ggI && !(b->gi = dbl(ggI))) || (ggW && !(b->gw = dbl(ggW))) ||
      (ggB && !(b->gb = dbl(ggB))))
    return -1;
  if (!(b->dgo = THTensor_new(TH_Double, input->ndim, input->sizes)) ||
      !(b->dx = THTensor_new(TH_Double, input->ndim, input->sizes)) || !(b->dw = THTensor_new(TH_Double, dw_nd, dw_sizes)))
    return -1;
  memset(THTensor_data(b->dw), 0, THTensor_numel(b->dw) * sizeof(double));
  return 0;
}

static int store_outs(THTensor **outs, NormBufs *b, const THTensor *grad, const THTensor *input,
                      const THTensor *weight, const ATIntList *mask) {
  bool want_go = !mask || (mask->n > 0 && mask->v[0]), want_x = !mask || (mask->n > 1 && mask->v[1]);
  bool want_w = weight && (!mask || (mask->n > 2 && mask->v[2]));
  if ((want_go && !(outs[0] = at_to_dtype(b->dgo, grad->dtype, false))) ||
      (want_x && !(outs[1] = at_to_dtype(b->dx, input->dtype, false))) ||
      (want_w && !(outs[2] = at_to_dtype(b->dw, weight->dtype, false)))) {
    for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
    return -1;
  }
  return 0;
}

#define DP(t) ((t) ? (const double *)THTensor_data(t) : NULL)

int at_layer_norm_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                                  const THTensor *grad, const THTensor *input, const ATIntList *shape,
                                  const THTensor *mean, const THTensor *rstd, const THTensor *weight,
                                  const ATIntList *output_mask) {
  outs[0] = outs[1] = outs[2] = NULL;
  int64_t M = 1;
  for (int i = 0; i < shape->n; i++) M *= shape->v[i];
  int64_t R = M ? THTensor_numel(input) / M : 0;
  NormBufs b;
  int rc = -1;
  if (load_bufs(&b, ggI, ggW, ggB, grad, input, weight, mean, rstd, shape->n, shape->v, R,
                "layer_norm_double_backward") == 0) {
    double *ogo = (double *)THTensor_data(b.dgo), *ox = (double *)THTensor_data(b.dx);
    double *dw = (double *)THTensor_data(b.dw);
    for (int64_t r = 0; r < R; r++) {
      Group G = { DP(b.x) + r * M, DP(b.g) + r * M, b.gi ? DP(b.gi) + r * M : NULL, DP(b.w), DP(b.gw), DP(b.gb),
                  M, M, 0, M, DP(b.mt)[r], DP(b.st)[r], false };
      group_double_backward(&G, ogo + r * M, ox + r * M, dw);
    }
    rc = store_outs(outs, &b, grad, input, weight, output_mask);
  }
  free_bufs(&b);
  return rc;
}

int at_batch_norm_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                                  const THTensor *grad, const THTensor *input, const THTensor *weight,
                                  const THTensor *running_mean, const THTensor *running_var,
                                  const THTensor *save_mean, const THTensor *save_invstd, bool training, double eps,
                                  const ATIntList *output_mask) {
  outs[0] = outs[1] = outs[2] = NULL;
  if (at_check_ndim(input, 2, TH_MAX_DIMS, "batch_norm_double_backward", "input") < 0) return -1;
  int64_t N = input->sizes[0], C = input->ndim > 1 ? input->sizes[1] : 1;
  int64_t S = (N * C != 0) ? THTensor_numel(input) / (N * C) : 1;
  NormBufs b;
  int rc = -1;
  if (load_bufs(&b, ggI, ggW, ggB, grad, input, weight, training ? save_mean : running_mean,
                training ? save_invstd : running_var, 1, &C, C, "batch_norm_double_backward") == 0) {
    double *ogo = (double *)THTensor_data(b.dgo), *ox = (double *)THTensor_data(b.dx);
    double *dw = (double *)THTensor_data(b.dw);
    for (int64_t c = 0; c < C; c++) {   /* channel c: N blocks of S, C*S apart */
      double sv = DP(b.st)[c];
      Group G = { DP(b.x) + c * S, DP(b.g) + c * S, b.gi ? DP(b.gi) + c * S : NULL, b.w ? DP(b.w) + c : NULL,
                  b.gw ? DP(b.gw) + c : NULL, b.gb ? DP(b.gb) + c : NULL, N * S, S, C * S, 1, DP(b.mt)[c],
                  training ? sv : 1.0 / sqrt(sv + eps), !training };
      dw[c] = group_double_backward(&G, ogo + c * S, ox + c * S, NULL);
    }
    rc = store_outs(outs, &b, grad, input, weight, output_mask);
  }
  free_bufs(&b);
  return rc;
}
