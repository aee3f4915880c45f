/* grid_sampler_2d / grid_sampler_3d and their backward (F.grid_sample).
 *
 * Per batch item the output points are taken in blocks: for each point of a
 * block a table holds the input offsets of the corners it reads (4 or 8 for
 * bilinear/trilinear, 1 for nearest), their weights and, for the grid's
 * gradient, each weight's derivative along each coordinate. The channels then
 * run over the block reading the tables, one input plane at a time (it stays
 * in cache), so the source coordinates are computed once per point, not once
 * per channel as a gather composite does.
 *
 * Coordinates and weights are computed in the tensor's type (float for
 * float16/bfloat16), as torch's CPU kernels do, so nearest sampling rounds
 * the same ties. A corner outside the input contributes 0 (it is not read).
 * Bicubic reads 16 taps (2-d only): as torch's, padding moves each integer
 * tap, not the coordinate, and the grid's gradient ignores the padding.
 * Every output element, grad_input plane and grad_grid point is summed in one
 * fixed order whatever the thread count.
 *
 * The kernels are written once over a type T: this file includes itself with
 * GS_T float, then double. */
#ifndef GS_T
#include "ATSampling.h"
#include "ATArgChecks.h"
#include "ATConv.h"   /* at_contiguous_as */

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define GS_BLOCK 256           /* output points whose tables are built at once (they stay in L1) */
#define GS_CHUNK 64            /* points per thread in the grid gradient */
#define GS_PAR_WORK 32768      /* below this many corner reads per block, one thread */

enum { GS_BILINEAR = 0, GS_NEAREST = 1, GS_BICUBIC = 2 };
enum { GS_ZEROS = 0, GS_BORDER = 1, GS_REFLECTION = 2 };

/* geometry: N batch, C channels, in[d] / out[d] sizes per coordinate d
 * (d = 0 x/W, 1 y/H, 2 z/D), P output points per item, Q input points per plane */
typedef struct {
  int64_t N, C, in[3], instride[3], P, Q;
  int nsp, K, mode, pad;
  bool align;
} GsGeom;

#define GS_T float
#define GS_(name) name##_float
#include "ATSampling.c"
#undef GS_T
#undef GS_
#define GS_T double
#define GS_(name) name##_double
#include "ATSampling.c"
#undef GS_T
#undef GS_

static bool mask_at(const ATIntList *m, int i) { return !m || (i < m->n && m->v[i]); }

/* torch's argument checks (check_grid_sampler_common, then the 2d/3d ones), in its order */
static int gs_check(const THTensor *input, const THTensor *grid, int64_t mode, int nsp, GsGeom *g) {
  char a[256], b[256];
  int dev;
  if (at_common_device(2, (const THTensor *[]){ input, grid }, "grid_sampler", &dev) < 0) return -1;
  if (input->ndim < 1 || grid->ndim < 1) {   /* torch reads size(0) of both first */
    THError_set(TH_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
    return -1;
  }
  if (input->sizes[0] != grid->sizes[0]) {
    THError_set(TH_ERR_RUNTIME, "grid_sampler(): expected grid and input to have same batch size, but got input with "
                "sizes %s and grid with sizes %s", THTensor_sizeStr(input->ndim, input->sizes, a, sizeof a),
                THTensor_sizeStr(grid->ndim, grid->sizes, b, sizeof b));
    return -1;
  }
  if (grid->sizes[grid->ndim - 1] != input->ndim - 2) {
    THError_set(TH_ERR_RUNTIME, "grid_sampler(): expected grid to have size %d in last dimension, but got grid with "
                "sizes %s", input->ndim - 2, THTensor_sizeStr(grid->ndim, grid->sizes, b, sizeof b));
    return -1;
  }
  for (int i = 2; i < input->ndim; i++)
    if (input->sizes[i] <= 0) {
      THError_set(TH_ERR_RUNTIME, "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                  "has sizes %s with dimension %d being empty",
                  THTensor_sizeStr(input->ndim, input->sizes, a, sizeof a), i);
      return -1;
    }
  if (input->ndim != nsp + 2 || grid->ndim != input->ndim) {
    THError_set(TH_ERR_RUNTIME, "grid_sampler(): expected %dD input and grid with same number of dimensions, but got "
                "input with sizes %s and grid with sizes %s", nsp + 2,
                THTensor_sizeStr(input->ndim, input->sizes, a, sizeof a),
                THTensor_sizeStr(grid->ndim, grid->sizes, b, sizeof b));
    return -1;
  }
  if (mode == GS_BICUBIC && nsp == 3) {
    THError_set(TH_ERR_RUNTIME, "grid_sampler(): bicubic interpolation only supports 4D input");
    return -1;
  }
  if (mode != GS_BILINEAR && mode != GS_NEAREST && mode != GS_BICUBIC) {
    THError_set(TH_ERR_RUNTIME, "grid_sampler(): unknown interpolation mode %lld", (long long)mode);
    return -1;
  }
  if (dev != -1) {
    THError_set(TH_ERR_NOTIMPL, "grid_sampler_%dd is implemented for CPU tensors only in cthtorch", nsp);
    return -1;
  }
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'",
                nsp == 2 ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler3d_cpu", THDtype_info[input->dtype].legacy);
    return -1;
  }
  if (grid->dtype != input->dtype) {
    THError_set(TH_ERR_RUNTIME, "expected scalar type %s but found %s", THDtype_info[input->dtype].legacy,
                THDtype_info[grid->dtype].legacy);
    return -1;
  }
  g->N = input->sizes[0];
  g->C = input->sizes[1];
  g->nsp = nsp;
  g->P = 1;
  g->Q = 1;
  for (int d = 0; d < nsp; d++) {
    g->in[d] = input->sizes[input->ndim - 1 - d];
    g->instride[d] = g->Q;
    g->Q *= g->in[d];
    g->P *= grid->sizes[grid->ndim - 2 - d];
  }
  g->mode = (int)mode;
  g->K = mode == GS_NEAREST ? 1 : mode == GS_BICUBIC ? 16 : 1 << nsp;
  return 0;
}

static int gs_padding(int64_t padding_mode) {
  if (padding_mode < 0 || padding_mode > 2) {
    THError_set(TH_ERR_RUNTIME, "grid_sampler(): unknown padding mode %lld", (long long)padding_mode);
    return -1;
  }
  return 0;
}

THTensor *at_grid_sampler(const THTensor *input, const THTensor *grid, int64_t interpolation_mode,
                          int64_t padding_mode, bool align_corners, int nsp) {
  GsGeom g;
  if (gs_check(input, grid, interpolation_mode, nsp, &g) < 0 || gs_padding(padding_mode) < 0) return NULL;
  g.pad = (int)padding_mode;
  g.align = align_corners;
  int64_t sz[5] = { g.N, g.C };
  for (int i = 1; i <= nsp; i++) sz[1 + i] = grid->sizes[i];
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *y = THTensor_new(ct, nsp + 2, sz), *r = NULL;
  THTensor *x = y ? at_contiguous_as(input, ct) : NULL, *gr = x ? at_contiguous_as(grid, ct) : NULL;
  if (gr) {
    int rc = ct == TH_Double ? gs_forward_double(&g, THTensor_data(x), THTensor_data(gr), THTensor_data(y))
                             : gs_forward_float(&g, THTensor_data(x), THTensor_data(gr), THTensor_data(y));
    if (rc == 0) r = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  }
  THTensor_free(gr); THTensor_free(x); THTensor_free(y);
  return r;
}

int at_grid_sampler_backward(THTensor **outs, const THTensor *grad_output, const THTensor *input,
                             const THTensor *grid, int64_t interpolation_mode, int64_t padding_mode,
                             bool align_corners, const ATIntList *output_mask, int nsp) {
  outs[0] = outs[1] = NULL;
  GsGeom g;
  if (gs_check(input, grid, interpolation_mode, nsp, &g) < 0 || gs_padding(padding_mode) < 0) return -1;
  g.pad = (int)padding_mode;
  g.align = align_corners;
  int64_t sz[5] = { g.N, g.C };
  for (int i = 1; i <= nsp; i++) sz[1 + i] = grid->sizes[i];
  const char *name = nsp == 2 ? "grid_sampler_2d_backward" : "grid_sampler_3d_backward";
  if (at_check_shape(grad_output, nsp + 2, sz, name, "grad_output") < 0) return -1;
  if (grad_output->dtype != input->dtype) {
    THError_set(TH_ERR_RUNTIME, "expected scalar type %s but found %s", THDtype_info[input->dtype].legacy,
                THDtype_info[grad_output->dtype].legacy);
    return -1;
  }
  bool need_i = mask_at(output_mask, 0), need_g = mask_at(output_mask, 1);
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *gi = need_i ? THTensor_new(ct, input->ndim, input->sizes) : NULL;
  THTensor *gg = need_g ? THTensor_new(ct, grid->ndim, grid->sizes) : NULL;
  THTensor *x = NULL, *gr = NULL, *go = NULL;
  int rc = -1;
  if ((need_i && !gi) || (need_g && !gg)) goto done;
  if (!(x = at_contiguous_as(input, ct)) || !(gr = at_contiguous_as(grid, ct)) ||
      !(go = at_contiguous_as(grad_output, ct)))
    goto done;
  /* the kernels add into both; at_fill_ also spares an empty result's NULL data from memset */
  if ((gi && at_fill_(gi, at_scalar_int(0)) < 0) || (gg && at_fill_(gg, at_scalar_int(0)) < 0)) goto done;
  rc = ct == TH_Double
           ? gs_backward_double(&g, THTensor_data(go), THTensor_data(x), THTensor_data(gr),
                                gi ? THTensor_data(gi) : NULL, gg ? THTensor_data(gg) : NULL)
           : gs_backward_float(&g, THTensor_data(go), THTensor_data(x), THTensor_data(gr),
                               gi ? THTensor_data(gi) : NULL, gg ? THTensor_data(gg) : NULL);
  if (rc == 0) {
    THDtype dt = input->dtype;
    if (gi && !(outs[0] = ct == dt ? THTensor_retain(gi) : at_to_dtype(gi, dt, false))) rc = -1;
    if (rc == 0 && gg && !(outs[1] = ct == dt ? THTensor_retain(gg) : at_to_dtype(gg, dt, false))) {
      THTensor_free(outs[0]);
      outs[0] = NULL;
      rc = -1;
    }
  }
done:
  THTensor_free(x); THTensor_free(gr); THTensor_free(go); THTensor_free(gi); THTensor_free(gg);
  return rc;
}

#else   /* the kernels over GS_T */
typedef GS_T GS_(gs_t);
#define T GS_(gs_t)

/* clamp a coordinate into [0, S - 1] (NaN to 0, as torch); *m: its derivative (0 where clamped) */
static inline T GS_(gs_clip)(T c, int64_t S, T *m) {
  if (!(c > 0)) {
    *m = 0;
    return 0;
  }
  T hi = (T)(S - 1);
  if (c >= hi) {
    *m = 0;
    return hi;
  }
  *m = 1;
  return c;
}

/* reflect a coordinate at the bounds twice_lo / 2 and twice_hi / 2 until it
 * lies between them; *m: the sign its derivative picks up (0: a one-point range) */
static inline T GS_(gs_reflect)(T c, int64_t twice_lo, int64_t twice_hi, T *m) {
  if (twice_lo == twice_hi) {
    *m = 0;
    return 0;
  }
  T lo = (T)twice_lo / 2, span = (T)(twice_hi - twice_lo) / 2, sign = 1;
  c -= lo;
  if (c < 0) {
    sign = -1;
    c = -c;
  }
  if (!isfinite(c)) {   /* fmod's NaN, which the clip then takes to 0 */
    *m = 0;
    return NAN;
  }
  T flips = floor(c / span);
  /* c - flips * span is fmod(c, span) but for a rounding where c / span is within an ulp of an integer */
  T extra = flips < 16777216 ? c - flips * span : (T)fmod(c, span);
  if (extra < 0 || extra > span) extra = (T)fmod(c, span);
  bool odd = flips < 9007199254740992.0 ? ((int64_t)flips & 1) : fmod(flips, 2) != 0;
  if (!odd) {
    *m = sign;
    return extra + lo;
  }
  *m = -sign;
  return span - extra + lo;
}

/* the input coordinate (in elements) of normalized grid value v along a dim
 * of size S, after padding; *mult: d(coordinate)/d(v) */
static inline __attribute__((always_inline)) T GS_(gs_coord)(T v, int64_t S, int pad, bool align, T *mult) {
  T c, m, pm;
  if (align) {
    c = ((v + 1) / 2) * (T)(S - 1);
    m = (T)(S - 1) / 2;
  } else {
    c = ((v + 1) * (T)S - 1) / 2;
    m = (T)S / 2;
  }
  if (pad == GS_BORDER) {
    c = GS_(gs_clip)(c, S, &pm);
    m *= pm;
  } else if (pad == GS_REFLECTION) {
    c = align ? GS_(gs_reflect)(c, 0, 2 * (S - 1), &pm) : GS_(gs_reflect)(c, -1, 2 * S - 1, &pm);
    m *= pm;
    c = GS_(gs_clip)(c, S, &pm);
    m *= pm;
  }
  *mult = m;
  return c;
}

/* bicubic: the tap at (integer-valued) coordinate c after padding, or -1 when it reads nothing */
static inline int64_t GS_(gs_tap)(T c, int64_t S, int pad, bool align) {
  T m;
  if (pad == GS_BORDER)
    c = GS_(gs_clip)(c, S, &m);
  else if (pad == GS_REFLECTION)
    c = GS_(gs_clip)(align ? GS_(gs_reflect)(c, 0, 2 * (S - 1), &m) : GS_(gs_reflect)(c, -1, 2 * S - 1, &m), S, &m);
  if (!(fabs((double)c) < 2147483647.0)) return -1;   /* NaN, infinite, huge: torch's int conversion misses */
  int64_t k = (int64_t)c;
  return k >= 0 && k < S ? k : -1;
}

/* the cubic convolution weights (A = -0.75, torch's) of the taps at -1, 0, 1, 2 from floor, at fraction t;
 * dc: their derivatives along t (NULL: not wanted) */
static inline void GS_(gs_cubic)(T t, T *c, T *dc) {
  const T A = (T)-0.75;
  T x = t + 1;
  c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  x = 1 - t;
  c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;
  c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  if (!dc) return;
  x = t + 1;
  dc[0] = (3 * A * x - 10 * A) * x + 8 * A;
  dc[1] = (3 * (A + 2) * t - 2 * (A + 3)) * t;
  x = 1 - t;
  dc[2] = -(3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  dc[3] = -((3 * A * x - 10 * A) * x + 8 * A);
}

/* the bicubic tables of point i: tap k = 4*r + q (q along x, r along y) at j = k*GS_BLOCK + i;
 * cub[q*GS_BLOCK + i] the x weights, cub[(4 + r)*GS_BLOCK + i] the y weights */
static void GS_(gs_tables_bicubic)(const GsGeom *g, const T *grid, int64_t i, int64_t *off, int32_t *inb, T *w,
                                   T *dw, T *mult, T *cub) {
  T cw[2][4], dcw[2][4];
  int64_t tap[2][4];
  for (int d = 0; d < 2; d++) {
    int64_t S = g->in[d];
    T v = grid[i * 2 + d];
    T c = g->align ? ((v + 1) / 2) * (T)(S - 1) : ((v + 1) * (T)S - 1) / 2;
    if (mult) mult[i * 2 + d] = g->align ? (T)(S - 1) / 2 : (T)S / 2;
    T f = floor(c);
    GS_(gs_cubic)(c - f, cw[d], dw ? dcw[d] : NULL);
    for (int q = 0; q < 4; q++) tap[d][q] = GS_(gs_tap)(f + (T)(q - 1), S, g->pad, g->align);
  }
  for (int q = 0; q < 4; q++) {
    cub[q * GS_BLOCK + i] = cw[0][q];
    cub[(4 + q) * GS_BLOCK + i] = cw[1][q];
  }
  for (int r = 0; r < 4; r++)
    for (int q = 0; q < 4; q++) {
      int64_t j = (int64_t)(4 * r + q) * GS_BLOCK + i;
      bool in = tap[0][q] >= 0 && tap[1][r] >= 0;
      off[j] = in ? tap[0][q] + tap[1][r] * g->instride[1] : 0;
      inb[j] = in;
      w[j] = cw[0][q] * cw[1][r];
      if (dw) {
        dw[j * 2] = dcw[0][q] * cw[1][r];
        dw[j * 2 + 1] = cw[0][q] * dcw[1][r];
      }
    }
}

/* The tables of points [p0, p0 + np) of one batch item, corner-major so the
 * channel loops run over points with unit stride (and vectorize as gathers):
 * for point i and corner k at j = k*GS_BLOCK + i, off[j] (0 when outside),
 * in[j] (1 inside, 0 outside: an outside corner's value is taken as 0, not
 * read as 0 * x, which an inf would make NaN), w[j], and where dw is not NULL
 * dw[j*nsp + d] = d(w)/d(coordinate d); mult[i*nsp + d] = d(coordinate
 * d)/d(grid value d). grid points at this block's first point. */
/* bilinear/trilinear and nearest tables with the dimension count, padding and alignment constants
 * (gs_tables instantiates each): with them read from g, the loops over dimensions and corners and
 * the padding's branches took 4x the time of the sampling itself (2-d, 2 channels) */
static inline __attribute__((always_inline)) void GS_(gs_tables_lin)(const GsGeom *g, const T *grid, int64_t np,
                                                                     int64_t *off, int32_t *inb, T *w, T *dw,
                                                                     T *mult, const int nsp, const int pad,
                                                                     const bool align) {
  const int K = 1 << nsp;
  /* the geometry in locals: the table stores (int64, int32, T) could alias *g, so read through g
   * each of its fields was loaded again after every store (3-d trilinear took 1.7x the time) */
  const bool nearest = g->mode == GS_NEAREST;
  int64_t size[3], stride[3];
  for (int d = 0; d < nsp; d++) {
    size[d] = g->in[d];
    stride[d] = g->instride[d];
  }
  for (int64_t i = 0; i < np; i++) {
    T c[3], t[3], u[3];
    int64_t i0[3];
    for (int d = 0; d < nsp; d++) {
      T m;
      c[d] = GS_(gs_coord)(grid[i * nsp + d], size[d], pad, align, &m);
      if (mult) mult[i * nsp + d] = m;
    }
    if (nearest) {
      int64_t o = 0;
      bool in = true;
      for (int d = 0; d < nsp; d++) {
        /* ties to even, as torch; a NaN, infinite or huge coordinate reads nothing */
        bool ok = isfinite(c[d]) && fabs((double)c[d]) < 2147483647.0;
        int64_t k = ok ? (int64_t)nearbyint(c[d]) : -1;
        in = in && k >= 0 && k < size[d];
        o += k * stride[d];
      }
      off[i] = in ? o : 0;
      inb[i] = in;
      w[i] = 1;
      continue;
    }
    for (int d = 0; d < nsp; d++) {
      T f = floor(c[d]);
      /* a huge coordinate reads nothing; a NaN or infinite one neither, but
       * its NaN weights make the output NaN, as torch's */
      bool ok = fabs((double)c[d]) < 2147483647.0;
      i0[d] = ok ? (int64_t)f : -2;
      t[d] = c[d] - f;           /* weight of the upper corner */
      u[d] = (f + 1) - c[d];     /* of the lower corner */
    }
    for (int k = 0; k < K; k++) {
      int64_t o = 0;
      bool in = true;
      T wk = 1;
      for (int d = 0; d < nsp; d++) {
        int b = (k >> d) & 1;
        int64_t idx = i0[d] + b;
        in = in && idx >= 0 && idx < size[d];
        o += idx * stride[d];
        wk *= b ? t[d] : u[d];
      }
      int64_t j = (int64_t)k * GS_BLOCK + i;
      off[j] = in ? o : 0;
      inb[j] = in;
      w[j] = wk;
      if (dw)
        for (int d = 0; d < nsp; d++) {
          T p = (k >> d) & 1 ? 1 : -1;
          for (int e = 0; e < nsp; e++)
            if (e != d) p *= (k >> e) & 1 ? t[e] : u[e];
          dw[j * nsp + d] = p;
        }
    }
  }
}

static inline __attribute__((always_inline)) void GS_(gs_tables)(const GsGeom *g, const T *grid, int64_t np,
                                                                  int64_t *off, int32_t *inb, T *w, T *dw, T *mult,
                                                                  T *cub) {
  if (g->mode == GS_BICUBIC) {
    for (int64_t i = 0; i < np; i++) GS_(gs_tables_bicubic)(g, grid, i, off, inb, w, dw, mult, cub);
    return;
  }
#define GS_LIN(NSP, PAD)                                                                                   \
  (g->align ? GS_(gs_tables_lin)(g, grid, np, off, inb, w, dw, mult, NSP, PAD, true)                        \
            : GS_(gs_tables_lin)(g, grid, np, off, inb, w, dw, mult, NSP, PAD, false))
  if (g->nsp == 2)
    g->pad == GS_ZEROS ? GS_LIN(2, GS_ZEROS) : g->pad == GS_BORDER ? GS_LIN(2, GS_BORDER) : GS_LIN(2, GS_REFLECTION);
  else
    g->pad == GS_ZEROS ? GS_LIN(3, GS_ZEROS) : g->pad == GS_BORDER ? GS_LIN(3, GS_BORDER) : GS_LIN(3, GS_REFLECTION);
#undef GS_LIN
}

/* the forward's tables: gs_tables inlined once with no derivatives, whose loops then drop them */
static void GS_(gs_tables_fwd)(const GsGeom *g, const T *grid, int64_t np, int64_t *off, int32_t *inb, T *w, T *cub) {
  GS_(gs_tables)(g, grid, np, off, inb, w, NULL, NULL, cub);
}

/* the scratch of one block: offsets, weights, weight derivatives, multipliers, bicubic's per-axis weights */
typedef struct {
  int64_t *off;
  int32_t *in;
  T *w, *dw, *mult, *cub;
} GS_(GsScratch);

static int GS_(gs_scratch)(const GsGeom *g, bool grads, GS_(GsScratch) *s) {
  int64_t n = (int64_t)GS_BLOCK * g->K;
  s->off = malloc(n * sizeof(int64_t));
  s->in = malloc(n * sizeof(int32_t));
  s->w = malloc(n * sizeof(T));
  s->dw = grads ? malloc(n * g->nsp * sizeof(T)) : NULL;
  s->mult = grads ? malloc((int64_t)GS_BLOCK * g->nsp * sizeof(T)) : NULL;
  s->cub = g->mode == GS_BICUBIC ? malloc((int64_t)GS_BLOCK * 8 * sizeof(T)) : NULL;
  if (!s->off || !s->in || !s->w || (grads && (!s->dw || !s->mult)) || (g->mode == GS_BICUBIC && !s->cub)) {
    free(s->off); free(s->in); free(s->w); free(s->dw); free(s->mult); free(s->cub);
    THError_set(TH_ERR_MEMORY, "grid_sampler: out of memory");
    return -1;
  }
  return 0;
}

static void GS_(gs_scratch_free)(GS_(GsScratch) *s) {
  free(s->off); free(s->in); free(s->w); free(s->dw); free(s->mult); free(s->cub);
}

/* one scratch per thread (NULL, the error set, when memory runs out) */
static GS_(GsScratch) *GS_(gs_scratch_n)(const GsGeom *g, bool grads, int nt) {
  GS_(GsScratch) *sc = malloc((size_t)nt * sizeof *sc);
  int made = 0;   /* a failing gs_scratch frees its own part and sets the error */
  while (sc && made < nt && GS_(gs_scratch)(g, grads, &sc[made]) == 0) made++;
  if (made == nt) return sc;
  for (int t = 0; t < made; t++) GS_(gs_scratch_free)(&sc[t]);
  if (!sc) THError_set(TH_ERR_MEMORY, "grid_sampler: out of memory");
  free(sc);
  return NULL;
}

static void GS_(gs_scratch_free_n)(GS_(GsScratch) *sc, int nt) {
  for (int t = 0; t < nt; t++) GS_(gs_scratch_free)(&sc[t]);
  free(sc);
}

/* channels [c0, c1) of one block's points [p0, p0 + np) of batch item n, from its tables in s */
static void GS_(gs_forward_block)(const GsGeom *g, const T *x, T *y, const GS_(GsScratch) *sc, int64_t n, int64_t p0,
                                  int64_t np, int64_t c0, int64_t c1) {
  const int K = g->K;
  const int64_t C = g->C, P = g->P, Q = g->Q;
  const int64_t *off = sc->off;
  const int32_t *in = sc->in;
  const T *w = sc->w, *cub = sc->cub;
  for (int64_t c = c0; c < c1; c++) {
    const T *pl = x + (n * C + c) * Q;
    T *out = y + (n * C + c) * P + p0;
    /* each output sums its corners in torch's order (nw, ne, sw, se, ...) */
    if (K == 4) {   /* bilinear: the corners unrolled */
      for (int64_t i = 0; i < np; i++) {
        T v0 = pl[off[i]], v1 = pl[off[GS_BLOCK + i]], v2 = pl[off[2 * GS_BLOCK + i]],
          v3 = pl[off[3 * GS_BLOCK + i]];
        out[i] = (in[i] ? v0 : (T)0) * w[i] + (in[GS_BLOCK + i] ? v1 : (T)0) * w[GS_BLOCK + i] +
                 (in[2 * GS_BLOCK + i] ? v2 : (T)0) * w[2 * GS_BLOCK + i] +
                 (in[3 * GS_BLOCK + i] ? v3 : (T)0) * w[3 * GS_BLOCK + i];
      }
      continue;
    }
    if (K == 16) {   /* bicubic: each row along x, then the rows along y, as torch sums them */
      for (int64_t i = 0; i < np; i++) {
        T rows[4];
        for (int r = 0; r < 4; r++) {
          const int64_t *o = off + 4 * r * GS_BLOCK + i;
          const int32_t *b = in + 4 * r * GS_BLOCK + i;
          T v0 = pl[o[0]], v1 = pl[o[GS_BLOCK]], v2 = pl[o[2 * GS_BLOCK]], v3 = pl[o[3 * GS_BLOCK]];
          rows[r] = cub[i] * (b[0] ? v0 : (T)0) + cub[GS_BLOCK + i] * (b[GS_BLOCK] ? v1 : (T)0) +
                    cub[2 * GS_BLOCK + i] * (b[2 * GS_BLOCK] ? v2 : (T)0) +
                    cub[3 * GS_BLOCK + i] * (b[3 * GS_BLOCK] ? v3 : (T)0);
        }
        out[i] = cub[4 * GS_BLOCK + i] * rows[0] + cub[5 * GS_BLOCK + i] * rows[1] +
                 cub[6 * GS_BLOCK + i] * rows[2] + cub[7 * GS_BLOCK + i] * rows[3];
      }
      continue;
    }
    for (int64_t i = 0; i < np; i++) {
      T acc = 0;
      for (int k = 0; k < K; k++) {
        int64_t j = (int64_t)k * GS_BLOCK + i;
        T v = pl[off[j]];
        acc += (in[j] ? v : (T)0) * w[j];
      }
      out[i] = acc;
    }
  }
}

static int GS_(gs_forward)(const GsGeom *g, const char *xd, const char *gd, char *yd) {
  const T *x = (const T *)xd, *grid = (const T *)gd;
  T *y = (T *)yd;
  int K = g->K, nsp = g->nsp;
  int64_t C = g->C, P = g->P;
  if (g->N == 0 || C == 0 || P == 0) return 0;
  int64_t nb = (P + GS_BLOCK - 1) / GS_BLOCK, tasks = g->N * nb;
  int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  /* Few channels (a block's channel loop below GS_PAR_WORK corner reads, one thread): the threads
   * take whole blocks, tables and all, each with its own scratch; building the tables is most of
   * the work there. Otherwise the channels of each block are split. */
  if (nt > 1 && C * GS_BLOCK * K <= GS_PAR_WORK && tasks > 1 && tasks * GS_BLOCK * K * (C + 4) > GS_PAR_WORK) {
    if (nt > tasks) nt = (int)tasks;
    GS_(GsScratch) *sc = GS_(gs_scratch_n)(g, false, nt);
    if (!sc) return -1;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t task = 0; task < tasks; task++) {
      GS_(GsScratch) *s = &sc[omp_get_thread_num()];
      int64_t n = task / nb, p0 = task % nb * GS_BLOCK, np = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;
      GS_(gs_tables_fwd)(g, grid + (n * P + p0) * nsp, np, s->off, s->in, s->w, s->cub);
      GS_(gs_forward_block)(g, x, y, s, n, p0, np, 0, C);
    }
    GS_(gs_scratch_free_n)(sc, nt);
    return 0;
  }
  GS_(GsScratch) s;
  if (GS_(gs_scratch)(g, false, &s) < 0) return -1;
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t p0 = 0; p0 < P; p0 += GS_BLOCK) {
      int64_t np = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;
      GS_(gs_tables_fwd)(g, grid + (n * P + p0) * nsp, np, s.off, s.in, s.w, s.cub);
#pragma omp parallel for if (C * np * K > GS_PAR_WORK)
      for (int64_t c = 0; c < C; c++) GS_(gs_forward_block)(g, x, y, &s, n, p0, np, c, c + 1);
    }
  GS_(gs_scratch_free)(&s);
  return 0;
}

/* one block's share of the backward: points [p0, p0 + np) of batch item n into gi's planes and gg's
 * points (either NULL when not wanted); par splits its channels / point chunks across the threads */
static void GS_(gs_backward_block)(const GsGeom *g, const T *go, const T *x, const T *grid, T *gi, T *gg,
                                   bool grid_grads, const GS_(GsScratch) *s, int64_t n, int64_t p0, int64_t np,
                                   bool par) {
  const int K = g->K, nsp = g->nsp;
  const int64_t C = g->C, P = g->P, Q = g->Q;
  GS_(gs_tables)(g, grid + (n * P + p0) * nsp, np, s->off, s->in, s->w, s->dw, s->mult, s->cub);
  const int64_t *off = s->off;
  const int32_t *in = s->in;
  const T *w = s->w, *dw = s->dw, *mult = s->mult;
  if (gi) {
    /* one plane per thread: each plane's sums run in point order */
#pragma omp parallel for if (par)
    for (int64_t c = 0; c < C; c++) {
      T *pl = gi + (n * C + c) * Q;
      const T *gop = go + (n * C + c) * P + p0;
      for (int64_t i = 0; i < np; i++)
        for (int k = 0; k < K; k++) {
          int64_t j = (int64_t)k * GS_BLOCK + i;
          if (in[j]) pl[off[j]] += gop[i] * w[j];
        }
    }
  }
  if (grid_grads) {
    /* chunks of points per thread; within one, channel-major (unit-stride reads of grad_output),
     * each point's sums over channels and corners in one fixed order */
#pragma omp parallel for if (par)
    for (int64_t i0 = 0; i0 < np; i0 += GS_CHUNK) {
      int64_t i1 = i0 + GS_CHUNK < np ? i0 + GS_CHUNK : np;
      T acc[3][GS_CHUNK];
      for (int d = 0; d < nsp; d++)
        for (int64_t i = i0; i < i1; i++) acc[d][i - i0] = 0;
      for (int64_t c = 0; c < C; c++) {
        const T *pl = x + (n * C + c) * Q, *gop = go + (n * C + c) * P + p0;
        for (int64_t i = i0; i < i1; i++) {
          T gv = gop[i];
          for (int k = 0; k < K; k++) {
            int64_t j = (int64_t)k * GS_BLOCK + i;
            if (!in[j]) continue;
            T v = pl[off[j]] * gv;
            for (int d = 0; d < nsp; d++) acc[d][i - i0] += v * dw[j * nsp + d];
          }
        }
      }
      for (int64_t i = i0; i < i1; i++) {
        T *out = gg + (n * P + p0 + i) * nsp;
        for (int d = 0; d < nsp; d++) out[d] = acc[d][i - i0] * mult[i * nsp + d];
      }
    }
  }
}

/* gi (grad_input) and gg (grad_grid), either NULL when not wanted, start zeroed */
static int GS_(gs_backward)(const GsGeom *g, const char *god, const char *xd, const char *gd, char *gid,
                            char *ggd) {
  const T *go = (const T *)god, *x = (const T *)xd, *grid = (const T *)gd;
  T *gi = (T *)gid, *gg = (T *)ggd;
  int K = g->K;
  int64_t C = g->C, P = g->P;
  /* nearest sampling's grid gradient is zero */
  bool grid_grads = gg && g->mode != GS_NEAREST;
  if (g->N == 0 || C == 0 || P == 0 || (!gi && !grid_grads)) return 0;
  int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  /* Few channels (see gs_forward): the threads take whole batch items, whose grad_input planes no
   * other item touches, each summed in the serial order */
  if (nt > 1 && C * GS_BLOCK * K <= GS_PAR_WORK && g->N > 1 && g->N * P * K * (C + 4) > GS_PAR_WORK) {
    if (nt > g->N) nt = (int)g->N;
    GS_(GsScratch) *sc = GS_(gs_scratch_n)(g, grid_grads, nt);
    if (!sc) return -1;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t n = 0; n < g->N; n++)
      for (int64_t p0 = 0; p0 < P; p0 += GS_BLOCK)
        GS_(gs_backward_block)(g, go, x, grid, gi, gg, grid_grads, &sc[omp_get_thread_num()], n, p0,
                               P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK, false);
    GS_(gs_scratch_free_n)(sc, nt);
    return 0;
  }
  GS_(GsScratch) s;
  if (GS_(gs_scratch)(g, grid_grads, &s) < 0) return -1;
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t p0 = 0; p0 < P; p0 += GS_BLOCK) {
      int64_t np = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;
      GS_(gs_backward_block)(g, go, x, grid, gi, gg, grid_grads, &s, n, p0, np, C * np * K > GS_PAR_WORK);
    }
  GS_(gs_scratch_free)(&s);
  return 0;
}

#undef T
#endif
