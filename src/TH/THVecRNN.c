/* AVX2+FMA float32 LSTM cells (see THVecRNN.h).
 *
 * A recurrent layer spends, besides its per-step GEMM, the gate math of every
 * step: three sigmoids and two tanh per cell forward, one tanh backward. The
 * libmvec calls of the generic loop cost ~5 ns a cell; here the functions are
 * inlined and evaluated in float:
 *   exp x = 2^n e^r, n = round(x / ln 2), r = x - n ln 2 (two-part ln 2, FMA),
 *     e^r by its Taylor series to r^7 (|r| <= 0.347: next term < 2e-8 relative)
 *   sigmoid x = 1 / (1 + exp(-x))
 *   tanh x = sign(x) (1 - 2 / (exp(2|x|) + 1)) for |x| >= 0.55, and its Taylor
 *     series to x^17 below, where the subtraction would cancel (next term < 0.1 ulp)
 * exp is within 1 ulp of the correctly rounded float, sigmoid and tanh within
 * about 2.5 (tests/test_rnn.py measures the cells against float64). NaN
 * propagates (the clamps keep a NaN operand); +-inf saturate. */
#include "THVecRNN.h"
#include "THVecMath.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

static int use_vec(void) {
  static int chosen = -1;   /* a benign race: every thread picks the same */
  if (chosen < 0) chosen = strcmp(th_vec_math_kernel(), "avx2") == 0;
  return chosen;
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")

typedef __m256 V;
#define K(x) _mm256_set1_ps(x)

static inline V v_exp(V x) {
  /* max/min return their second operand when either is NaN: x goes second so NaN stays */
  x = _mm256_min_ps(K(88.3f), _mm256_max_ps(K(-87.3f), x));
  V n = _mm256_round_ps(_mm256_mul_ps(x, K(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm256_fnmadd_ps(n, K(0.693359375f), x);   /* ln 2 = 0.693359375 - 2.12194440e-4, the first part exact */
  r = _mm256_fnmadd_ps(n, K(-2.12194440e-4f), r);
  V p = K(1.f / 5040);
  p = _mm256_fmadd_ps(p, r, K(1.f / 720));
  p = _mm256_fmadd_ps(p, r, K(1.f / 120));
  p = _mm256_fmadd_ps(p, r, K(1.f / 24));
  p = _mm256_fmadd_ps(p, r, K(1.f / 6));
  p = _mm256_fmadd_ps(p, r, K(0.5f));
  p = _mm256_fmadd_ps(p, r, K(1.f));
  p = _mm256_fmadd_ps(p, r, K(1.f));
  /* 2^n for n in [-126, 127]: the biased exponent field alone */
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static inline V v_sigmoid(V x) {
  return _mm256_div_ps(K(1.f), _mm256_add_ps(K(1.f), v_exp(_mm256_xor_ps(x, K(-0.f)))));
}

static inline V v_tanh(V x) {
  V ax = _mm256_andnot_ps(K(-0.f), x), sign = _mm256_and_ps(x, K(-0.f));
  V big = _mm256_sub_ps(K(1.f), _mm256_div_ps(K(2.f), _mm256_add_ps(v_exp(_mm256_add_ps(ax, ax)), K(1.f))));
  V z = _mm256_mul_ps(x, x);
  V p = K(6404582.f / 10854718875.f);
  p = _mm256_fmadd_ps(p, z, K(-929569.f / 638512875.f));
  p = _mm256_fmadd_ps(p, z, K(21844.f / 6081075.f));
  p = _mm256_fmadd_ps(p, z, K(-1382.f / 155925.f));
  p = _mm256_fmadd_ps(p, z, K(62.f / 2835.f));
  p = _mm256_fmadd_ps(p, z, K(-17.f / 315.f));
  p = _mm256_fmadd_ps(p, z, K(2.f / 15.f));
  p = _mm256_fmadd_ps(p, z, K(-1.f / 3.f));
  V small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  return _mm256_blendv_ps(_mm256_or_ps(big, sign), small, _mm256_cmp_ps(ax, K(0.55f), _CMP_LT_OQ));
}

/* lanes [0, n) of a block of 8 for the last, partial block of a row */
static inline __m256i lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define LD(p, m) (full ? _mm256_loadu_ps(p) : _mm256_maskload_ps((p), (m)))
#define ST(p, m, v) (full ? _mm256_storeu_ps((p), (v)) : _mm256_maskstore_ps((p), (m), (v)))

/* bias (4H, or NULL) is added to the gates as they are read; tc (or NULL) keeps tanh(cy) for the backward */
static void lstm_forward_rows(int64_t B, int64_t H, const float *gates, const float *bias, const float *cx, float *hy,
                              float *cy, float *ws, float *tcy) {
#pragma omp parallel for if (B * H > 16384)
  for (int64_t b = 0; b < B; b++) {
    const float *g = gates + b * 4 * H, *c0 = cx + b * H;
    float *w = ws + b * 4 * H, *h1 = hy + b * H, *c1 = cy + b * H, *t1 = tcy ? tcy + b * H : NULL;
    int64_t j = 0;
    /* two blocks of 8 cells at a time, stage by stage: one block's chain (the gates' exp, then c, then
     * tanh c) is longer than the out-of-order window reaches past, so a second independent chain next to it
     * in program order fills the latency (same operations per lane, same bits) */
    for (; j + 16 <= H; j += 16) {
      V pi[2], pf[2], pg[2], po[2], c[2], tc[2];
      for (int u = 0; u < 2; u++) {
        const float *gu = g + j + 8 * u;
        pi[u] = _mm256_loadu_ps(gu), pf[u] = _mm256_loadu_ps(gu + H);
        pg[u] = _mm256_loadu_ps(gu + 2 * H), po[u] = _mm256_loadu_ps(gu + 3 * H);
        if (bias) {
          const float *bu = bias + j + 8 * u;
          pi[u] = _mm256_add_ps(pi[u], _mm256_loadu_ps(bu));
          pf[u] = _mm256_add_ps(pf[u], _mm256_loadu_ps(bu + H));
          pg[u] = _mm256_add_ps(pg[u], _mm256_loadu_ps(bu + 2 * H));
          po[u] = _mm256_add_ps(po[u], _mm256_loadu_ps(bu + 3 * H));
        }
      }
      for (int u = 0; u < 2; u++) {
        pi[u] = v_sigmoid(pi[u]), pf[u] = v_sigmoid(pf[u]), pg[u] = v_tanh(pg[u]), po[u] = v_sigmoid(po[u]);
        c[u] = _mm256_fmadd_ps(pf[u], _mm256_loadu_ps(c0 + j + 8 * u), _mm256_mul_ps(pi[u], pg[u]));
      }
      for (int u = 0; u < 2; u++) tc[u] = v_tanh(c[u]);
      for (int u = 0; u < 2; u++) {
        int64_t k = j + 8 * u;
        _mm256_storeu_ps(c1 + k, c[u]);
        _mm256_storeu_ps(h1 + k, _mm256_mul_ps(po[u], tc[u]));
        if (t1) _mm256_storeu_ps(t1 + k, tc[u]);
        _mm256_storeu_ps(w + k, pi[u]);
        _mm256_storeu_ps(w + H + k, pf[u]);
        _mm256_storeu_ps(w + 2 * H + k, pg[u]);
        _mm256_storeu_ps(w + 3 * H + k, po[u]);
      }
    }
    for (; j < H; j += 8) {
      bool full = j + 8 <= H;
      __m256i m = lanes(H - j);
      /* all loads before the stores: ws may be gates itself */
      V pi = LD(g + j, m), pf = LD(g + H + j, m), pg = LD(g + 2 * H + j, m), po = LD(g + 3 * H + j, m);
      if (bias) {
        pi = _mm256_add_ps(pi, LD(bias + j, m));
        pf = _mm256_add_ps(pf, LD(bias + H + j, m));
        pg = _mm256_add_ps(pg, LD(bias + 2 * H + j, m));
        po = _mm256_add_ps(po, LD(bias + 3 * H + j, m));
      }
      V i = v_sigmoid(pi), f = v_sigmoid(pf), gg = v_tanh(pg), o = v_sigmoid(po);
      V c = _mm256_fmadd_ps(f, LD(c0 + j, m), _mm256_mul_ps(i, gg));
      V tc = v_tanh(c);
      ST(c1 + j, m, c);
      ST(h1 + j, m, _mm256_mul_ps(o, tc));
      if (t1) ST(t1 + j, m, tc);
      ST(w + j, m, i);
      ST(w + H + j, m, f);
      ST(w + 2 * H + j, m, gg);
      ST(w + 3 * H + j, m, o);
    }
  }
}

/* tcy: tanh(cy) as the forward kept it, or NULL to compute it again */
static void lstm_backward_rows(int64_t B, int64_t H, const float *ghy, const float *gcy, const float *cx,
                               const float *cy, const float *tcy, const float *ws, float *dgates, float *dcx) {
#pragma omp parallel for if (B * H > 16384)
  for (int64_t b = 0; b < B; b++) {
    const float *w = ws + b * 4 * H, *c0 = cx + b * H, *c1 = cy + b * H, *dh1 = ghy + b * H, *dc1 = gcy + b * H;
    const float *t1 = tcy ? tcy + b * H : NULL;
    float *d = dgates + b * 4 * H, *dc0 = dcx + b * H;
    for (int64_t j = 0; j < H; j += 8) {
      bool full = j + 8 <= H;
      __m256i m = lanes(H - j);
      V one = K(1.f);
      V i = LD(w + j, m), f = LD(w + H + j, m), gg = LD(w + 2 * H + j, m), o = LD(w + 3 * H + j, m);
      V tc = t1 ? LD(t1 + j, m) : v_tanh(LD(c1 + j, m)), dh = LD(dh1 + j, m);
      /* dcx may be gcy itself: dc is read before dc0 is stored */
      V dc = _mm256_fmadd_ps(_mm256_mul_ps(dh, o), _mm256_fnmadd_ps(tc, tc, one), LD(dc1 + j, m));
      ST(d + j, m, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(dc, gg), i), _mm256_sub_ps(one, i)));
      ST(d + H + j, m, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(dc, LD(c0 + j, m)), f), _mm256_sub_ps(one, f)));
      ST(d + 2 * H + j, m, _mm256_mul_ps(_mm256_mul_ps(dc, i), _mm256_fnmadd_ps(gg, gg, one)));
      ST(d + 3 * H + j, m, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(dh, tc), o), _mm256_sub_ps(one, o)));
      ST(dc0 + j, m, _mm256_mul_ps(dc, f));
    }
  }
}

#pragma GCC pop_options

int th_vec_lstm_cell_forward(int64_t B, int64_t H, const float *gates, const float *bias, const float *cx, float *hy,
                             float *cy, float *ws, float *tcy) {
  if (!use_vec()) return 0;
  lstm_forward_rows(B, H, gates, bias, cx, hy, cy, ws, tcy);
  return 1;
}

int th_vec_lstm_cell_backward(int64_t B, int64_t H, const float *ghy, const float *gcy, const float *cx,
                              const float *cy, const float *tcy, const float *ws, float *dgates, float *dcx) {
  if (!use_vec()) return 0;
  lstm_backward_rows(B, H, ghy, gcy, cx, cy, tcy, ws, dgates, dcx);
  return 1;
}

#else   /* not x86-64: the generic loops */
int th_vec_lstm_cell_forward(int64_t B, int64_t H, const float *gates, const float *bias, const float *cx, float *hy,
                             float *cy, float *ws, float *tcy) {
  (void)B; (void)H; (void)gates; (void)bias; (void)cx; (void)hy; (void)cy; (void)ws; (void)tcy;
  return 0;
}
int th_vec_lstm_cell_backward(int64_t B, int64_t H, const float *ghy, const float *gcy, const float *cx,
                              const float *cy, const float *tcy, const float *ws, float *dgates, float *dcx) {
  (void)B; (void)H; (void)ghy; (void)gcy; (void)cx; (void)cy; (void)tcy; (void)ws; (void)dgates; (void)dcx;
  return 0;
}
#endif
