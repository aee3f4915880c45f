/* Fused scaled dot-product attention (see ATAttention.h): the layout checks
 * and threading, then (the file's second pass, at its end) the kernels. */
#ifndef AT_ATTENTION_KERNELS
#define AT_ATTENTION_KERNELS
#include "ATAttention.h"
#include "ATBlas.h"
#include "../TH/THMath.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef enum { ATTN_MASK_NONE, ATTN_MASK_BOOL, ATTN_MASK_FLOAT } AttnMaskKind;
/* the mask read through broadcast strides (0 on broadcast dims), in elements of es bytes */
typedef struct { AttnMaskKind kind; const char *p; int64_t es, sb, sh, si, sj; } AttnMask;
/* sizes and element strides of q, k, v (qh = 0 for 3-d inputs); every last dim has stride 1 */
typedef struct {
  int64_t B, Hq, Hk, L, S, E, Ev;
  const void *q, *k, *v;
  int64_t qb, qh, ql, kb, kh, kl, vb, vh, vl;
  double scale, p;
  uint64_t seed;
  bool causal;
  AttnMask mask;
} AttnGeo;

/* query rows per block: the scores of a block (ROWS x S) stay in L2 */
#define ROWS 64

/* dropout's keep decision for score (b, h, i, j): splitmix64 of its position and the seed */
static inline bool attn_keep(const AttnGeo *g, int64_t b, int64_t h, int64_t i, int64_t j) {
  uint64_t x = g->seed + ((((uint64_t)(b * g->Hq + h) * (uint64_t)g->L + (uint64_t)i) * (uint64_t)g->S + (uint64_t)j) + 1)
                             * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return (double)(x >> 11) * 0x1.0p-53 >= g->p;
}


#define T float
#define SFX f32
#define DBL false
#include "ATAttention.c"
#undef T
#undef SFX
#undef DBL
#define T double
#define SFX f64
#define DBL true
#include "ATAttention.c"
#undef T
#undef SFX
#undef DBL

/* t with a unit last stride and a row stride GEMM accepts (a copy when needed); a new reference */
static THTensor *gemm_ready(const THTensor *t) {
  int n = t->ndim;
  int64_t rows = t->sizes[n - 2], cols = t->sizes[n - 1];
  bool ok = (t->strides[n - 1] == 1 || cols <= 1) && (rows <= 1 || t->strides[n - 2] >= (cols > 1 ? cols : 1));
  return ok ? THTensor_retain((THTensor *)t) : at_contiguous(t);
}

/* a new tensor of the given sizes laid out in like's dimension order (its dims sorted by stride, the last
 * dim kept innermost): MHA's q, k, v are (N, H, L, D) views of (L, N, H*D) projections, and an output or
 * gradient in that order makes the (L, N, E) view MHA takes back a view instead of a copy */
static THTensor *new_in_order(THDtype dtype, int n, const int64_t *sizes, const THTensor *like) {
  int order[4], m = 0;
  for (int d = 0; d < n - 1; d++) {   /* insertion sort by stride, descending; ties keep logical order */
    int j = m++;
    while (j > 0 && like->strides[order[j - 1]] < like->strides[d]) { order[j] = order[j - 1]; j--; }
    order[j] = d;
  }
  order[m] = n - 1;
  int64_t st[4], acc = 1;
  for (int i = n - 1; i >= 0; i--) {
    st[order[i]] = acc;
    acc *= sizes[order[i]] > 1 ? sizes[order[i]] : 1;
  }
  return THTensor_newStrided(dtype, n, sizes, st);
}

/* batch, head and row strides of a 3-d or 4-d tensor (head 0 for 3-d) */
static void bhl_strides(const THTensor *t, int64_t *s) {
  int n = t->ndim;
  s[0] = t->strides[0]; s[1] = n == 4 ? t->strides[1] : 0; s[2] = t->strides[n - 2];
}

/* row stride for GEMM: a single row's stride can be anything, GEMM wants >= cols */
static int64_t row_stride(const THTensor *t) {
  int n = t->ndim;
  int64_t cols = t->sizes[n - 1] > 1 ? t->sizes[n - 1] : 1;
  return t->sizes[n - 2] <= 1 ? cols : t->strides[n - 2];
}

/* checks q, k, v and the mask, fills g; holders get the (possibly copied) q, k, v */
static int geo_init(AttnGeo *g, const THTensor *q, const THTensor *k, const THTensor *v, const THTensor *mask,
                    double dropout_p, bool is_causal, double scale, int64_t seed, THTensor **hold) {
  int n = q->ndim;
  if ((n != 3 && n != 4) || k->ndim != n || v->ndim != n) {
    THError_set(TH_ERR_RUNTIME, "scaled_dot_product_attention: expected 3-d or 4-d query, key and value of the "
                "same rank, got %d-d, %d-d and %d-d", q->ndim, k->ndim, v->ndim);
    return -1;
  }
  if (q->dtype != k->dtype || q->dtype != v->dtype || (q->dtype != TH_Float && q->dtype != TH_Double)) {
    THError_set(TH_ERR_RUNTIME, "Expected query, key, and value to have the same dtype, but got query.dtype: %s "
                "key.dtype: %s and value.dtype: %s instead.", THDtype_info[q->dtype].name,
                THDtype_info[k->dtype].name, THDtype_info[v->dtype].name);
    return -1;
  }
  g->B = q->sizes[0];
  g->Hq = n == 4 ? q->sizes[1] : 1;
  g->Hk = n == 4 ? k->sizes[1] : 1;
  g->L = q->sizes[n - 2];
  g->S = k->sizes[n - 2];
  g->E = q->sizes[n - 1];
  g->Ev = v->sizes[n - 1];
  if (k->sizes[0] != g->B || v->sizes[0] != g->B || (n == 4 && v->sizes[1] != g->Hk) || k->sizes[n - 1] != g->E ||
      v->sizes[n - 2] != g->S || g->Hk == 0 || g->Hq % g->Hk) {
    THError_set(TH_ERR_RUNTIME, "scaled_dot_product_attention: query, key and value shapes do not match "
                "(batch, heads, length and head size)");
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    const THTensor *t = i == 0 ? q : i == 1 ? k : v;
    if (!(hold[i] = gemm_ready(t))) return -1;
  }
  const THTensor *qq = hold[0], *kk = hold[1], *vv = hold[2];
  g->q = THTensor_data(qq); g->k = THTensor_data(kk); g->v = THTensor_data(vv);
  g->qb = qq->strides[0]; g->qh = n == 4 ? qq->strides[1] : 0; g->ql = row_stride(qq);
  g->kb = kk->strides[0]; g->kh = n == 4 ? kk->strides[1] : 0; g->kl = row_stride(kk);
  g->vb = vv->strides[0]; g->vh = n == 4 ? vv->strides[1] : 0; g->vl = row_stride(vv);
  g->scale = scale; g->p = dropout_p; g->seed = (uint64_t)seed; g->causal = is_causal;
  g->mask = (AttnMask){ .kind = ATTN_MASK_NONE };
  if (mask) {
    if (mask->dtype != TH_Bool && mask->dtype != q->dtype) {
      THError_set(TH_ERR_RUNTIME, "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                  "attn_mask.dtype: %s and  query.dtype: %s instead.", THDtype_info[mask->dtype].name,
                  THDtype_info[q->dtype].name);
      return -1;
    }
    /* right-align the mask against (B, [Hq,] L, S) */
    int64_t want[4] = { g->B, g->Hq, g->L, g->S }, st[4] = { 0, 0, 0, 0 };
    const int64_t *wsz = n == 4 ? want : (int64_t[]){ g->B, g->L, g->S };
    int slot4[4] = { 0, 1, 2, 3 }, slot3[3] = { 0, 2, 3 };
    const int *slot = n == 4 ? slot4 : slot3;
    if (mask->ndim > n) goto bad;
    for (int i = 0; i < mask->ndim; i++) {
      int d = n - mask->ndim + i;
      int64_t ms = mask->sizes[i];
      if (ms != wsz[d] && ms != 1) goto bad;
      st[slot[d]] = ms == 1 ? 0 : mask->strides[i];
    }
    g->mask = (AttnMask){ .kind = mask->dtype == TH_Bool ? ATTN_MASK_BOOL : ATTN_MASK_FLOAT, .p = THTensor_data(mask),
                          .es = THDtype_size(mask->dtype), .sb = st[0], .sh = st[1], .si = st[2], .sj = st[3] };
  }
  return 0;
bad:
  THError_set(TH_ERR_RUNTIME, "scaled_dot_product_attention: attn_mask cannot be broadcast to the "
              "attention scores (..., %lld, %lld)", (long long)g->L, (long long)g->S);
  return -1;
}

/* tasks run on OpenMP threads when there are several and the work is worth it; a lone task
 * leaves the threads to at_gemm */
static bool worth_threads(const AttnGeo *g, int64_t ntask) {
  return ntask > 1 && (double)g->B * g->Hq * g->L * g->S * (g->E + g->Ev) > (1 << 18);
}

/* scratch of per bytes for each of nt threads (free()); NULL with the error set */
static char *thread_scratch(size_t per, int nt, const char *op) {
  char *s = malloc(per * nt);
  if (!s) THError_set(TH_ERR_MEMORY, "%s: out of memory", op);
  return s;
}

int at_sdpa_fused(THTensor **outs, const THTensor *q, const THTensor *k, const THTensor *v,
                  const THTensor *attn_mask, double dropout_p, bool is_causal, double scale, int64_t seed) {
  AttnGeo g;
  THTensor *hold[3] = { NULL, NULL, NULL }, *out = NULL, *lse = NULL;
  int rc = -1;
  if (geo_init(&g, q, k, v, attn_mask, dropout_p, is_causal, scale, seed, hold) < 0) goto done;
  int n = q->ndim;
  int64_t osz[4], lsz[3];
  memcpy(osz, q->sizes, n * sizeof(int64_t));
  osz[n - 1] = g.Ev;
  memcpy(lsz, q->sizes, (n - 1) * sizeof(int64_t));
  if (!(out = new_in_order(q->dtype, n, osz, hold[0])) || !(lse = THTensor_new(q->dtype, n - 1, lsz))) goto done;
  int64_t os[3];
  bhl_strides(out, os);
  int64_t nblk = (g.L + ROWS - 1) / ROWS, ntask = g.B * g.Hq * nblk;
  int64_t nbmax = g.L < ROWS ? g.L : ROWS;
  bool dbl = q->dtype == TH_Double;
  int nt = at_get_num_threads();
  size_t per = (size_t)(nbmax * g.S + 1) * (dbl ? 8 : 4);
  char *scratch = thread_scratch(per, nt, "scaled_dot_product_attention");
  if (!scratch) goto done;
#pragma omp parallel for num_threads(nt) if (worth_threads(&g, ntask)) schedule(dynamic)
  for (int64_t t = 0; t < ntask; t++) {
    void *s = scratch + per * omp_get_thread_num();
    int64_t blk = t % nblk, bh = t / nblk, i0 = blk * ROWS, nb = g.L - i0 < ROWS ? g.L - i0 : ROWS;
    if (dbl) fwd_block_f64(&g, bh / g.Hq, bh % g.Hq, i0, nb, s, (double *)THTensor_data(out), os, (double *)THTensor_data(lse));
    else fwd_block_f32(&g, bh / g.Hq, bh % g.Hq, i0, nb, s, (float *)THTensor_data(out), os, (float *)THTensor_data(lse));
  }
  free(scratch);
  outs[0] = out; outs[1] = lse;
  out = lse = NULL;
  rc = 0;
done:
  for (int i = 0; i < 3; i++) THTensor_free(hold[i]);
  THTensor_free(out); THTensor_free(lse);
  return rc;
}

int at_sdpa_fused_backward(THTensor **outs, const THTensor *grad, const THTensor *q, const THTensor *k,
                           const THTensor *v, const THTensor *attn_mask, const THTensor *out, const THTensor *lse,
                           double dropout_p, bool is_causal, double scale, int64_t seed,
                           const ATIntList *output_mask) {
  AttnGeo g;
  THTensor *hold[3] = { NULL, NULL, NULL }, *go = NULL, *oc = NULL, *lc = NULL, *r[4] = { NULL, NULL, NULL, NULL };
  int64_t st[5][3];   /* batch, head, row strides of dq, dk, dv, the output and grad */
  int rc = -1, n = q->ndim;
  if (geo_init(&g, q, k, v, attn_mask, dropout_p, is_causal, scale, seed, hold) < 0) goto done;
  /* grad is read through its own strides: all of its sizes must be the output's (B, [Hq,] L, Ev) */
  if (grad->ndim != n || grad->sizes[0] != g.B || (n == 4 && grad->sizes[1] != g.Hq) || grad->sizes[n - 2] != g.L ||
      grad->sizes[n - 1] != g.Ev || grad->dtype != q->dtype ||
      out->dtype != q->dtype || lse->dtype != q->dtype || THTensor_numel(out) != g.B * g.Hq * g.L * g.Ev ||
      THTensor_numel(lse) != g.B * g.Hq * g.L) {
    THError_set(TH_ERR_RUNTIME, "scaled_dot_product_attention backward: grad, output or logsumexp do not match");
    goto done;
  }
  /* the output is read through its strides too: its sizes must be grad's */
  if (out->ndim != n || memcmp(out->sizes, grad->sizes, n * sizeof(int64_t))) {
    THError_set(TH_ERR_RUNTIME, "scaled_dot_product_attention backward: grad, output or logsumexp do not match");
    goto done;
  }
  if (!(go = gemm_ready(grad)) || !(oc = gemm_ready(out)) || !(lc = at_contiguous(lse))) goto done;
  bool want_mask = attn_mask && attn_mask->dtype != TH_Bool && (!output_mask || output_mask->n < 4 || output_mask->v[3]);
  int64_t ksz[4], vsz[4], msz[4];
  memcpy(ksz, k->sizes, n * sizeof(int64_t));
  memcpy(vsz, v->sizes, n * sizeof(int64_t));
  memcpy(msz, q->sizes, n * sizeof(int64_t));
  msz[n - 1] = g.S;
  if (!(r[0] = new_in_order(q->dtype, n, q->sizes, hold[0])) || !(r[1] = new_in_order(q->dtype, n, ksz, hold[1])) ||
      !(r[2] = new_in_order(q->dtype, n, vsz, hold[2])) || (want_mask && !(r[3] = THTensor_new(q->dtype, n, msz))))
    goto done;
  for (int i = 0; i < 3; i++) bhl_strides(r[i], st[i]);
  bhl_strides(oc, st[3]);
  st[3][2] = row_stride(oc);
  bhl_strides(go, st[4]);
  st[4][2] = row_stride(go);
  int64_t nbmax = g.L < ROWS ? (g.L ? g.L : 1) : ROWS, ntask = g.B * g.Hk;
  bool dbl = q->dtype == TH_Double;
  int nt = at_get_num_threads();
  size_t per = (size_t)(2 * nbmax * g.S + 2) * (dbl ? 8 : 4);
  char *scratch = thread_scratch(per, nt, "scaled_dot_product_attention backward");
  if (!scratch) goto done;
#pragma omp parallel for num_threads(nt) if (worth_threads(&g, ntask)) schedule(dynamic)
  for (int64_t t = 0; t < ntask; t++) {
    char *s = scratch + per * omp_get_thread_num();
    if (dbl)
      bwd_head_f64(&g, t / g.Hk, t % g.Hk, (const double *)THTensor_data(go), (const double *)THTensor_data(oc),
                   (const double *)THTensor_data(lc), st,
                   (double *)THTensor_data(r[0]), (double *)THTensor_data(r[1]), (double *)THTensor_data(r[2]),
                   r[3] ? (double *)THTensor_data(r[3]) : NULL, nbmax, (double *)s, (double *)s + nbmax * g.S + 1);
    else
      bwd_head_f32(&g, t / g.Hk, t % g.Hk, (const float *)THTensor_data(go), (const float *)THTensor_data(oc),
                   (const float *)THTensor_data(lc), st,
                   (float *)THTensor_data(r[0]), (float *)THTensor_data(r[1]), (float *)THTensor_data(r[2]),
                   r[3] ? (float *)THTensor_data(r[3]) : NULL, nbmax, (float *)s, (float *)s + nbmax * g.S + 1);
  }
  free(scratch);
  for (int i = 0; i < 4; i++) { outs[i] = r[i]; r[i] = NULL; }
  rc = 0;
done:
  for (int i = 0; i < 3; i++) THTensor_free(hold[i]);
  for (int i = 0; i < 4; i++) THTensor_free(r[i]);
  THTensor_free(go); THTensor_free(oc); THTensor_free(lc);
  return rc;
}

#else   /* second pass */
/* The second pass: the kernels, written once for T = float and T = double
 * (the file's first pass includes it twice with T, SFX (the name suffix) and
 * DBL (at_gemm's double flag) defined, as TH's generic/ files).
 *
 * Per (batch, head) and block of query rows, the forward is three steps:
 *   S = scale * Q K^T (+ mask)          one GEMM, nb x Sc
 *   P = softmax(S) row by row           exp in place; lse = max + log(sum) saved
 *   O = dropout(P) V                    one GEMM, nb x Ev
 * A row block holds all key columns, so the softmax is exact in one pass
 * (no online rescaling): the scratch is nb x S per thread. Under is_causal
 * the columns past the block's last row are never touched (Sc < S).
 *
 * The backward recomputes P from the saved logsumexp instead of storing it:
 *   dV += dropout(P)^T dO,  dP = dropout'(dO V^T),  D_i = dO_i . O_i,
 *   dS = P * (dP - D),      dQ = scale dS K,       dK += scale dS^T Q,
 * and dS is the attn_mask's gradient. dK and dV sum over the row blocks and
 * over the query heads that share one key head (GQA), so the backward's
 * parallel unit is one (batch, key head). */

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(name, SFX)


/* the columns row i of a causal block attends to (the rest are -inf) */
static inline int64_t FN(live_cols)(const AttnGeo *g, int64_t i, int64_t Sc) {
  return g->causal && i + 1 < Sc ? i + 1 : Sc;
}

/* adds the mask to row i of the scores (n valid columns), -inf where masked */
static void FN(mask_row)(const AttnGeo *g, int64_t b, int64_t h, int64_t i, T *row, int64_t n) {
  const AttnMask *m = &g->mask;
  if (m->kind == ATTN_MASK_NONE) return;
  const char *base = m->p + (b * m->sb + h * m->sh + i * m->si) * m->es;
  if (m->kind == ATTN_MASK_BOOL) {
    for (int64_t j = 0; j < n; j++)
      if (!base[j * m->sj]) row[j] = -INFINITY;
  } else if (m->sj == 1) {
    const T *mv = (const T *)base;
#pragma omp simd
    for (int64_t j = 0; j < n; j++) row[j] += mv[j];
  } else {
    const T *mv = (const T *)base;
    for (int64_t j = 0; j < n; j++) row[j] += mv[j * m->sj];
  }
}

/* scale * Q_blk K^T (+ mask), the causal columns cut: the scores of rows i0..i0+nb (nb x Sc in s) */
static void FN(scores)(const AttnGeo *g, int64_t b, int64_t h, int64_t i0, int64_t nb, int64_t Sc, T *s) {
  int64_t hk = h / (g->Hq / g->Hk);
  const T *q = (const T *)g->q + b * g->qb + h * g->qh + i0 * g->ql;
  const T *k = (const T *)g->k + b * g->kb + hk * g->kh;
  at_gemm(DBL, false, true, nb, Sc, g->E, g->scale, q, g->ql, k, g->kl, 0.0, s, Sc);
  for (int64_t r = 0; r < nb; r++) {
    int64_t i = i0 + r, n = FN(live_cols)(g, i, Sc);
    T *row = s + r * Sc;
    FN(mask_row)(g, b, h, i, row, n);
    for (int64_t j = n; j < Sc; j++) row[j] = -INFINITY;
  }
}

/* os: the output's batch, head and row strides */
static void FN(fwd_block)(const AttnGeo *g, int64_t b, int64_t h, int64_t i0, int64_t nb, T *s, T *out,
                          const int64_t *os, T *lse) {
  int64_t S = g->S, Ev = g->Ev, Sc = g->causal ? (i0 + nb < S ? i0 + nb : S) : S;
  int64_t row0 = (b * g->Hq + h) * g->L + i0, ol = os[2];
  T *o = out + b * os[0] + h * os[1] + i0 * ol, *ls = lse + row0;
  if (Sc == 0) {   /* no keys: nothing to attend to */
    for (int64_t r = 0; r < nb; r++) memset(o + r * ol, 0, Ev * sizeof(T));
    for (int64_t r = 0; r < nb; r++) ls[r] = -INFINITY;
    return;
  }
  FN(scores)(g, b, h, i0, nb, Sc, s);
  T rs = (T)(1.0 / (1.0 - g->p)), lo = TH_EXP_NONPOS_LO(T);
  for (int64_t r = 0; r < nb; r++) {
    T *row = s + r * Sc, mx = -INFINITY, sum = 0;
    int64_t n = FN(live_cols)(g, i0 + r, Sc);   /* columns n.. are causal-cut: P is 0 there */
    for (int64_t j = 0; j < n; j++) mx = row[j] > mx ? row[j] : mx;
    if (mx == -INFINITY) {   /* every key masked: the row attends to nothing (torch's safe softmax) */
      memset(row, 0, Sc * sizeof(T));
      ls[r] = -INFINITY;
      continue;
    }
#pragma omp simd reduction(+:sum)
    for (int64_t j = 0; j < n; j++) { T e = TH_EXP_NONPOS(row[j] - mx, lo); row[j] = e; sum += e; }
    memset(row + n, 0, (Sc - n) * sizeof(T));
    ls[r] = mx + (T)log((double)sum);
    T inv = (T)1 / sum;
    if (g->p > 0) {
      for (int64_t j = 0; j < n; j++) row[j] *= attn_keep(g, b, h, i0 + r, j) ? inv * rs : 0;
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; j++) row[j] *= inv;
    }
  }
  const T *v = (const T *)g->v + b * g->vb + (h / (g->Hq / g->Hk)) * g->vh;
  at_gemm(DBL, false, false, nb, Ev, Sc, 1.0, s, Sc, v, g->vl, 0.0, o, ol > Ev ? ol : Ev);
}

/* one (batch, key head): dK and dV of that head, dQ (and the mask's gradient) of its query heads.
 * s, d: scratch of nb x S each; go: dO; out: the forward's output; st: the batch, head and row strides of
 * dq, dk, dv, out and go (each with a unit last stride) */
static void FN(bwd_head)(const AttnGeo *g, int64_t b, int64_t hk, const T *go, const T *out, const T *lse,
                         const int64_t (*st)[3], T *dq, T *dk, T *dv, T *gm, int64_t nbmax, T *s, T *d) {
  int64_t S = g->S, E = g->E, Ev = g->Ev, L = g->L, grp = g->Hq / g->Hk;
  int64_t dql = st[0][2] > E ? st[0][2] : E, dkl = st[1][2] > E ? st[1][2] : E, dvl = st[2][2] > Ev ? st[2][2] : Ev;
  int64_t ol = st[3][2], gl = st[4][2];
  T *dkh = dk + b * st[1][0] + hk * st[1][1], *dvh = dv + b * st[2][0] + hk * st[2][1];
  for (int64_t j = 0; j < S; j++) {
    memset(dkh + j * dkl, 0, E * sizeof(T));
    memset(dvh + j * dvl, 0, Ev * sizeof(T));
  }
  const T *k = (const T *)g->k + b * g->kb + hk * g->kh, *v = (const T *)g->v + b * g->vb + hk * g->vh;
  T rs = (T)(1.0 / (1.0 - g->p)), lo = TH_EXP_NONPOS_LO(T);
  for (int64_t h = hk * grp; h < (hk + 1) * grp; h++)
    for (int64_t i0 = 0; i0 < L; i0 += nbmax) {
      int64_t nb = L - i0 < nbmax ? L - i0 : nbmax, Sc = g->causal ? (i0 + nb < S ? i0 + nb : S) : S;
      int64_t row0 = (b * g->Hq + h) * L + i0;
      const T *q = (const T *)g->q + b * g->qb + h * g->qh + i0 * g->ql;
      const T *gob = go + b * st[4][0] + h * st[4][1] + i0 * gl, *ob = out + b * st[3][0] + h * st[3][1] + i0 * ol;
      const T *ls = lse + row0;
      T *dqb = dq + b * st[0][0] + h * st[0][1] + i0 * dql;
      if (Sc == 0) {
        for (int64_t r = 0; r < nb; r++) memset(dqb + r * dql, 0, E * sizeof(T));
        if (gm) memset(gm + row0 * S, 0, nb * S * sizeof(T));
        continue;
      }
      FN(scores)(g, b, h, i0, nb, Sc, s);
      for (int64_t r = 0; r < nb; r++) {   /* P, recomputed from the logsumexp */
        T *row = s + r * Sc, l = ls[r];
        int64_t n = l == -INFINITY ? 0 : FN(live_cols)(g, i0 + r, Sc);
#pragma omp simd
        for (int64_t j = 0; j < n; j++) row[j] = TH_EXP_NONPOS(row[j] - l, lo);
        memset(row + n, 0, (Sc - n) * sizeof(T));
      }
      const T *pd = s;
      if (g->p > 0) {   /* the dropped-out P that multiplied V */
        for (int64_t r = 0; r < nb; r++)
          for (int64_t j = 0; j < Sc; j++) d[r * Sc + j] = attn_keep(g, b, h, i0 + r, j) ? s[r * Sc + j] * rs : 0;
        pd = d;
      }
      at_gemm(DBL, true, false, Sc, Ev, nb, 1.0, pd, Sc, gob, gl, 1.0, dvh, dvl);
      at_gemm(DBL, false, true, nb, Sc, Ev, 1.0, gob, gl, v, g->vl, 0.0, d, Sc);
      for (int64_t r = 0; r < nb; r++) {   /* dS = P * (dP - D) */
        T D = 0, *row = s + r * Sc, *dp = d + r * Sc;
        const T *gr = gob + r * gl, *orow = ob + r * ol;
#pragma omp simd reduction(+:D)
        for (int64_t c = 0; c < Ev; c++) D += gr[c] * orow[c];
        if (g->p > 0)
          for (int64_t j = 0; j < Sc; j++) dp[j] = attn_keep(g, b, h, i0 + r, j) ? dp[j] * rs : 0;
#pragma omp simd
        for (int64_t j = 0; j < Sc; j++) row[j] = row[j] * (dp[j] - D);
        if (gm) {
          T *gmr = gm + (row0 + r) * S;
          memcpy(gmr, row, Sc * sizeof(T));
          memset(gmr + Sc, 0, (S - Sc) * sizeof(T));
        }
      }
      at_gemm(DBL, false, false, nb, E, Sc, g->scale, s, Sc, k, g->kl, 0.0, dqb, dql);
      at_gemm(DBL, true, false, Sc, E, nb, g->scale, s, Sc, q, g->ql, 1.0, dkh, dkl);
    }
}

#undef FN
#undef CAT
#undef CAT2
#endif
