/* Direct stride-1 float convolution with register-blocked kernels (no
 * im2col, no GEMM library call). The image is copied once into a zero-padded
 * buffer; an output tile is MR output channels x a few output-row segments,
 * held in vector accumulators over the whole reduction k = (c, kh, kw): per
 * k, one unaligned load of the padded image per segment at the tap's offset
 * and MR broadcast weights feed the FMAs. The padded rows a tile reads stay
 * in L1 while all the channel blocks pass over them. Weights are packed per
 * block of MR output channels, [k][MR] (zero rows past O). No padded output
 * column is stored.
 * Two kernels: AVX-512 (built in when the compiler targets it), 8 channels x
 * two 16-wide segments; AVX2+FMA (chosen at run time by the CPU), 4 channels
 * x three 8-wide segments, 12 of the 16 ymm registers as accumulators. */
#include "ATConv.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

/* the weights of grad_input = conv(grad_output, W2), W2[c][o] the flipped
 * W[o][c] of g, packed as pack_w packs a forward conv's */
static void pack_w_flipped(const float *w, float *ap, const ConvGeom *g, int mr) {
  int64_t T = g->KH * g->KW, K2 = g->O * T, nb = (g->C + mr - 1) / mr;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t o = 0; o < g->O; o++)
      for (int64_t t = 0; t < T; t++)
        for (int i = 0; i < mr; i++) {
          int64_t c = b * mr + i;
          ap[(b * K2 + o * T + t) * mr + i] = c < g->C ? w[(o * g->C + c) * T + (T - 1 - t)] : 0.0f;
        }
}

static int64_t chan_stride(const ConvGeom *g) {
  /* (KW-1)*DW spare: a tap's masked-off lanes of the last row may read past the plane */
  return (g->H + 2 * g->PH) * (g->W + 2 * g->PW) + 16 + (g->KW - 1) * g->DW;
}

/* floats, rounded to whole cache lines */
static int64_t lines(int64_t n) { return (n + 15) / 16 * 16; }
static int64_t xp_elems(const ConvGeom *g) { return lines(g->C * chan_stride(g)); }
static int64_t wpack_elems(const ConvGeom *g, int mr) { return lines((g->O + mr - 1) / mr * mr * g->C * g->KH * g->KW); }

/* the image zero-padded into xp (planes of chan_stride), and each tap's
 * offset in a padded plane */
static void pad_image(const float *x, float *xp, const ConvGeom *g, int64_t *tofs) {
  int64_t Wp = g->W + 2 * g->PW;
  for (int64_t kh = 0; kh < g->KH; kh++)
    for (int64_t kw = 0; kw < g->KW; kw++) tofs[kh * g->KW + kw] = kh * g->DH * Wp + kw * g->DW;
  at_conv_pad_float(x, xp, g, chan_stride(g));
}

static void pack_w(const float *w, float *ap, const ConvGeom *g, int mr) {
  int64_t K = g->C * g->KH * g->KW, nb = (g->O + mr - 1) / mr;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k = 0; k < K; k++)
      for (int i = 0; i < mr; i++) {
        int64_t o = b * mr + i;
        ap[(b * K + k) * mr + i] = o < g->O ? w[o * K + k] : 0.0f;
      }
}


#ifdef __AVX512F__
#define MR 8    /* output channels per tile */

static bool ok_avx512(const ConvGeom *g) {
  /* output rows must fill at least 3/4 of the lanes they take: 16-lane
   * segments, or for rows of 6..8 one 8-lane half of a vector each */
  int64_t lanes = g->OW <= 8 ? 8 : (g->OW + 15) / 16 * 16;
  /* and a tile's 8 output channels should be at least half real */
  return g->SH == 1 && g->SW == 1 && g->G == 1 && 4 * g->OW >= 3 * lanes && g->C * g->KH * g->KW >= 16 && g->O >= 4;
}

/* two masked loads: lanes 0-7 from lo, lanes 8-15 from hi[0..7] */
static inline __m512 load2(__mmask16 ml, const float *lo, __mmask16 mh, const float *hi) {
  return _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(ml, lo), mh, hi - 8);
}

/* One tile: MR output channels (nrows valid) x two vectors of outputs.
 * Wide rows (half false): vector q is the 16-wide segment at b[q] / y[q]
 * with lane mask m[q]. Rows of at most 8 (half true): vector 0 holds rows
 * b[0] (lanes 0-7, mask m[0]) and b[1] (lanes 8-15, mask m[1] << 8),
 * vector 1 rows b[2], b[3]. half is constant at each call, so each use
 * compiles to its own loop. */
static inline __attribute__((always_inline)) void tile(bool half, const float *ap, const float *const *b,
                                                       const __mmask16 *m, int64_t C, int64_t CS, const int64_t *tofs,
                                                       int64_t T, float *const *y, int64_t ys, int nrows) {
  __m512 a00 = _mm512_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00,
         a40 = a00, a41 = a00, a50 = a00, a51 = a00, a60 = a00, a61 = a00, a70 = a00, a71 = a00;
  __mmask16 h1 = (__mmask16)(m[1] << 8), h3 = (__mmask16)(m[3] << 8);
  const float *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
  for (int64_t c = 0; c < C; c++, b0 += CS, b1 += CS, b2 += CS, b3 += CS)
    for (int64_t t = 0; t < T; t++, ap += MR) {
      int64_t o = tofs[t];
      __m512 v0 = half ? load2(m[0], b0 + o, h1, b1 + o) : _mm512_maskz_loadu_ps(m[0], b0 + o);
      __m512 v1 = half ? load2(m[2], b2 + o, h3, b3 + o) : _mm512_maskz_loadu_ps(m[1], b1 + o), a;
#define STEP(i, x0, x1) a = _mm512_set1_ps(ap[i]); x0 = _mm512_fmadd_ps(a, v0, x0); x1 = _mm512_fmadd_ps(a, v1, x1);
      STEP(0, a00, a01) STEP(1, a10, a11) STEP(2, a20, a21) STEP(3, a30, a31)
      STEP(4, a40, a41) STEP(5, a50, a51) STEP(6, a60, a61) STEP(7, a70, a71)
#undef STEP
    }
  __m512 r0[MR] = { a00, a10, a20, a30, a40, a50, a60, a70 }, r1[MR] = { a01, a11, a21, a31, a41, a51, a61, a71 };
  for (int i = 0; i < nrows; i++)
    if (half) {
      _mm512_mask_storeu_ps(y[0] + i * ys, m[0], r0[i]);
      _mm512_mask_storeu_ps(y[1] + i * ys - 8, h1, r0[i]);
      _mm512_mask_storeu_ps(y[2] + i * ys, m[2], r1[i]);
      _mm512_mask_storeu_ps(y[3] + i * ys - 8, h3, r1[i]);
    } else {
      _mm512_mask_storeu_ps(y[0] + i * ys, m[0], r0[i]);
      if (m[1]) _mm512_mask_storeu_ps(y[1] + i * ys, m[1], r1[i]);
    }
}

static void fwd_image_avx512(const float *x, const float *ap, float *out, float *xp, const ConvGeom *g) {
  int64_t CS = chan_stride(g), Wp = g->W + 2 * g->PW, T = g->KH * g->KW, K = g->C * T, L = g->OH * g->OW;
  int64_t tofs[T];
  pad_image(x, xp, g, tofs);
  int64_t nb = (g->O + MR - 1) / MR;
  if (g->OW <= 8) {   /* four output rows per tile, two per vector */
    __mmask16 full = (__mmask16)((1u << g->OW) - 1);
    for (int64_t r0 = 0; r0 < g->OH; r0 += 4) {
      const float *b[4];
      int64_t yo[4];
      __mmask16 m[4];
      for (int q = 0; q < 4; q++) {
        bool in = r0 + q < g->OH;
        int64_t r = in ? r0 + q : r0;   /* rows past the end: masked off, pointers kept valid */
        b[q] = xp + r * Wp;
        yo[q] = r * g->OW;
        m[q] = in ? full : 0;
      }
      for (int64_t bl = 0; bl < nb; bl++) {
        int nrows = g->O - bl * MR < MR ? (int)(g->O - bl * MR) : MR;
        float *y0 = out + bl * MR * L, *y[4] = { y0 + yo[0], y0 + yo[1], y0 + yo[2], y0 + yo[3] };
        tile(true, ap + bl * K * MR, b, m, g->C, CS, tofs, T, y, L, nrows);
      }
    }
    return;
  }
  int64_t per_row = (g->OW + 15) / 16, nseg = g->OH * per_row;
  for (int64_t s = 0; s < nseg; s += 2) {
    int64_t oh0 = s / per_row, ow0 = s % per_row * 16, oh1 = (s + 1) / per_row, ow1 = (s + 1) % per_row * 16;
    int64_t n0 = g->OW - ow0 < 16 ? g->OW - ow0 : 16, n1 = s + 1 < nseg ? (g->OW - ow1 < 16 ? g->OW - ow1 : 16) : 0;
    __mmask16 m0 = (__mmask16)((1u << n0) - 1), m1 = (__mmask16)((1u << n1) - 1);
    const float *b[4] = { xp + oh0 * Wp + ow0, xp + (n1 ? oh1 * Wp + ow1 : 0), xp, xp };
    __mmask16 m[4] = { m0, m1, 0, 0 };
    for (int64_t bl = 0; bl < nb; bl++) {
      int nrows = g->O - bl * MR < MR ? (int)(g->O - bl * MR) : MR;
      float *y0 = out + bl * MR * L, *y[4] = { y0 + oh0 * g->OW + ow0, y0 + oh1 * g->OW + ow1, y0, y0 };
      tile(false, ap + bl * K * MR, b, m, g->C, CS, tofs, T, y, L, nrows);
    }
  }
}

#undef MR
#endif

#ifdef HAVE_X86
#define MR2 4   /* output channels per AVX2 tile */
#define NV 3    /* 8-wide output segments per AVX2 tile */

/* every tile streams the packed weights of its channel chunk for all output
 * channels: past about half an L2 of weights they come from further out on
 * every tile and the GEMM paths win (3x3, 1 thread, CPU time vs torch's:
 * 64->64 channels 1.05x direct vs 1.2x GEMM, 96->96 equal, 128->128 1.19x vs
 * 1.1x, 512->512 at 7x7 1.36x vs 0.95x) */
#define AVX2_MAX_WEIGHTS 65536

static bool ok_avx2(const ConvGeom *g) {
  /* output rows must fill at least 5/8 of the 8-lane segments they take: rows of 10 (LeNet's conv2, 6->16
   * 5x5 on 14x14, batch 64, 1 thread: 1.92x torch by im2col + GEMM, 0.97x here), 5, 11 or 17 outputs run
   * faster here than as a skinny GEMM over columns that outgrow the L2 */
  int64_t lanes = (g->OW + 7) / 8 * 8;
  return g->SH == 1 && g->SW == 1 && g->G == 1 && 8 * g->OW >= 5 * lanes && g->C * g->KH * g->KW >= 16 && g->O >= 4 &&
         g->O * g->C * g->KH * g->KW <= AVX2_MAX_WEIGHTS;
}

/* One tile: MR2 output channels (nrows valid) x NV segments; segment q
 * reads the padded image from b[q] and writes n[q] (0..8) outputs at y[q].
 * The loads are full 8-lane loads: lanes past a row's end read the next
 * padded row or a plane's spare tail (chan_stride), and are not stored. */
__attribute__((target("avx2,fma"))) static void tile_avx2(const float *ap, const float *const *b, const int *n,
                                                          int64_t C, int64_t CS, const int64_t *tofs, int64_t T,
                                                          float *const *y, int64_t ys, int nrows, bool accum) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i mk[NV];
  for (int q = 0; q < NV; q++) mk[q] = _mm256_cmpgt_epi32(_mm256_set1_epi32(n[q]), lane);
  __m256 r[MR2][NV];
  for (int i = 0; i < MR2; i++)
    for (int q = 0; q < NV; q++)
      r[i][q] = accum && i < nrows ? _mm256_maskload_ps(y[q] + i * ys, mk[q]) : _mm256_setzero_ps();
  __m256 a00 = r[0][0], a01 = r[0][1], a02 = r[0][2], a10 = r[1][0], a11 = r[1][1], a12 = r[1][2], a20 = r[2][0],
         a21 = r[2][1], a22 = r[2][2], a30 = r[3][0], a31 = r[3][1], a32 = r[3][2];
  const float *b0 = b[0], *b1 = b[1], *b2 = b[2];
  for (int64_t c = 0; c < C; c++, b0 += CS, b1 += CS, b2 += CS)
    for (int64_t t = 0; t < T; t++, ap += MR2) {
      int64_t o = tofs[t];
      __m256 v0 = _mm256_loadu_ps(b0 + o), v1 = _mm256_loadu_ps(b1 + o), v2 = _mm256_loadu_ps(b2 + o), a;
#define STEP(i, x0, x1, x2)            \
  a = _mm256_broadcast_ss(ap + i);     \
  x0 = _mm256_fmadd_ps(a, v0, x0);     \
  x1 = _mm256_fmadd_ps(a, v1, x1);     \
  x2 = _mm256_fmadd_ps(a, v2, x2);
      STEP(0, a00, a01, a02) STEP(1, a10, a11, a12) STEP(2, a20, a21, a22) STEP(3, a30, a31, a32)
#undef STEP
    }
  __m256 o[MR2][NV] = { { a00, a01, a02 }, { a10, a11, a12 }, { a20, a21, a22 }, { a30, a31, a32 } };
  for (int q = 0; q < NV; q++) {
    if (n[q] == 8)
      for (int i = 0; i < nrows; i++) _mm256_storeu_ps(y[q] + i * ys, o[i][q]);
    else if (n[q] > 0)
      for (int i = 0; i < nrows; i++) _mm256_maskstore_ps(y[q] + i * ys, mk[q], o[i][q]);
  }
}

static void fwd_image_avx2(const float *x, const float *ap, float *out, float *xp, const ConvGeom *g) {
  int64_t CS = chan_stride(g), Wp = g->W + 2 * g->PW, T = g->KH * g->KW, K = g->C * T, L = g->OH * g->OW;
  int64_t tofs[T];
  pad_image(x, xp, g, tofs);
  int64_t nb = (g->O + MR2 - 1) / MR2, per_row = (g->OW + 7) / 8, nseg = g->OH * per_row;
  /* The reduction runs over chunks of channels, the output accumulated in
   * memory between them: the padded rows a tile reads, for the whole
   * chunk, then fit in L1 (about 12 KiB) while all channel blocks pass. */
  int64_t span = (NV + per_row - 1) / per_row + 1, rows = span + (g->KH - 1) * g->DH;
  int64_t cb = 12288 / (rows * Wp * (int64_t)sizeof(float));
  if (cb < 1) cb = 1;
  for (int64_t c0 = 0; c0 < g->C; c0 += cb) {
    int64_t nc = g->C - c0 < cb ? g->C - c0 : cb;
  for (int64_t s = 0; s < nseg; s += NV) {
    const float *b[NV];
    int64_t yo[NV];
    int n[NV];
    for (int q = 0; q < NV; q++) {
      int64_t sq = s + q, oh = sq / per_row, ow = sq % per_row * 8;
      bool in = sq < nseg;   /* segments past the end: nothing stored, pointers kept valid */
      b[q] = (in ? xp + oh * Wp + ow : xp) + c0 * CS;
      yo[q] = in ? oh * g->OW + ow : 0;
      n[q] = !in ? 0 : g->OW - ow < 8 ? (int)(g->OW - ow) : 8;
    }
    for (int64_t bl = 0; bl < nb; bl++) {
      int nrows = g->O - bl * MR2 < MR2 ? (int)(g->O - bl * MR2) : MR2;
      float *y0 = out + bl * MR2 * L, *y[NV] = { y0 + yo[0], y0 + yo[1], y0 + yo[2] };
      tile_avx2(ap + (bl * K + c0 * T) * MR2, b, n, nc, CS, tofs, T, y, L, nrows, c0 > 0);
    }
  }
  }
}
#endif

typedef enum { KERNEL_NONE, KERNEL_AVX2, KERNEL_AVX512 } Kernel;

/* CTHTORCH_CONV_DIRECT=off turns the direct kernels off (the GEMM paths
 * run instead), to compare the two */
static Kernel kernel(void) {
  static int chosen = -1;   /* a benign race: every thread picks the same */
  if (chosen < 0) {
    const char *force = getenv("CTHTORCH_CONV_DIRECT");
    Kernel k = KERNEL_NONE;
    if (!(force && strcmp(force, "off") == 0)) {
#if defined(__AVX512F__)
      k = KERNEL_AVX512;
#elif defined(HAVE_X86)
      __builtin_cpu_init();
      if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) k = KERNEL_AVX2;
#endif
    }
    chosen = (int)k;
  }
  return (Kernel)chosen;
}

bool at_conv_direct_ok(const ConvGeom *g) {
  switch (kernel()) {
#ifdef __AVX512F__
    case KERNEL_AVX512: return ok_avx512(g);
#endif
#ifdef HAVE_X86
    case KERNEL_AVX2: return ok_avx2(g);
#endif
    default: return false;
  }
}

int at_conv_direct_run(const float *x, const float *w, float *out, const ConvGeom *g, const ConvGeom *wg, int nt) {
  Kernel k = kernel();
  void (*image)(const float *, const float *, float *, float *, const ConvGeom *) = NULL;
  int mr = 0;
#ifdef __AVX512F__
  if (k == KERNEL_AVX512) { image = fwd_image_avx512; mr = 8; }
#endif
#ifdef HAVE_X86
  if (k == KERNEL_AVX2) { image = fwd_image_avx2; mr = MR2; }
#endif
  if (!image) {
    THError_set(TH_ERR_RUNTIME, "the direct convolution kernel needs AVX2 and FMA or AVX-512");
    return -1;
  }
  int64_t wpn = wpack_elems(g, mr), xpn = xp_elems(g);
  float *buf = NULL;
  if (posix_memalign((void **)&buf, 64, (size_t)(wpn + nt * xpn) * sizeof(float)) != 0) {
    THError_set(TH_ERR_MEMORY, "out of memory");
    return -1;
  }
  if (wg) pack_w_flipped(w, buf, wg, mr);
  else pack_w(w, buf, g, mr);
  int64_t xs = g->C * g->H * g->W, os = g->O * g->OH * g->OW;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int64_t n = 0; n < g->N; n++) image(x + n * xs, buf, out + n * os, buf + wpn + omp_get_thread_num() * xpn, g);
  free(buf);
  return 0;
}

bool at_conv_direct_grad_input_geom(const ConvGeom *g, ConvGeom *g2) {
  /* grad_input of a stride-1 conv is a stride-1 conv of grad_output with
   * the flipped, transposed weights and padding (K-1)*D - P */
  if (g->SH != 1 || g->SW != 1 || g->G != 1) return false;
  *g2 = *g;
  g2->C = g->O; g2->O = g->C; g2->H = g->OH; g2->W = g->OW;
  g2->PH = (g->KH - 1) * g->DH - g->PH; g2->PW = (g->KW - 1) * g->DW - g->PW;
  g2->OH = g->H; g2->OW = g->W;
  return g2->PH >= 0 && g2->PW >= 0 && at_conv_direct_ok(g2);
}
