/* Fused LSTM/GRU cells: argument checks, contiguous operands, output
 * allocation, and the per-dtype kernel (TH/generic/THTensorRNN.c). */
#include "ATRNN.h"
#include "../TH/THKernelsRNN.h"

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
