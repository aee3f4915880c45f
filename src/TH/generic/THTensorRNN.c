/* Fused LSTM and GRU cells: the gate nonlinearities and the state update of
 * one time step in one pass over (B, H), forward and backward, so that a step
 * is one GEMM plus one kernel instead of a dozen pointwise ops.
 *
 * LSTM. gates = x W_ih^T + b_ih + h W_hh^T + b_hh, (B, 4H) in torch's chunk
 * order i, f, g, o. Forward:
 *   i = sigm(gi), f = sigm(gf), g = tanh(gg), o = sigm(go)
 *   cy = f * cx + i * g,  hy = o * tanh(cy)
 * The workspace ws (B, 4H) keeps the activated i, f, g, o: with cx and cy
 * that is all the backward reads. Backward (dws: gradient reaching ws itself,
 * non-NULL only in double backward, where ws is part of the recorded graph):
 *   dc = dcy + dhy * o * (1 - tanh(cy)^2)
 *   d gi = (dc * g  + dws_i) * i (1 - i)     d gf = (dc * cx + dws_f) * f (1 - f)
 *   d gg = (dc * i  + dws_g) * (1 - g^2)     d go = (dhy * tanh(cy) + dws_o) * o (1 - o)
 *   dcx = dc * f
 *
 * GRU. ig = x W_ih^T + b_ih and hg = h W_hh^T + b_hh, (B, 3H) in order r, z, n:
 *   r = sigm(ig_r + hg_r), z = sigm(ig_z + hg_z), n = tanh(ig_n + r * hg_n)
 *   hy = (hx - n) * z + n          (torch's rounding order)
 * ws (B, 4H) keeps r, z, n and hg_n. Backward:
 *   dn = dhy (1 - z) + dws_n,  dz = dhy (hx - n) + dws_z,  dhx = dhy z
 *   d ig_n = dn (1 - n^2),  d hg_n = d ig_n * r + dws_hn
 *   d ig_r = d hg_r = (d ig_n * hg_n + dws_r) r (1 - r),  d ig_z = d hg_z = dz z (1 - z) */
#include "../THMath.h"   /* libmvec: the omp simd loops below call vector expf/tanhf */
#include "../THVecRNN.h"  /* float32 LSTM cells: inlined AVX2 exp/tanh instead */

#define C(v) ((compute_t)(v))

static inline compute_t THTensor_(rnn_sigm)(compute_t x) { return C(1) / (C(1) + TH_EXP(-x)); }

void THTensor_(lstm_cell_forward)(int64_t B, int64_t H, const void *gates_, const void *cx_, void *hy_, void *cy_,
                                  void *ws_) {
  const scalar_t *gates = gates_, *cx = cx_;
  scalar_t *hy = hy_, *cy = cy_, *ws = ws_;
  if (TH_DTYPE == TH_Float && th_vec_lstm_cell_forward(B, H, gates_, NULL, cx_, hy_, cy_, ws_, NULL)) return;
#pragma omp parallel for if (B * H > 16384)
  for (int64_t b = 0; b < B; b++) {
    const scalar_t *g = gates + b * 4 * H, *c0 = cx + b * H;
    scalar_t *w = ws + b * 4 * H, *h1 = hy + b * H, *c1 = cy + b * H;
#pragma omp simd
    for (int64_t j = 0; j < H; j++) {
      compute_t i = THTensor_(rnn_sigm)(TOC(g[j])), f = THTensor_(rnn_sigm)(TOC(g[H + j]));
      compute_t gg = TH_TANH(TOC(g[2 * H + j])), o = THTensor_(rnn_sigm)(TOC(g[3 * H + j]));
      scalar_t c = FROMC(f * TOC(c0[j]) + i * gg);
      c1[j] = c;
      h1[j] = FROMC(o * TH_TANH(TOC(c)));
      w[j] = FROMC(i); w[H + j] = FROMC(f); w[2 * H + j] = FROMC(gg); w[3 * H + j] = FROMC(o);
    }
  }
}

/* GWS: the workspace gradient term, (compute_t)0 when there is none; the
 * loop is written once and compiled with and without it so that both
 * vectorize. ghy and gcy are never NULL here (ATen passes zeros). */
#define LSTM_BWD_BODY(GWS)                                                                     \
  for (int64_t b = 0; b < B; b++) {                                                            \
    const scalar_t *w = ws + b * 4 * H, *c0 = cx + b * H, *c1 = cy + b * H;                    \
    const scalar_t *dh1 = ghy + b * H, *dc1 = gcy + b * H;                                     \
    const scalar_t *gw = gws ? gws + b * 4 * H : NULL;                                         \
    scalar_t *d = dgates + b * 4 * H, *dc0 = dcx + b * H;                                      \
    (void)gw;                                                                                  \
    _Pragma("omp simd")                                                                        \
    for (int64_t j = 0; j < H; j++) {                                                          \
      compute_t i = TOC(w[j]), f = TOC(w[H + j]), gg = TOC(w[2 * H + j]), o = TOC(w[3 * H + j]); \
      compute_t tc = TH_TANH(TOC(c1[j])), dh = TOC(dh1[j]);                                    \
      compute_t dc = TOC(dc1[j]) + dh * o * (C(1) - tc * tc);                                  \
      d[j] = FROMC((dc * gg + GWS(0)) * i * (C(1) - i));                                       \
      d[H + j] = FROMC((dc * TOC(c0[j]) + GWS(H)) * f * (C(1) - f));                           \
      d[2 * H + j] = FROMC((dc * i + GWS(2 * H)) * (C(1) - gg * gg));                          \
      d[3 * H + j] = FROMC((dh * tc + GWS(3 * H)) * o * (C(1) - o));                           \
      dc0[j] = FROMC(dc * f);                                                                  \
    }                                                                                          \
  }
#define GWS_ON(off) TOC(gw[(off) + j])
#define GWS_OFF(off) C(0)
/* a backward loop, with the workspace gradient or without it, threaded over the batch */
#define RNN_BWD_RUN(BODY)                            \
  if (gws) {                                         \
    _Pragma("omp parallel for if (B * H > 16384)")   \
    BODY(GWS_ON)                                     \
  } else {                                           \
    _Pragma("omp parallel for if (B * H > 16384)")   \
    BODY(GWS_OFF)                                    \
  }

void THTensor_(lstm_cell_backward)(int64_t B, int64_t H, const void *ghy_, const void *gcy_, const void *gws_,
                                   const void *cx_, const void *cy_, const void *ws_, void *dgates_, void *dcx_) {
  const scalar_t *ghy = ghy_, *gcy = gcy_, *gws = gws_, *cx = cx_, *cy = cy_, *ws = ws_;
  scalar_t *dgates = dgates_, *dcx = dcx_;
  if (TH_DTYPE == TH_Float && !gws && th_vec_lstm_cell_backward(B, H, ghy_, gcy_, cx_, cy_, NULL, ws_, dgates_, dcx_))
    return;
  RNN_BWD_RUN(LSTM_BWD_BODY)
}
#undef LSTM_BWD_BODY

void THTensor_(gru_cell_forward)(int64_t B, int64_t H, const void *ig_, const void *hg_, const void *hx_, void *hy_,
                                 void *ws_) {
  const scalar_t *ig = ig_, *hg = hg_, *hx = hx_;
  scalar_t *hy = hy_, *ws = ws_;
#pragma omp parallel for if (B * H > 16384)
  for (int64_t b = 0; b < B; b++) {
    const scalar_t *a = ig + b * 3 * H, *h = hg + b * 3 * H, *h0 = hx + b * H;
    scalar_t *w = ws + b * 4 * H, *h1 = hy + b * H;
#pragma omp simd
    for (int64_t j = 0; j < H; j++) {
      compute_t r = THTensor_(rnn_sigm)(TOC(a[j]) + TOC(h[j]));
      compute_t z = THTensor_(rnn_sigm)(TOC(a[H + j]) + TOC(h[H + j]));
      compute_t hn = TOC(h[2 * H + j]);
      compute_t n = TH_TANH(TOC(a[2 * H + j]) + r * hn);
      h1[j] = FROMC((TOC(h0[j]) - n) * z + n);
      w[j] = FROMC(r); w[H + j] = FROMC(z); w[2 * H + j] = FROMC(n); w[3 * H + j] = h[2 * H + j];
    }
  }
}

#define GRU_BWD_BODY(GWS)                                                                      \
  for (int64_t b = 0; b < B; b++) {                                                            \
    const scalar_t *w = ws + b * 4 * H, *h0 = hx + b * H, *dh1 = ghy + b * H;                  \
    const scalar_t *gw = gws ? gws + b * 4 * H : NULL;                                         \
    scalar_t *di = dig + b * 3 * H, *dh = dhg + b * 3 * H, *dh0 = dhx + b * H;                 \
    (void)gw;                                                                                  \
    _Pragma("omp simd")                                                                        \
    for (int64_t j = 0; j < H; j++) {                                                          \
      compute_t r = TOC(w[j]), z = TOC(w[H + j]), n = TOC(w[2 * H + j]), hn = TOC(w[3 * H + j]); \
      compute_t g = TOC(dh1[j]), h = TOC(h0[j]);                                               \
      compute_t dn = g * (C(1) - z) + GWS(2 * H);                                              \
      compute_t dz = (g * (h - n) + GWS(H)) * z * (C(1) - z);                                  \
      compute_t dnp = dn * (C(1) - n * n);                                                     \
      compute_t dr = (dnp * hn + GWS(0)) * r * (C(1) - r);                                     \
      di[j] = FROMC(dr); dh[j] = FROMC(dr);                                                    \
      di[H + j] = FROMC(dz); dh[H + j] = FROMC(dz);                                            \
      di[2 * H + j] = FROMC(dnp);                                                              \
      dh[2 * H + j] = FROMC(dnp * r + GWS(3 * H));                                             \
      dh0[j] = FROMC(g * z);                                                                   \
    }                                                                                          \
  }

void THTensor_(gru_cell_backward)(int64_t B, int64_t H, const void *ghy_, const void *gws_, const void *hx_,
                                  const void *ws_, void *dig_, void *dhg_, void *dhx_) {
  const scalar_t *ghy = ghy_, *gws = gws_, *hx = hx_, *ws = ws_;
  scalar_t *dig = dig_, *dhg = dhg_, *dhx = dhx_;
  RNN_BWD_RUN(GRU_BWD_BODY)
}
#undef GRU_BWD_BODY
#undef RNN_BWD_RUN
#undef GWS_ON
#undef GWS_OFF
#undef C
