/* Fused LSTM/GRU cells: argument checks, contiguous operands, output
 * allocation, and the per-dtype kernel (TH/generic/THTensorRNN.c). */
#include "ATRNN.h"
#include "../TH/THKernelsRNN.h"
#include "../TH/THGemmPacked.h"
#include "../TH/THTranspose.h"
#include "../TH/THVecRNN.h"

#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* The kernels thread themselves only past 16384 cells; a recurrent layer's
 * steps (32 x 256 cells) are smaller, yet between two threaded per-step GEMMs
 * one thread doing the gate math alone is a serial part of every step. From
 * ROWS_SPLIT_CELLS cells the rows are split here across cthtorch's threads. */
#define ROWS_SPLIT_CELLS 4096

static int row_threads(int64_t B, int64_t H) {
  int nt = omp_in_parallel() ? 1 : at_get_num_threads();
  if (B * H < ROWS_SPLIT_CELLS || B < 2 || nt < 2) return 1;
  return B < nt ? (int)B : nt;
}

/* rows [lo, hi) of the nt-way split of B rows */
#define ROW_RANGE(t, nt, B, lo, n) \
  int64_t lo = (B) * (t) / (nt), n = (B) * ((t) + 1) / (nt) - lo
/* base + row lo of a (B, w * H) operand of element size es (NULL stays NULL) */
static const void *rowc(const void *base, int64_t lo, int w, int64_t H, size_t es) {
  return base ? (const char *)base + (size_t)(lo * w * H) * es : NULL;
}
static void *row(void *base, int64_t lo, int w, int64_t H, size_t es) {
  return base ? (char *)base + (size_t)(lo * w * H) * es : NULL;
}

typedef void (*lstm_fwd_fn)(int64_t, int64_t, const void *, const void *, void *, void *, void *);
typedef void (*lstm_bwd_fn)(int64_t, int64_t, const void *, const void *, const void *, const void *, const void *,
                            const void *, void *, void *);
typedef void (*gru_fwd_fn)(int64_t, int64_t, const void *, const void *, const void *, void *, void *);
typedef void (*gru_bwd_fn)(int64_t, int64_t, const void *, const void *, const void *, const void *, void *, void *,
                           void *);

#define RNN_TABLE(N) { [TH_Half] = THHalfTensor_##N, [TH_BFloat16] = THBFloat16Tensor_##N, \
                       [TH_Float] = THFloatTensor_##N, [TH_Double] = THDoubleTensor_##N }
static const lstm_fwd_fn lstm_fwd[TH_NDTYPES] = RNN_TABLE(lstm_cell_forward);
static const lstm_bwd_fn lstm_bwd[TH_NDTYPES] = RNN_TABLE(lstm_cell_backward);
static const gru_fwd_fn gru_fwd[TH_NDTYPES] = RNN_TABLE(gru_cell_forward);
static const gru_bwd_fn gru_bwd[TH_NDTYPES] = RNN_TABLE(gru_cell_backward);

/* The operands of one cell call, made contiguous; t[k] NULL for an absent
 * optional operand. Every operand must be (B, width[k] * H) of one floating
 * dtype. */
typedef struct { THTensor *t[6]; int n; } Operands;

static void operands_free(Operands *o) {
  for (int k = 0; k < o->n; k++) THTensor_free(o->t[k]);
  memset(o, 0, sizeof *o);
}

static int operands_take(Operands *o, const char *op, const THTensor *const *in, const char *const *names,
                         const int *width, int n, int64_t *B, int64_t *H) {
  memset(o, 0, sizeof *o);
  o->n = n;
  const THTensor *first = NULL;
  for (int k = 0; k < n; k++) {
    if (!in[k]) continue;
    if (!first) {
      first = in[k];
      if (first->ndim != 2 || first->sizes[1] % width[k]) {
        THError_set(TH_ERR_RUNTIME, "%s: %s must be 2-D with a multiple of %d columns, got %d-D", op, names[k],
                    width[k], first->ndim);
        return -1;
      }
      if (!THDtype_isFloating(first->dtype)) {
        THError_set(TH_ERR_RUNTIME, "%s: expected a floating point tensor, got %s", op,
                    THDtype_info[first->dtype].name);
        return -1;
      }
      *B = first->sizes[0];
      *H = first->sizes[1] / width[k];
    }
    if (in[k]->dtype != first->dtype) {
      THError_set(TH_ERR_RUNTIME, "%s: expected %s to have dtype %s, got %s", op, names[k],
                  THDtype_info[first->dtype].name, THDtype_info[in[k]->dtype].name);
      goto fail;
    }
    if (in[k]->ndim != 2 || in[k]->sizes[0] != *B || in[k]->sizes[1] != width[k] * *H) {
      THError_set(TH_ERR_RUNTIME, "%s: expected %s of size [%lld, %lld]", op, names[k], (long long)*B,
                  (long long)(width[k] * *H));
      goto fail;
    }
    if (!(o->t[k] = at_contiguous(in[k]))) goto fail;
  }
  return 0;
fail:
  operands_free(o);
  return -1;
}

static void *data_or_null(const THTensor *t) { return t ? THTensor_data(t) : NULL; }

/* An absent state gradient (an output nobody used) as zeros of (B, H): the
 * kernels read the state gradients unconditionally, so their loops vectorize. */
static int zeros_if_absent(Operands *o, int k, THDtype dt, int64_t B, int64_t H) {
  if (o->t[k]) return 0;
  int64_t s[2] = { B, H };
  if (!(o->t[k] = THTensor_new(dt, 2, s))) return -1;
  memset(THTensor_data(o->t[k]), 0, (size_t)(B * H) * THDtype_size(dt));
  return 0;
}

/* Allocates n outputs of (B, width[k] * H); all or none. */
static int alloc_outs(THTensor **outs, int n, const int *width, THDtype dt, int64_t B, int64_t H) {
  for (int k = 0; k < n; k++) {
    int64_t s[2] = { B, width[k] * H };
    if (!(outs[k] = THTensor_new(dt, 2, s))) {
      for (int j = 0; j < k; j++) { THTensor_free(outs[j]); outs[j] = NULL; }
      return -1;
    }
  }
  return 0;
}

int at_fused_lstm_cell(THTensor **outs, const THTensor *gates, const THTensor *cx) {
  static const char *names[] = { "gates", "cx" };
  static const int width[] = { 4, 1 }, out_width[] = { 1, 1, 4 };
  const THTensor *in[] = { gates, cx };
  Operands o;
  int64_t B = 0, H = 0;
  if (operands_take(&o, "_fused_lstm_cell", in, names, width, 2, &B, &H) < 0) return -1;
  int rc = alloc_outs(outs, 3, out_width, gates->dtype, B, H);
  if (rc == 0) {
    int nt = row_threads(B, H);
    size_t es = THDtype_size(gates->dtype);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int t = 0; t < nt; t++) {
      ROW_RANGE(t, nt, B, lo, n);
      lstm_fwd[gates->dtype](n, H, rowc(THTensor_data(o.t[0]), lo, 4, H, es), rowc(THTensor_data(o.t[1]), lo, 1, H, es),
                             row(THTensor_data(outs[0]), lo, 1, H, es), row(THTensor_data(outs[1]), lo, 1, H, es),
                             row(THTensor_data(outs[2]), lo, 4, H, es));
    }
  }
  operands_free(&o);
  return rc;
}

int at_fused_lstm_cell_backward(THTensor **outs, const THTensor *grad_hy, const THTensor *grad_cy,
                                const THTensor *grad_workspace, const THTensor *cx, const THTensor *cy,
                                const THTensor *workspace) {
  static const char *names[] = { "workspace", "cx", "cy", "grad_hy", "grad_cy", "grad_workspace" };
  static const int width[] = { 4, 1, 1, 1, 1, 4 }, out_width[] = { 4, 1 };
  const THTensor *in[] = { workspace, cx, cy, grad_hy, grad_cy, grad_workspace };
  Operands o;
  int64_t B = 0, H = 0;
  if (operands_take(&o, "_fused_lstm_cell_backward", in, names, width, 6, &B, &H) < 0) return -1;
  int rc = -1;
  if (zeros_if_absent(&o, 3, workspace->dtype, B, H) == 0 && zeros_if_absent(&o, 4, workspace->dtype, B, H) == 0)
    rc = alloc_outs(outs, 2, out_width, workspace->dtype, B, H);
  if (rc == 0) {
    int nt = row_threads(B, H);
    size_t es = THDtype_size(workspace->dtype);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int t = 0; t < nt; t++) {
      ROW_RANGE(t, nt, B, lo, n);
      lstm_bwd[workspace->dtype](n, H, rowc(THTensor_data(o.t[3]), lo, 1, H, es), rowc(THTensor_data(o.t[4]), lo, 1, H, es),
                                 rowc(data_or_null(o.t[5]), lo, 4, H, es), rowc(THTensor_data(o.t[1]), lo, 1, H, es),
                                 rowc(THTensor_data(o.t[2]), lo, 1, H, es), rowc(THTensor_data(o.t[0]), lo, 4, H, es),
                                 row(THTensor_data(outs[0]), lo, 4, H, es), row(THTensor_data(outs[1]), lo, 1, H, es));
    }
  }
  operands_free(&o);
  return rc;
}

int at_fused_gru_cell(THTensor **outs, const THTensor *input_gates, const THTensor *hidden_gates,
                      const THTensor *hx) {
  static const char *names[] = { "input_gates", "hidden_gates", "hx" };
  static const int width[] = { 3, 3, 1 }, out_width[] = { 1, 4 };
  const THTensor *in[] = { input_gates, hidden_gates, hx };
  Operands o;
  int64_t B = 0, H = 0;
  if (operands_take(&o, "_fused_gru_cell", in, names, width, 3, &B, &H) < 0) return -1;
  int rc = alloc_outs(outs, 2, out_width, input_gates->dtype, B, H);
  if (rc == 0) {
    int nt = row_threads(B, H);
    size_t es = THDtype_size(input_gates->dtype);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int t = 0; t < nt; t++) {
      ROW_RANGE(t, nt, B, lo, n);
      gru_fwd[input_gates->dtype](n, H, rowc(THTensor_data(o.t[0]), lo, 3, H, es), rowc(THTensor_data(o.t[1]), lo, 3, H, es),
                                  rowc(THTensor_data(o.t[2]), lo, 1, H, es), row(THTensor_data(outs[0]), lo, 1, H, es),
                                  row(THTensor_data(outs[1]), lo, 4, H, es));
    }
  }
  operands_free(&o);
  return rc;
}

int at_fused_gru_cell_backward(THTensor **outs, const THTensor *grad_hy, const THTensor *grad_workspace,
                               const THTensor *hx, const THTensor *workspace) {
  static const char *names[] = { "workspace", "hx", "grad_hy", "grad_workspace" };
  static const int width[] = { 4, 1, 1, 4 }, out_width[] = { 3, 3, 1 };
  const THTensor *in[] = { workspace, hx, grad_hy, grad_workspace };
  Operands o;
  int64_t B = 0, H = 0;
  if (operands_take(&o, "_fused_gru_cell_backward", in, names, width, 4, &B, &H) < 0) return -1;
  int rc = -1;
  if (zeros_if_absent(&o, 2, workspace->dtype, B, H) == 0) rc = alloc_outs(outs, 3, out_width, workspace->dtype, B, H);
  if (rc == 0) {
    int nt = row_threads(B, H);
    size_t es = THDtype_size(workspace->dtype);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int t = 0; t < nt; t++) {
      ROW_RANGE(t, nt, B, lo, n);
      gru_bwd[workspace->dtype](n, H, rowc(THTensor_data(o.t[2]), lo, 1, H, es), rowc(data_or_null(o.t[3]), lo, 4, H, es),
                                rowc(THTensor_data(o.t[1]), lo, 1, H, es), rowc(THTensor_data(o.t[0]), lo, 4, H, es),
                                row(THTensor_data(outs[0]), lo, 3, H, es), row(THTensor_data(outs[1]), lo, 3, H, es),
                                row(THTensor_data(outs[2]), lo, 1, H, es));
    }
  }
  operands_free(&o);
  return rc;
}

/* ---- a float32 LSTM layer's steps in one call (the recurrence of _FusedLayer) ---- */

/* the fused cell over B rows, split as the single-cell ops split them; bias (4H, or NULL) is added to the
 * gates as the cell reads them (the step's GEMM left them in cache), and tc receives tanh(cy) for the backward */
static void lstm_fwd_rows(int64_t B, int64_t H, float *gates, const float *bias, const float *cx, float *hy, float *cy,
                          float *ws, float *tc) {
  int nt = row_threads(B, H);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int t = 0; t < nt; t++) {
    ROW_RANGE(t, nt, B, lo, n);
    float *g = gates + lo * 4 * H, *c1 = cy + lo * H, *t1 = tc + lo * H;
    if (th_vec_lstm_cell_forward(n, H, g, bias, cx + lo * H, hy + lo * H, c1, ws + lo * 4 * H, t1)) continue;
    /* no AVX2: the generic cell (whose backward computes tanh(cy) itself) */
    if (bias)
      for (int64_t b = 0; b < n; b++)
        for (int64_t j = 0; j < 4 * H; j++) g[b * 4 * H + j] += bias[j];
    THFloatTensor_lstm_cell_forward(n, H, g, cx + lo * H, hy + lo * H, c1, ws + lo * 4 * H);
    for (int64_t i = 0; i < n * H; i++) t1[i] = tanhf(c1[i]);
  }
}

/* the fused backward cell over B rows, split as the single-cell ops split them; then, all rows done, each
 * thread adds the step's dgates into its own columns of the bias gradient db, row by row, so every db[j]
 * sums in one order (steps as they run, rows ascending) whatever the thread count */
static void lstm_bwd_rows(int64_t B, int64_t H, const float *ghy, const float *gcy, const float *cx, const float *cy,
                          const float *tc, const float *ws, float *dgates, float *dcx, float *db) {
  int nt = row_threads(B, H);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int t = omp_get_thread_num(), n_t = omp_get_num_threads();
    ROW_RANGE(t, n_t, B, lo, n);
    if (!th_vec_lstm_cell_backward(n, H, ghy + lo * H, gcy + lo * H, cx + lo * H, cy + lo * H, tc + lo * H,
                                   ws + lo * 4 * H, dgates + lo * 4 * H, dcx + lo * H))
      THFloatTensor_lstm_cell_backward(n, H, ghy + lo * H, gcy + lo * H, NULL, cx + lo * H, cy + lo * H,
                                       ws + lo * 4 * H, dgates + lo * 4 * H, dcx + lo * H);
#pragma omp barrier
    int64_t j0 = 4 * H * t / n_t, j1 = 4 * H * (t + 1) / n_t;
    for (int64_t b = 0; b < B; b++) {
      const float *d = dgates + b * 4 * H;
      for (int64_t j = j0; j < j1; j++) db[j] += d[j];
    }
  }
}

static int layer_check(const char *op, const char *name, const THTensor *t, int ndim, const int64_t *sizes) {
  if (t->dtype != TH_Float || THTensor_device(t) >= 0 || t->ndim != ndim || !THTensor_isContiguous(t)) {
    THError_set(TH_ERR_RUNTIME, "%s: expected %s to be a contiguous %d-D float32 CPU tensor", op, name, ndim);
    return -1;
  }
  for (int d = 0; d < ndim; d++)
    if (t->sizes[d] != sizes[d]) {
      THError_set(TH_ERR_RUNTIME, "%s: %s has the wrong size at dimension %d: %lld, expected %lld", op, name, d,
                  (long long)t->sizes[d], (long long)sizes[d]);
      return -1;
    }
  return 0;
}

static int packed_check(const char *op, const THTensor *p, int64_t K, int64_t N) {
  int64_t s[3] = { (N + THGEMM_NR - 1) / THGEMM_NR, K, THGEMM_NR };
  return layer_check(op, "packed", p, 3, s);
}

static bool all_zero(const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (x[i] != 0.f) return false;
  return true;
}

int at_lstm_layer_forward(THTensor **outs, THTensor *gates, const THTensor *h0, const THTensor *c0,
                          const THTensor *packed, const THTensor *bias, bool reverse) {
  const char *op = "_lstm_layer_forward";
  if (gates->ndim != 3 || gates->sizes[2] % 4) {
    THError_set(TH_ERR_RUNTIME, "%s: expected gates of size [T, B, 4 * H]", op);
    return -1;
  }
  int64_t T = gates->sizes[0], B = gates->sizes[1], H = gates->sizes[2] / 4, bh[2] = { B, H };
  if (T < 1) {
    THError_set(TH_ERR_RUNTIME, "%s: expected at least one step", op);
    return -1;
  }
  if (layer_check(op, "gates", gates, 3, gates->sizes) < 0 || layer_check(op, "h0", h0, 2, bh) < 0 ||
      layer_check(op, "c0", c0, 2, bh) < 0 || packed_check(op, packed, H, 4 * H) < 0 ||
      (bias && layer_check(op, "bias", bias, 1, gates->sizes + 2) < 0))
    return -1;
  int64_t s[3] = { T, B, H };
  /* the outputs, the cell states and their tanh (which the backward reads instead of computing again) */
  for (int k = 0; k < 3; k++)
    if (!(outs[k] = THTensor_new(TH_Float, 3, s))) {
      for (int j = 0; j < k; j++) { THTensor_free(outs[j]); outs[j] = NULL; }
      return -1;
    }
  float *g = (float *)THTensor_data(gates), *out = (float *)THTensor_data(outs[0]);
  float *cs = (float *)THTensor_data(outs[1]), *tcs = (float *)THTensor_data(outs[2]);
  const float *h = (const float *)THTensor_data(h0), *c = (const float *)THTensor_data(c0);
  const float *wp = (const float *)THTensor_data(packed);
  int nt = omp_in_parallel() ? 1 : at_get_num_threads();
  /* a zero initial state (hx=None) adds nothing to the first step's gates: no GEMM for it */
  bool skip = all_zero(h, B * H);
  for (int64_t k = 0; k < T; k++) {
    int64_t t = reverse ? T - 1 - k : k;
    float *gt = g + t * B * 4 * H;
    if (k > 0 || !skip) THGemmPacked_run(B, 4 * H, H, 1.f, h, H, wp, 1.f, gt, 4 * H, nt);
    /* the activated gates (the backward's workspace) overwrite the pre-activations they come from */
    lstm_fwd_rows(B, H, gt, bias ? (const float *)THTensor_data(bias) : NULL, c, out + t * B * H, cs + t * B * H, gt,
                  tcs + t * B * H);
    h = out + t * B * H;
    c = cs + t * B * H;
  }
  return 0;
}

int at_lstm_layer_backward(THTensor **outs, const THTensor *dout, const THTensor *dh, const THTensor *dc,
                           const THTensor *ws, const THTensor *cs, const THTensor *tcs, const THTensor *c0,
                           const THTensor *packed, const THTensor *packed_ih, int64_t input_size, bool reverse,
                           bool need_h0) {
  const char *op = "_lstm_layer_backward";
  if (ws->ndim != 3 || ws->sizes[2] % 4) {
    THError_set(TH_ERR_RUNTIME, "%s: expected workspace of size [T, B, 4 * H]", op);
    return -1;
  }
  int64_t T = ws->sizes[0], B = ws->sizes[1], H = ws->sizes[2] / 4, bh[2] = { B, H }, tbh[3] = { T, B, H };
  if (T < 1) {   /* the first step's gradient is read below */
    THError_set(TH_ERR_RUNTIME, "%s: expected at least one step", op);
    return -1;
  }
  if (layer_check(op, "workspace", ws, 3, ws->sizes) < 0 || layer_check(op, "grad_output", dout, 3, tbh) < 0 ||
      layer_check(op, "cs", cs, 3, tbh) < 0 || layer_check(op, "tanh_cs", tcs, 3, tbh) < 0 ||
      layer_check(op, "c0", c0, 2, bh) < 0 ||
      (dh && layer_check(op, "grad_hy", dh, 2, bh) < 0) || (dc && layer_check(op, "grad_cy", dc, 2, bh) < 0) ||
      packed_check(op, packed, 4 * H, H) < 0)
    return -1;
  if (packed_ih && input_size < 1) {
    THError_set(TH_ERR_RUNTIME, "%s: expected input_size >= 1 with packed_ih, got %lld", op, (long long)input_size);
    return -1;
  }
  if (packed_ih && packed_check(op, packed_ih, 4 * H, input_size) < 0) return -1;
  /* G holds all steps' dgates; with W_ih packed, each step's dgates @ W_ih is also its rows of dx, taken
   * while they are in cache. The weight gradients read G^T (GT), one transpose of all steps at the end: it
   * measured faster than each step writing its columns of GT (strided stores of lines long evicted), and
   * than OpenBLAS reading G through its transpose flag */
  int64_t four_h = 4 * H, dxs[3] = { T, B, input_size }, gts[2] = { 4 * H, T * B };
  THTensor *G = THTensor_new(TH_Float, 3, ws->sizes), *GT = THTensor_new(TH_Float, 2, gts);
  THTensor *dX = packed_ih ? THTensor_new(TH_Float, 3, dxs) : NULL;
  THTensor *dht = THTensor_new(TH_Float, 2, bh), *dct = THTensor_new(TH_Float, 2, bh),
           *db = THTensor_new(TH_Float, 1, &four_h);
  if (!G || !GT || (packed_ih && !dX) || !dht || !dct || !db) {
    THTensor_free(G); THTensor_free(GT); THTensor_free(dht); THTensor_free(dct); THTensor_free(db);
    THTensor_free(dX);
    return -1;
  }
  float *g = (float *)THTensor_data(G), *dhb = (float *)THTensor_data(dht), *dcb = (float *)THTensor_data(dct);
  float *dbp = (float *)THTensor_data(db);
  const float *go = (const float *)THTensor_data(dout), *w = (const float *)THTensor_data(ws);
  const float *c = (const float *)THTensor_data(cs), *wp = (const float *)THTensor_data(packed);
  const float *tc = (const float *)THTensor_data(tcs);
  const float *wpi = packed_ih ? (const float *)THTensor_data(packed_ih) : NULL;
  float *dx = dX ? (float *)THTensor_data(dX) : NULL;
  int nt = omp_in_parallel() ? 1 : at_get_num_threads();
  size_t row = (size_t)(B * H);
  /* the steps run in the forward's order reversed; "first" is the forward's first step */
  int64_t first = reverse ? T - 1 : 0, t0 = reverse ? 0 : T - 1;
  memcpy(dhb, go + t0 * row, row * sizeof(float));
  if (dh) {
    const float *d = (const float *)THTensor_data(dh);
    for (size_t i = 0; i < row; i++) dhb[i] += d[i];
  }
  if (dc) memcpy(dcb, THTensor_data(dc), row * sizeof(float));
  else memset(dcb, 0, row * sizeof(float));
  if (four_h) memset(dbp, 0, (size_t)four_h * sizeof(float));   /* no memset of an empty tensor's NULL data */
  bool dh0 = false;
  for (int64_t k = 0; k < T; k++) {
    int64_t t = reverse ? k : T - 1 - k, p = reverse ? t + 1 : t - 1;
    const float *cx = t == first ? (const float *)THTensor_data(c0) : c + p * row;
    float *gt = g + t * row * 4;
    /* dc is read and overwritten in place (each element by its own lane) */
    lstm_bwd_rows(B, H, dhb, dcb, cx, c + t * row, tc + t * row, w + t * row * 4, gt, dcb, dbp);
    if (dx) THGemmPacked_run(B, input_size, 4 * H, 1.f, gt, 4 * H, wpi, 0.f, dx + t * B * input_size, input_size, nt);
    if (t != first) {   /* the next step's dh: its output's gradient plus dgates @ W_hh */
      memcpy(dhb, go + p * row, row * sizeof(float));
      THGemmPacked_run(B, H, 4 * H, 1.f, gt, 4 * H, wp, 1.f, dhb, H, nt);
    } else if (need_h0) {
      THGemmPacked_run(B, H, 4 * H, 1.f, gt, 4 * H, wp, 0.f, dhb, H, nt);
      dh0 = true;
    }
  }
  if (!dh0) memset(dhb, 0, row * sizeof(float));   /* not asked for: zeros, never a stale step's dh */
  /* each thread transposes its own rows of G into its own columns of GT */
  float *gT = (float *)THTensor_data(GT);
  int64_t TB = T * B;
  int tn = nt > 1 && 4 * H * TB >= (1 << 16) ? nt : 1;
#pragma omp parallel for num_threads(tn) if (tn > 1) schedule(static)
  for (int i = 0; i < tn; i++) {
    ROW_RANGE(i, tn, TB, lo, n);
    THTranspose_f32(n, 4 * H, g + lo * 4 * H, 4 * H, gT + lo, TB);
  }
  if (dX) THTensor_free(G);
  outs[0] = dX ? dX : G;
  outs[1] = dht;
  outs[2] = dct;
  outs[3] = GT;
  outs[4] = db;
  return 0;
}
