/* conv2d as one GEMM per chunk of images: the columns of a chunk of nb images
 * sit side by side, col (K x nb*L), so out (O x nb*L) = W (O x K) @ col is a
 * single large GEMM (per-image GEMMs are too thin for deep layers, where L is
 * 4x4 and K is thousands). K = C/groups*kh*kw, L = OH*OW.
 * Backward: grad_weight = gy (O x nb*L) @ col^T, grad_input = col2im(W^T @ gy);
 * each is computed only when asked for (output_mask). Float32 uses sgemm,
 * float64 dgemm; other dtypes compute in float32.
 * With a batch to share, each thread takes a contiguous share of the images
 * and runs im2col, GEMM and col2im on them alone (image_threads); otherwise
 * one thread drives and the GEMMs split across threads inside. */
#include "ATConv.h"
#include "ATArgChecks.h"
#include "ATBlas.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>


static int geom(const THTensor *x, const THTensor *w, const ATIntList *st, const ATIntList *pd, const ATIntList *dl,
                int64_t groups, ConvGeom *g) {
  char b1[256], b2[256];
  if (x->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: %s",
                THTensor_sizeStr(x->ndim, x->sizes, b1, 256));
    return -1;
  }
  if (w->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "weight should have at least three dimensions");
    return -1;
  }
  if (groups < 1) { THError_set(TH_ERR_RUNTIME, "non-positive groups is not supported"); return -1; }
  g->N = x->sizes[0]; g->C = x->sizes[1]; g->H = x->sizes[2]; g->W = x->sizes[3];
  g->O = w->sizes[0]; g->KH = w->sizes[2]; g->KW = w->sizes[3]; g->G = groups;
  g->SH = st->v[0]; g->SW = st->n > 1 ? st->v[1] : st->v[0];
  g->PH = pd->v[0]; g->PW = pd->n > 1 ? pd->v[1] : pd->v[0];
  g->DH = dl->v[0]; g->DW = dl->n > 1 ? dl->v[1] : dl->v[0];
  if (w->sizes[1] * groups != g->C) {
    THError_set(TH_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but "
                "got %lld channels instead", (long long)groups, THTensor_sizeStr(w->ndim, w->sizes, b1, 256),
                THTensor_sizeStr(x->ndim, x->sizes, b2, 256), (long long)(w->sizes[1] * groups), (long long)g->C);
    return -1;
  }
  if (g->O % groups) {
    THError_set(TH_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got "
                "weight of size %s instead", (long long)groups, (long long)groups,
                THTensor_sizeStr(w->ndim, w->sizes, b1, 256));
    return -1;
  }
  if (g->SH <= 0 || g->SW <= 0) { THError_set(TH_ERR_RUNTIME, "non-positive stride is not supported"); return -1; }
  if (g->PH < 0 || g->PW < 0) { THError_set(TH_ERR_RUNTIME, "negative padding is not supported"); return -1; }
  if (g->DH <= 0 || g->DW <= 0) { THError_set(TH_ERR_RUNTIME, "dilation should be greater than zero"); return -1; }
  /* the size arithmetic below must not overflow: PyTorch's bound on padding, and one on the dilated kernel */
  const int64_t pads[2] = { g->PH, g->PW };
  for (int i = 0; i < 2; i++)
    if (pads[i] > INT64_MAX / 2) {
      THError_set(TH_ERR_RUNTIME, "Given padding=%lld at dimension %d , expected padding to be at most %lld",
                  (long long)pads[i], i, (long long)(INT64_MAX / 2));
      return -1;
    }
  int64_t span;
  if (th_mul_overflow(g->DH, g->KH, &span) || th_mul_overflow(g->DW, g->KW, &span) ||
      th_add_overflow(g->H, 2 * g->PH, &span) || th_add_overflow(g->W, 2 * g->PW, &span)) {
    THError_set(TH_ERR_RUNTIME, "conv2d: dilation %lld x %lld with kernel %lld x %lld and padding %lld x %lld "
                "overflow 64-bit sizes", (long long)g->DH, (long long)g->DW, (long long)g->KH, (long long)g->KW,
                (long long)g->PH, (long long)g->PW);
    return -1;
  }
  g->OH = (g->H + 2 * g->PH - g->DH * (g->KH - 1) - 1) / g->SH + 1;
  g->OW = (g->W + 2 * g->PW - g->DW * (g->KW - 1) - 1) / g->SW + 1;
  if (g->H + 2 * g->PH < g->DH * (g->KH - 1) + 1 || g->W + 2 * g->PW < g->DW * (g->KW - 1) + 1) {
    THError_set(TH_ERR_RUNTIME, "Calculated padded input size per channel: (%lld x %lld). Kernel size: (%lld x %lld). "
                "Kernel size can't be greater than actual input size", (long long)(g->H + 2 * g->PH),
                (long long)(g->W + 2 * g->PW), (long long)(g->DH * (g->KH - 1) + 1), (long long)(g->DW * (g->KW - 1) + 1));
    return -1;
  }
  return 0;
}

static bool is_pointwise(const ConvGeom *g) {
  return g->KH == 1 && g->KW == 1 && g->SH == 1 && g->SW == 1 && g->PH == 0 && g->PW == 0;
}

/* The first input column and the valid output columns of kernel column kw. */
static void valid_cols(const ConvGeom *g, int64_t kw, int64_t *iw0, int64_t *lo, int64_t *hi) {
  *iw0 = kw * g->DW - g->PW;
  at_window_cols(*iw0, g->W, g->SW, g->OW, lo, hi);
}

/* im2col of one image into rows of a wider column matrix: row r of the image's
 * columns lands at col + r*ld (ld = nb*L when images sit side by side).
 * Loops run over (c, kh, kw) with the per-kw bounds precomputed: in deep
 * layers (2x2 .. 8x8 images) a row is a few elements, and integer divisions
 * and libc calls per row cost more than the GEMM that follows. */
#define DEFINE_IM2COL(T)                                                                         \
  /* stride-1 columns with OW == W ('same' width): the valid rows of a tap's \
   * column block are one contiguous run of the image, so it is one memcpy, \
   * then the columns the window hangs off are zeroed. For 2x2..16x16 images \
   * this is several times faster than row-by-row copies of a few elements. */ \
  static void im2col_block_##T(const T *src, T *dst, int64_t ld, const ConvGeom *g,             \
                               const int64_t *los, const int64_t *his) {                        \
    int64_t OW = g->OW, L = g->OH * OW, plane = g->H * g->W;                                     \
    for (int64_t kh = 0; kh < g->KH; kh++) {                                                     \
      /* output rows r0..r1 read input rows ih0 + oh, which lie inside */                        \
      int64_t ih0 = kh * g->DH - g->PH;                                                          \
      int64_t r0 = ih0 < 0 ? -ih0 : 0, r1 = g->H - ih0 < g->OH ? g->H - ih0 : g->OH;             \
      if (r0 > g->OH) r0 = g->OH;                                                                \
      if (r1 < r0) r1 = r0;                                                                      \
      for (int64_t kw = 0; kw < g->KW; kw++, dst += ld) {                                        \
        int64_t lo = los[kw], hi = his[kw], off = ih0 * g->W + kw * g->DW - g->PW;               \
        for (int64_t i = 0; i < r0 * OW; i++) dst[i] = 0;                                        \
        for (int64_t i = r1 * OW; i < L; i++) dst[i] = 0;                                        \
        if (r0 == r1) continue;                                                                  \
        /* element i of rows r0..r1 is src[i + off], clamped to the plane */                     \
        int64_t a = r0 * OW, b = r1 * OW;                                                        \
        if (a + off < 0) a = -off;                                                               \
        if (b + off > plane) b = plane - off;                                                    \
        for (int64_t i = a; i < b; i++) dst[i] = src[i + off]; /* inline: runs are short */    \
        for (int64_t oh = r0; oh < r1; oh++) {                                                   \
          T *d = dst + oh * OW;                                                                  \
          for (int64_t ow = 0; ow < lo; ow++) d[ow] = 0;                                         \
          for (int64_t ow = hi; ow < OW; ow++) d[ow] = 0;                                        \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  static void im2col_plane_##T(const T *src, T *dst, int64_t ld, const ConvGeom *g,             \
                               const int64_t *iw0s, const int64_t *los, const int64_t *his) {   \
    bool narrow = g->OW < 32;                                                                    \
    if (g->SH == 1 && g->SW == 1 && g->OW == g->W) {                                             \
      im2col_block_##T(src, dst, ld, g, los, his);                                         \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t kh = 0; kh < g->KH; kh++)                                                       \
      for (int64_t kw = 0; kw < g->KW; kw++, dst += ld) {                                        \
        int64_t iw0 = iw0s[kw], lo = los[kw], hi = his[kw];                                      \
        for (int64_t oh = 0; oh < g->OH; oh++) {                                                 \
          int64_t ih = oh * g->SH - g->PH + kh * g->DH;                                          \
          T *d = dst + oh * g->OW;                                                               \
          if (ih < 0 || ih >= g->H) {                                                            \
            if (narrow) for (int64_t ow = 0; ow < g->OW; ow++) d[ow] = 0;                        \
            else memset(d, 0, g->OW * sizeof(T));                                                \
            continue;                                                                            \
          }                                                                                      \
          const T *s = src + ih * g->W + iw0;                                                    \
          for (int64_t ow = 0; ow < lo; ow++) d[ow] = 0;                                         \
          if (g->SW == 1 && !narrow) memcpy(d + lo, s + lo, (hi - lo) * sizeof(T));             \
          else for (int64_t ow = lo; ow < hi; ow++) d[ow] = s[ow * g->SW];                       \
          for (int64_t ow = hi; ow < g->OW; ow++) d[ow] = 0;                                     \
        }                                                                                        \
      }                                                                                          \
  }                                                                                              \
  /* nb images (image stride xs elements) -> col (K x nb*L) */                                   \
  static void im2col_##T(const T *x, int64_t xs, int64_t nb, T *col, const ConvGeom *g, int64_t C) { \
    int64_t L = g->OH * g->OW, ld = nb * L, taps = g->KH * g->KW;                                \
    int64_t iw0s[g->KW], los[g->KW], his[g->KW];                                                 \
    for (int64_t kw = 0; kw < g->KW; kw++) valid_cols(g, kw, &iw0s[kw], &los[kw], &his[kw]);     \
    _Pragma("omp parallel for collapse(2) if (nb * C * taps * L > 32768)")                       \
    for (int64_t c = 0; c < C; c++)                                                              \
      for (int64_t j = 0; j < nb; j++)                                                           \
        im2col_plane_##T(x + j * xs + c * g->H * g->W, col + c * taps * ld + j * L, ld, g, iw0s, los, his); \
  }                                                                                              \
  /* sums the columns of nb images into their images; overlapping windows      \
   * accumulate, so each thread owns whole channel planes and zeroes each one   \
   * first (in cache, instead of a memset pass over the whole grad_input) */    \
  /* one channel plane dst (zeroed first) = the sum of its taps' columns; tap \
   * t's row is at col + t*ld */                                                                \
  static void col2im_plane_##T(const T *col, int64_t ld, T *dst, const ConvGeom *g,            \
                               const int64_t *iw0s, const int64_t *los, const int64_t *his) {   \
    memset(dst, 0, g->H * g->W * sizeof(T));                                                     \
    for (int64_t kh = 0; kh < g->KH; kh++)                                                       \
      for (int64_t kw = 0; kw < g->KW; kw++) {                                                   \
        const T *s = col + (kh * g->KW + kw) * ld;                                               \
        int64_t iw0 = iw0s[kw], lo = los[kw], hi = his[kw];                                      \
        for (int64_t oh = 0; oh < g->OH; oh++) {                                                 \
          int64_t ih = oh * g->SH - g->PH + kh * g->DH;                                          \
          if (ih < 0 || ih >= g->H) continue;                                                    \
          T *d = dst + ih * g->W + iw0;                                                          \
          const T *sr = s + oh * g->OW;                                                          \
          if (g->SW == 1) for (int64_t ow = lo; ow < hi; ow++) d[ow] += sr[ow];                  \
          else for (int64_t ow = lo; ow < hi; ow++) d[ow * g->SW] += sr[ow];                      \
        }                                                                                        \
      }                                                                                          \
  }                                                                                              \
  static void col2im_##T(const T *col, T *x, int64_t xs, int64_t nb, const ConvGeom *g, int64_t C) { \
    int64_t L = g->OH * g->OW, ld = nb * L, taps = g->KH * g->KW;                                \
    int64_t iw0s[g->KW], los[g->KW], his[g->KW];                                                 \
    for (int64_t kw = 0; kw < g->KW; kw++) valid_cols(g, kw, &iw0s[kw], &los[kw], &his[kw]);     \
    _Pragma("omp parallel for collapse(2) if (nb * C * g->H * g->W > 32768)")                    \
    for (int64_t j = 0; j < nb; j++)                                                             \
      for (int64_t c = 0; c < C; c++)                                                            \
        col2im_plane_##T(col + c * taps * ld + j * L, ld, x + j * xs + c * g->H * g->W, g, iw0s, los, his); \
  }                                                                                              \
  /* F.unfold / F.fold: g->N images, columns image-major (N, C*KH*KW, L) */                     \
  static void im2col_images_##T(const T *x, T *col, const ConvGeom *g) {                         \
    int64_t L = g->OH * g->OW, taps = g->KH * g->KW, plane = g->H * g->W;                        \
    int64_t iw0s[g->KW], los[g->KW], his[g->KW];                                                 \
    for (int64_t kw = 0; kw < g->KW; kw++) valid_cols(g, kw, &iw0s[kw], &los[kw], &his[kw]);     \
    _Pragma("omp parallel for collapse(2) if (g->N * g->C * taps * L > 32768)")                  \
    for (int64_t j = 0; j < g->N; j++)                                                           \
      for (int64_t c = 0; c < g->C; c++)                                                         \
        im2col_plane_##T(x + (j * g->C + c) * plane, col + (j * g->C + c) * taps * L, L, g, iw0s, los, his); \
  }                                                                                              \
  static void col2im_images_##T(const T *col, T *x, const ConvGeom *g) {                         \
    int64_t L = g->OH * g->OW, taps = g->KH * g->KW, plane = g->H * g->W;                        \
    int64_t iw0s[g->KW], los[g->KW], his[g->KW];                                                 \
    for (int64_t kw = 0; kw < g->KW; kw++) valid_cols(g, kw, &iw0s[kw], &los[kw], &his[kw]);     \
    _Pragma("omp parallel for collapse(2) if (g->N * g->C * plane > 32768)")                     \
    for (int64_t j = 0; j < g->N; j++)                                                           \
      for (int64_t c = 0; c < g->C; c++)                                                         \
        col2im_plane_##T(col + (j * g->C + c) * taps * L, L, x + (j * g->C + c) * plane, g, iw0s, los, his); \
  }
DEFINE_IM2COL(float)
DEFINE_IM2COL(double)

void at_im2col_images(bool dbl, const void *x, void *col, const ConvGeom *g) {
  if (dbl) im2col_images_double(x, col, g);
  else im2col_images_float(x, col, g);
}

void at_col2im_images(bool dbl, const void *col, void *x, const ConvGeom *g) {
  if (dbl) col2im_images_double(col, x, g);
  else col2im_images_float(col, x, g);
}

static void im2col(bool dbl, const char *x, int64_t xs, int64_t nb, void *col, const ConvGeom *g, int64_t C) {
  if (dbl) im2col_double((const double *)x, xs, nb, col, g, C);
  else im2col_float((const float *)x, xs, nb, col, g, C);
}

static void gemm(bool dbl, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
  at_gemm(dbl, ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/* Moves blocks between image-major (n, rows, L; image stride `is`) and
 * side-by-side (rows, nb*L) layouts; to_wide picks the direction. */
static void relayout(bool to_wide, char *wide, char *img, int64_t is, int64_t nb, int64_t rows, int64_t L, int es) {
#pragma omp parallel for collapse(2) if (nb * rows * L > 65536)
  for (int64_t j = 0; j < nb; j++)
    for (int64_t r = 0; r < rows; r++) {
      char *w = wide + (r * nb * L + j * L) * es, *m = img + (j * is + r * L) * es;
      if (to_wide) memcpy(w, m, L * es); else memcpy(m, w, L * es);
    }
}

/* images per chunk: the column buffer stays near 4 MB (measured best on
 * these machines: it stays in cache between im2col and the GEMM) but never
 * below one image */
static int64_t chunk_images(int64_t N, int64_t K, int64_t L, int es) {
  int64_t per = K * L * es, nb = per > 0 ? (4 << 20) / per : N;
  if (nb < 1) nb = 1;
  if (nb >= N) return N;
  int64_t chunks = (N + nb - 1) / nb;
  return (N + chunks - 1) / chunks;   /* even chunks: 8 + 8, not 14 + a thin 2 */
}

/* Threads for the image-parallel paths (1 = one thread drives, GEMMs split
 * across threads inside). Each thread takes a contiguous share of the
 * images and runs im2col, GEMM and col2im on them with buffers of its own,
 * so no cache line a thread writes was last read by the other: when the two
 * cores sit on different L3 slices (it varies from run to run on these
 * VMs), shared column buffers cost a cross-die invalidation per line and
 * deep-layer convs ran 40% slower. The split matches elementwise ops' (first
 * half of the images to thread 0), so a thread mostly reads what it wrote. */
static int image_threads(const ConvGeom *g) {
  int nt = omp_get_max_threads();
  if (nt <= 1 || g->N < nt || (g->N % nt && g->N < 4 * nt)) return 1;
  /* more weights than columns (deep layers at 2x2): each thread would pack
   * all the weights for a thin GEMM; sharing the columns costs less */
  if (g->O / g->G > g->N * g->OH * g->OW) return 1;
  return nt;
}

/* images per GEMM when each thread runs its own: enough side by side for a
 * GEMM about GEMM_COLS wide (a thin one repacks the weights per call, which
 * dominates deep layers), no more (the columns then stay in L2) and within
 * chunk_images' cap */
#define GEMM_COLS 256
static int64_t thread_chunk(int64_t per, int64_t K, int64_t L, int es) {
  int64_t nb = L > 0 ? (GEMM_COLS + L - 1) / L : per, cap = chunk_images(per, K, L, es);
  if (nb > cap) nb = cap;
  return nb < 1 ? 1 : nb;
}

/* elements per thread slot, rounded so every slot starts on a cache line */
static int64_t slot_elems(int64_t n, int es) { return (n * es + 63) / 64 * 64 / es; }

THTensor *at_contiguous_as(const THTensor *t, THDtype ct) {
  THTensor *c = at_to_dtype(t, ct, false);
  if (!c) return NULL;
  THTensor *r = at_contiguous(c);
  THTensor_free(c);
  return r;
}

static THDtype compute_type(const THTensor *x, const THTensor *w) {
  return (x->dtype == TH_Double || w->dtype == TH_Double) ? TH_Double : TH_Float;
}

/* 3-d input: run as a batch of one */
static THTensor *batched(const THTensor *x) {
  if (x->ndim != 3) return THTensor_retain((THTensor *)x);
  return at_unsqueeze(x, 0);
}

static void *alloc_or_fail(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n + 64) != 0) p = NULL;
  if (!p) THError_set(TH_ERR_MEMORY, "out of memory");
  return p;
}

#define ROWBLOCK_BYTES (1 << 20)

/* Forward of images [n0, n1) in chunks of up to nbmax images, with columns
 * col (K x nbmax*L) and, when nbmax > 1, ybuf (Og x nbmax*L). */
static void fwd_images(bool dbl, const ConvGeom *g, const char *xd, const char *wd, char *od, int64_t n0, int64_t n1,
                       int64_t nbmax, void *col, void *ybuf) {
  int es = dbl ? 8 : 4;
  bool pw = is_pointwise(g);
  int64_t Cg = g->C / g->G, Og = g->O / g->G, K = Cg * g->KH * g->KW, L = g->OH * g->OW;
  int64_t xs = g->C * g->H * g->W, os = g->O * L;
  for (; n0 < n1; n0 += nbmax) {
    int64_t nb = n1 - n0 < nbmax ? n1 - n0 : nbmax;
    for (int64_t gr = 0; gr < g->G; gr++) {
      const char *xs0 = xd + (n0 * xs + gr * Cg * g->H * g->W) * es;
      const void *src = pw && nb == 1 ? (const void *)xs0 : col;
      char *o0 = od + (n0 * os + gr * Og * L) * es;
      if (nb == 1 && src == col && (int64_t)K * L * es > ROWBLOCK_BYTES) {
        /* an image's columns past the L2 (ResNet's 7x7 stem: 7.4 MB): blocks of output rows, each
         * one's columns written and read back by the GEMM while they are still in cache */
        int64_t rb = ROWBLOCK_BYTES / ((int64_t)K * g->OW * es);
        if (rb < 1) rb = 1;
        for (int64_t oh0 = 0; oh0 < g->OH; oh0 += rb) {
          ConvGeom sub = *g;   /* output rows oh0.. as a geometry of their own: padding shifted up */
          sub.OH = g->OH - oh0 < rb ? g->OH - oh0 : rb;
          sub.PH = g->PH - oh0 * g->SH;
          int64_t Ls = sub.OH * g->OW;
          im2col(dbl, xs0, xs, 1, col, &sub, Cg);
          gemm(dbl, false, false, Og, Ls, K, wd + gr * Og * K * es, K, col, Ls, 0.0, o0 + oh0 * g->OW * es, L);
        }
      } else if (nb == 1) {
        if (src == col) im2col(dbl, xs0, xs, nb, col, g, Cg);
        gemm(dbl, false, false, Og, L, K, wd + gr * Og * K * es, K, src, L, 0.0, o0, L);
      } else {
        im2col(dbl, xs0, xs, nb, col, g, Cg);
        gemm(dbl, false, false, Og, nb * L, K, wd + gr * Og * K * es, K, src, nb * L, 0.0, ybuf, nb * L);
        relayout(false, ybuf, o0, os, nb, Og, L, es);
      }
    }
  }
}

/* Meta tensors: the outputs' shapes from the geometry, no kernel. A 3-d
 * (unbatched) input gives 3-d results, as the kernels' paths do. */
static THTensor *meta_result(const THTensor *input, THDtype dt, int ndim, const int64_t *sizes) {
  bool unbatched = input->ndim == 3 && ndim == 4;
  return at_new_on(TH_DEVICE_META, dt, unbatched ? 3 : ndim, unbatched ? sizes + 1 : sizes, NULL);
}

static THTensor *conv2d_nchw(const THTensor *input, const THTensor *weight, const THTensor *bias, const ATIntList *stride,
                               const ATIntList *padding, const ATIntList *dilation, int64_t groups) {
  /* torch's CPU convolution looks at a bias of another dtype first (naming the C++ types), then the weight */
  if (bias && bias->dtype != input->dtype) {
    THError_set(TH_ERR_RUNTIME, "Input type (%s) and bias type (%s) should be the same",
                at_cpp_dtype_name(input->dtype), at_cpp_dtype_name(bias->dtype));
    return NULL;
  }
  if (input->dtype != weight->dtype) {
    THError_set(TH_ERR_RUNTIME, "expected scalar type %s but found %s",
                THDtype_info[input->dtype].legacy, THDtype_info[weight->dtype].legacy);
    return NULL;
  }
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"slow_conv2d_cpu\" not implemented for '%s'", THDtype_info[input->dtype].legacy);
    return NULL;
  }
  THTensor *xb = batched(input);
  if (!xb) return NULL;
  ConvGeom g;
  if (geom(xb, weight, stride, padding, dilation, groups, &g) < 0) { THTensor_free(xb); return NULL; }
  int dev;
  if (at_common_device(3, (const THTensor *[]){ input, weight, bias }, "conv2d", &dev) < 0) { THTensor_free(xb); return NULL; }
  if (dev == TH_DEVICE_META) {
    THTensor_free(xb);
    return meta_result(input, input->dtype, 4, (int64_t[]){ g.N, g.O, g.OH, g.OW });
  }
  if (THTensor_device(input) >= 0) {
    THTensor *o = at_conv2d_cuda(xb, weight, bias, &g);
    THTensor_free(xb);
    if (o && input->ndim == 3) {
      THTensor *sq = at_squeeze_dims(o, &(ATIntList){ 1, { 0 } });
      THTensor_free(o);
      o = sq;
    }
    return o;
  }
  THDtype ct = compute_type(input, weight);
  bool dbl = ct == TH_Double;
  int es = THDtype_size(ct);
  THTensor *x = at_contiguous_as(xb, ct), *w = x ? at_contiguous_as(weight, ct) : NULL, *out = NULL, *b = NULL;
  THTensor_free(xb);
  int64_t Cg = g.C / g.G, Og = g.O / g.G, K = Cg * g.KH * g.KW, L = g.OH * g.OW;
  void *col = NULL, *ybuf = NULL;
  if (!w) goto done;
  out = THTensor_new(ct, 4, (int64_t[]){ g.N, g.O, g.OH, g.OW });
  if (!out) goto done;
  if (bias) {
    if (bias->ndim != 1 || bias->sizes[0] != g.O) {
      THError_set(TH_ERR_RUNTIME, "Given weight of size [%lld, ...], expected bias to be 1-dimensional with %lld "
                  "elements, but got bias of size [%lld] instead", (long long)g.O, (long long)g.O,
                  (long long)THTensor_numel(bias));
      goto fail;
    }
    if (!(b = at_contiguous_as(bias, ct))) goto fail;
  }
  bool pw = is_pointwise(&g);
  if (THTensor_numel(out) == 0) goto done;
  const char *xd = THTensor_data(x), *wd = THTensor_data(w);
  char *od = THTensor_data(out);
  int64_t xs = g.C * g.H * g.W, os = g.O * L;
  int nt = image_threads(&g);
  if (at_conv_depthwise_ok(&g)) {
    at_conv_depthwise_fwd(dbl, xd, wd, od, &g);
  } else if (!dbl && at_conv_direct_ok(&g) && (nt > 1 || omp_get_max_threads() == 1)) {
    /* stride 1, wide rows: the direct kernel (AVX-512 or AVX2), images shared out across threads */
    if (at_conv_direct_run((const float *)xd, (const float *)wd, (float *)od, &g, NULL, nt) < 0) goto fail;
  } else if (at_conv_shift_ok(&g) && L >= 256) {
    /* stride 1: shifted GEMMs over a padded copy, one image per thread */
    int nth = nt > 1 ? nt : 1;
    int64_t xpn = at_conv_shift_xp_elems(&g), exn = at_conv_shift_ext_elems(&g);
    if (!(col = alloc_or_fail((size_t)(g.O * K + nth * (xpn + exn)) * es))) goto fail;
    at_conv_shift_pack_w(dbl, wd, col, &g);
#pragma omp parallel for num_threads(nth) schedule(static) if (nth > 1)
    for (int64_t n = 0; n < g.N; n++) {
      char *mine = (char *)col + (size_t)(g.O * K + omp_get_thread_num() * (xpn + exn)) * es;
      at_conv_shift_fwd(dbl, xd + n * xs * es, col, od + n * os * es, mine, mine + xpn * es, &g);
    }
  } else if (nt > 1) {
    int64_t per = (g.N + nt - 1) / nt, nbmax = thread_chunk(per, K, L, es);
    int64_t cn = slot_elems(K * nbmax * L, es), yn = nbmax > 1 ? slot_elems(Og * nbmax * L, es) : 0;
    if (!(col = alloc_or_fail((size_t)nt * (cn + yn) * es))) goto fail;
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num();
      int64_t lo = t * per, hi = lo + per < g.N ? lo + per : g.N;
      char *mine = (char *)col + (size_t)t * (cn + yn) * es;
      if (lo < hi) fwd_images(dbl, &g, xd, wd, od, lo, hi, nbmax, mine, mine + cn * es);
    }
  } else {
    int64_t nbmax = chunk_images(g.N, K, L, es);
    if (!(pw && nbmax == 1) && !(col = alloc_or_fail((size_t)K * nbmax * L * es))) goto fail;
    if (nbmax > 1 && !(ybuf = alloc_or_fail((size_t)Og * nbmax * L * es))) goto fail;
    fwd_images(dbl, &g, xd, wd, od, 0, g.N, nbmax, col, ybuf);
  }
  if (b) {
    const char *bd = THTensor_data(b);
#pragma omp parallel for if (g.N * g.O * L > 65536)
    for (int64_t p = 0; p < g.N * g.O; p++) {
      int64_t o = p % g.O;
      if (dbl) { double *y = (double *)od + p * L, bv = ((const double *)bd)[o]; for (int64_t i = 0; i < L; i++) y[i] += bv; }
      else { float *y = (float *)od + p * L, bv = ((const float *)bd)[o]; for (int64_t i = 0; i < L; i++) y[i] += bv; }
    }
  }
done:
  if (out && input->ndim == 3) {
    THTensor *sq = at_squeeze_dims(out, &(ATIntList){ 1, { 0 } });
    THTensor_free(out);
    out = sq;
  }
  if (out && ct != input->dtype) {
    THTensor *c = at_to_dtype(out, input->dtype, false);
    THTensor_free(out);
    out = c;
  }
  free(col); free(ybuf);
  THTensor_free(x); THTensor_free(w); THTensor_free(b);
  return out;
fail:
  THTensor_free(out);
  out = NULL;
  goto done;
}

/* the result is laid out channels-last when the input or the weight is, as torch's */
THTensor *at_conv2d(const THTensor *input, const THTensor *weight, const THTensor *bias, const ATIntList *stride,
                    const ATIntList *padding, const ATIntList *dilation, int64_t groups) {
  THTensor *out = conv2d_nchw(input, weight, bias, stride, padding, dilation, groups);
  if (!out || out->ndim != 4) return out;
  const THTensor *like = at_suggest_format(input) == AT_CHANNELS_LAST ? input : weight;
  return at_keep_format(like, &out) < 0 ? NULL : out;
}

static bool mask_at(const ATIntList *m, int i) { return !m || (i < m->n && m->v[i]); }

static THTensor *zeros_like_sizes(THDtype ct, int nd, const int64_t *sizes) {
  THTensor *t = THTensor_new(ct, nd, sizes);
  if (t) memset(THTensor_data(t), 0, THTensor_numel(t) * THDtype_size(ct));
  return t;
}

/* Backward of images [n0, n1) in chunks of up to nbmax images: gw (if not
 * NULL) = grad_weight of those images (+= when accumulate), gi (if not NULL)
 * = grad_input of those images. col
 * holds K x nbmax*L columns and, when nbmax > 1, gybuf the chunk's grad_output
 * side by side (Og x nbmax*L). */
static void bwd_images(bool dbl, const ConvGeom *g, const char *xd, const char *wd, char *gd, char *gid, char *gwd,
                       bool accumulate, int64_t n0, int64_t n1, int64_t nbmax, void *col, void *gybuf) {
  int es = dbl ? 8 : 4;
  bool pw = is_pointwise(g);
  int64_t Cg = g->C / g->G, Og = g->O / g->G, K = Cg * g->KH * g->KW, L = g->OH * g->OW;
  int64_t xs = g->C * g->H * g->W, os = g->O * L;
  for (; n0 < n1; n0 += nbmax) {
    int64_t nb = n1 - n0 < nbmax ? n1 - n0 : nbmax, ld = nb * L;
    for (int64_t gr = 0; gr < g->G; gr++) {
      char *g0 = gd + (n0 * os + gr * Og * L) * es;
      const void *gs = g0;
      if (nb > 1) { relayout(true, gybuf, g0, os, nb, Og, L, es); gs = gybuf; }
      const char *xs0 = xd + (n0 * xs + gr * Cg * g->H * g->W) * es;
      const char *wg = wd + gr * Og * K * es;
      if (gwd) {
        /* grad_weight += gy (Og x nb*L) @ col^T (nb*L x K) */
        const void *cx = xs0;
        if (!(pw && nb == 1)) { im2col(dbl, xs0, xs, nb, col, g, Cg); cx = col; }
        gemm(dbl, false, true, Og, K, ld, gs, ld, cx, ld, accumulate ? 1.0 : 0.0, gwd + gr * Og * K * es, K);
      }
      if (gid) {
        char *gis = gid + (n0 * xs + gr * Cg * g->H * g->W) * es;
        /* col = W^T (K x Og) @ gy (Og x nb*L), then col2im */
        if (pw && nb == 1) gemm(dbl, true, false, K, L, Og, wg, K, gs, L, 0.0, gis, L);
        else {
          gemm(dbl, true, false, K, ld, Og, wg, K, gs, ld, 0.0, col, ld);
          if (dbl) col2im_double(col, (double *)gis, xs, nb, g, Cg);
          else col2im_float(col, (float *)gis, xs, nb, g, Cg);
        }
      }
    }
    accumulate = true;
  }
}

int at_conv2d_backward(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                       const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation, int64_t groups,
                       const ATIntList *output_mask) {
  outs[0] = outs[1] = outs[2] = NULL;
  THTensor *xb = batched(input), *gb = xb ? batched(grad) : NULL;
  if (!gb) { THTensor_free(xb); return -1; }
  ConvGeom g;
  int rc = -1;
  THTensor *x = NULL, *w = NULL, *gy = NULL, *gi = NULL, *gw = NULL, *gbias = NULL;
  void *col = NULL, *gbuf = NULL;
  if (geom(xb, weight, stride, padding, dilation, groups, &g) < 0) goto done;
  /* the loops read grad_output as (N, O, OH, OW) */
  if (at_check_shape(gb, 4, (int64_t[]){ g.N, g.O, g.OH, g.OW }, "conv2d_backward", "grad_output") < 0) goto done;
  bool need_i = mask_at(output_mask, 0), need_w = mask_at(output_mask, 1), need_b = mask_at(output_mask, 2);
  int dev;
  if (at_common_device(3, (const THTensor *[]){ grad, input, weight }, "conv2d_backward", &dev) < 0) goto done;
  if (dev == TH_DEVICE_META) {
    if ((need_i && !(outs[0] = meta_result(input, input->dtype, 4, xb->sizes))) ||
        (need_w && !(outs[1] = at_new_on(dev, weight->dtype, weight->ndim, weight->sizes, NULL))) ||
        (need_b && !(outs[2] = at_new_on(dev, weight->dtype, 1, (int64_t[]){ g.O }, NULL)))) {
      THTensor_free(outs[0]); THTensor_free(outs[1]);
      outs[0] = outs[1] = NULL;
      goto done;
    }
    rc = 0;
    goto done;
  }
  if (THTensor_device(input) >= 0) {
    rc = at_conv2d_backward_cuda(outs, gb, xb, weight, &g, need_i, need_w, need_b);
    if (rc == 0 && outs[0] && input->ndim == 3) {
      THTensor *sq = at_squeeze_dims(outs[0], &(ATIntList){ 1, { 0 } });
      THTensor_free(outs[0]);
      outs[0] = sq;
      if (!sq) { THTensor_free(outs[1]); THTensor_free(outs[2]); outs[1] = outs[2] = NULL; rc = -1; }
    }
    goto done;
  }
  THDtype ct = compute_type(input, weight);
  bool dbl = ct == TH_Double;
  int es = THDtype_size(ct);
  int64_t Cg = g.C / g.G, Og = g.O / g.G, K = Cg * g.KH * g.KW, L = g.OH * g.OW;
  if (!(x = at_contiguous_as(xb, ct)) || !(w = at_contiguous_as(weight, ct)) || !(gy = at_contiguous_as(gb, ct))) goto done;
  /* every path writes all of grad_input (col2im zeroes its planes) */
  if (need_i && !(gi = THTensor_numel(gy) ? THTensor_new(ct, 4, xb->sizes) : zeros_like_sizes(ct, 4, xb->sizes))) goto done;
  /* the shift path adds into grad_weight; the others write all of it */
  bool shift = at_conv_shift_ok(&g) && L >= 256, empty = THTensor_numel(gy) == 0;
  if (need_w && !(gw = shift || empty ? zeros_like_sizes(ct, 4, weight->sizes) : THTensor_new(ct, 4, weight->sizes))) goto done;
  if (need_b && !(gbias = THTensor_new(ct, 1, &g.O))) goto done;
  if ((need_i || need_w) && THTensor_numel(gy) > 0) {
    const char *xd = THTensor_data(x), *wd = THTensor_data(w);
    char *gd = THTensor_data(gy);
    char *gid = gi ? THTensor_data(gi) : NULL, *gwd = gw ? THTensor_data(gw) : NULL;
    int64_t xs = g.C * g.H * g.W, os = g.O * L, wn = g.O * K;
    int nt = image_threads(&g);
    ConvGeom g2;
    if (at_conv_depthwise_ok(&g)) {
      at_conv_depthwise_bwd(dbl, xd, wd, gd, gid, need_w ? gwd : NULL, &g);
      gid = NULL;
      need_w = false;
    }
    if (gid && !dbl && (nt > 1 || omp_get_max_threads() == 1) && at_conv_direct_grad_input_geom(&g, &g2)) {
      /* grad_input by the direct kernel (a convolution of grad_output with
       * the flipped weights); the paths below then do grad_weight only */
      if (at_conv_direct_run((const float *)gd, (const float *)wd, (float *)gid, &g2, &g, nt) < 0) goto done;
      gid = NULL;
    }
    if (!gid && !need_w) {
      /* nothing left */
    } else if (shift) {
      /* stride 1: shifted GEMMs; grad_weight summed per thread in tap-major
       * layout, then added into [O][C][KH][KW] */
      int nth = nt > 1 ? nt : 1;
      int64_t xpn = at_conv_shift_xp_elems(&g), exn = at_conv_shift_ext_elems(&g);
      if (!(col = alloc_or_fail((size_t)(wn + nth * (xpn + exn)) * es))) goto done;
      if (need_w && !(gbuf = alloc_or_fail((size_t)nth * slot_elems(wn, es) * es))) goto done;
      at_conv_shift_pack_w(dbl, wd, col, &g);
#pragma omp parallel num_threads(nth) if (nth > 1)
      {
        int t = omp_get_thread_num();
        char *mine = (char *)col + (size_t)(wn + t * (xpn + exn)) * es;
        char *mygw = need_w ? (char *)gbuf + (size_t)t * slot_elems(wn, es) * es : NULL;
        if (mygw) memset(mygw, 0, (size_t)wn * es);   /* by its own thread: the lines stay in its cache */
#pragma omp for schedule(static)
        for (int64_t n = 0; n < g.N; n++)
          at_conv_shift_bwd(dbl, xd + n * xs * es, wd, col, gd + n * os * es, gid ? gid + n * xs * es : NULL,
                            mygw, mine, mine + xpn * es, &g);
      }
      if (need_w)
        for (int t = 0; t < nth; t++) at_conv_shift_unpack_add(dbl, (char *)gbuf + (size_t)t * slot_elems(wn, es) * es, gwd, &g);
    } else if (nt > 1) {
      /* each thread's grad_weight goes to a slot of its own (thread 0's is
       * grad_weight itself), summed at the end */
      int64_t per = (g.N + nt - 1) / nt, nbmax = thread_chunk(per, K, L, es);
      int64_t cn = slot_elems(K * nbmax * L, es), yn = nbmax > 1 ? slot_elems(Og * nbmax * L, es) : 0;
      int64_t wslot = need_w ? slot_elems(wn, es) : 0;
      if (!(col = alloc_or_fail((size_t)nt * (cn + yn) * es))) goto done;
      if (need_w && !(gbuf = alloc_or_fail((size_t)(nt - 1) * wslot * es))) goto done;
#pragma omp parallel num_threads(nt)
      {
        int t = omp_get_thread_num();
        int64_t lo = t * per, hi = lo + per < g.N ? lo + per : g.N;
        char *mine = (char *)col + (size_t)t * (cn + yn) * es;
        char *mygw = !need_w ? NULL : t == 0 ? gwd : (char *)gbuf + (size_t)(t - 1) * wslot * es;
        if (lo < hi) bwd_images(dbl, &g, xd, wd, gd, gid, mygw, false, lo, hi, nbmax, mine, mine + cn * es);
        else if (mygw) memset(mygw, 0, (size_t)wn * es);
      }
      if (need_w)
        for (int t = 1; t < nt; t++) {
          const char *b = (const char *)gbuf + (size_t)(t - 1) * wslot * es;
#pragma omp parallel for schedule(static)
          for (int64_t i = 0; i < wn; i++) {
            if (dbl) ((double *)gwd)[i] += ((const double *)b)[i];
            else ((float *)gwd)[i] += ((const float *)b)[i];
          }
        }
    } else {
      int64_t nbmax = chunk_images(g.N, K, L, es);
      if (!(col = alloc_or_fail((size_t)K * nbmax * L * es))) goto done;
      if (nbmax > 1 && !(gbuf = alloc_or_fail((size_t)Og * nbmax * L * es))) goto done;
      bwd_images(dbl, &g, xd, wd, gd, gid, need_w ? gwd : NULL, false, 0, g.N, nbmax, col, gbuf);
    }
  }
  if (need_b) {
    const char *gd = THTensor_data(gy);
    char *bd = THTensor_data(gbias);
#pragma omp parallel for if (g.N * g.O * L > 65536)
    for (int64_t o = 0; o < g.O; o++) {
      double s = 0;
      for (int64_t n = 0; n < g.N; n++) {
        const char *p = gd + ((n * g.O + o) * L) * es;
        if (dbl) for (int64_t i = 0; i < L; i++) s += ((const double *)p)[i];
        else { float t = 0; for (int64_t i = 0; i < L; i++) t += ((const float *)p)[i]; s += t; }
      }
      if (dbl) ((double *)bd)[o] = s; else ((float *)bd)[o] = (float)s;
    }
  }
  if (gi) {
    THTensor *gi_out = gi;
    if (input->ndim == 3 && !(gi_out = at_squeeze_dims(gi, &(ATIntList){ 1, { 0 } }))) goto done;
    outs[0] = at_to_dtype(gi_out, input->dtype, false);
    if (gi_out != gi) THTensor_free(gi_out);
    if (!outs[0]) goto done;
  }
  if (gw && !(outs[1] = at_to_dtype(gw, weight->dtype, false))) goto done;
  if (gbias && !(outs[2] = at_to_dtype(gbias, weight->dtype, false))) goto done;
  rc = 0;
done:
  if (rc < 0)
    for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
  free(col); free(gbuf);
  THTensor_free(xb); THTensor_free(gb); THTensor_free(x); THTensor_free(w); THTensor_free(gy);
  THTensor_free(gi); THTensor_free(gw); THTensor_free(gbias);
  return rc;
}
