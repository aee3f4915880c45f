/* Sparse COO compute (see ATSparse.h). */
#include "ATSparse.h"
#include <stdlib.h>
#include <string.h>

static int check_parts(const THTensor *idx, const THTensor *val, const char *op) {
  if (idx->dtype != TH_Int64 || idx->ndim != 2 || val->ndim < 1 || val->sizes[0] != idx->sizes[1]) {
    THError_set(TH_ERR_RUNTIME, "%s: expected int64 indices (sparse_dim x nnz) and values (nnz x ...)", op);
    return -1;
  }
  if (val->dtype != TH_Float && val->dtype != TH_Double && val->dtype != TH_Int64) {
    THError_set(TH_ERR_NOTIMPL, "%s: values of this dtype take the dense-op path", op);
    return -1;
  }
  return 0;
}

/* contiguous copies (or new references) of both parts */
static int contig(const THTensor *idx, const THTensor *val, THTensor **ic, THTensor **vc) {
  *ic = at_contiguous(idx);
  *vc = *ic ? at_contiguous(val) : NULL;
  if (!*vc) { THTensor_free(*ic); *ic = NULL; return -1; }
  return 0;
}

static THTensor *new_values(const THTensor *like, int64_t nnz) {
  int64_t sizes[TH_MAX_DIMS];
  memcpy(sizes, like->sizes, like->ndim * sizeof(int64_t));
  sizes[0] = nnz;
  return THTensor_new(like->dtype, like->ndim, sizes);
}

/* r[k] (+)= scale * a[k] over one row of D values, in the values' dtype */
static void row_axpy(THDtype dt, void *r, const void *a, int64_t D, double scale, bool assign) {
#define AXPY(T)                                                       \
  {                                                                   \
    T *rr = (T *)r;                                                   \
    const T *aa = (const T *)a;                                       \
    if (scale == 1.0) {                                               \
      if (assign) memcpy(rr, aa, D * sizeof(T));                      \
      else for (int64_t k = 0; k < D; k++) rr[k] += aa[k];            \
    } else {                                                          \
      T s = (T)scale;                                                 \
      if (assign) for (int64_t k = 0; k < D; k++) rr[k] = s * aa[k];  \
      else for (int64_t k = 0; k < D; k++) rr[k] += s * aa[k];        \
    }                                                                 \
  }
  if (dt == TH_Float) AXPY(float)
  else if (dt == TH_Double) AXPY(double)
  else AXPY(int64_t)
#undef AXPY
}

typedef struct { int64_t key, pos; } KeyPos;

static int keypos_cmp(const void *a, const void *b) {
  const KeyPos *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;   /* stable: repeats sum in entry order */
}

int at_sparse_coalesce(const THTensor *indices, const THTensor *values, const ATIntList *sparse_sizes,
                       THTensor **out_indices, THTensor **out_values) {
  *out_indices = *out_values = NULL;
  if (check_parts(indices, values, "coalesce") < 0) return -1;
  int64_t nsp = indices->sizes[0], nnz = indices->sizes[1];
  if (sparse_sizes->n != nsp) {
    THError_set(TH_ERR_RUNTIME, "coalesce: %d sparse sizes for %lld sparse dims", (int)sparse_sizes->n, (long long)nsp);
    return -1;
  }
  THTensor *ic, *vc;
  if (contig(indices, values, &ic, &vc) < 0) return -1;
  int64_t D = nnz ? THTensor_numel(vc) / nnz : 0;
  size_t es = THDtype_size(vc->dtype);
  const int64_t *iv = (const int64_t *)THTensor_data(ic);
  KeyPos *kp = malloc((nnz ? nnz : 1) * sizeof(KeyPos));
  THTensor *ri = NULL, *rv = NULL;
  if (!kp) { THError_set(TH_ERR_MEMORY, "coalesce: out of memory"); goto done; }
  for (int64_t e = 0; e < nnz; e++) {
    int64_t key = 0;
    for (int64_t d = 0; d < nsp; d++) {
      int64_t x = iv[d * nnz + e];
      if (x < 0 || x >= sparse_sizes->v[d]) {
        THError_set(TH_ERR_RUNTIME, "coalesce: index %lld is out of bounds for dimension %lld with size %lld",
                    (long long)x, (long long)d, (long long)sparse_sizes->v[d]);
        goto done;
      }
      key = key * sparse_sizes->v[d] + x;
    }
    kp[e] = (KeyPos){key, e};
  }
  qsort(kp, nnz, sizeof(KeyPos), keypos_cmp);
  int64_t nu = 0;
  for (int64_t e = 0; e < nnz; e++) nu += e == 0 || kp[e].key != kp[e - 1].key;
  ri = THTensor_new(TH_Int64, 2, (int64_t[]){nsp, nu});
  rv = ri ? new_values(vc, nu) : NULL;
  if (!rv) goto done;
  int64_t *ro = (int64_t *)THTensor_data(ri);
  char *rvp = THTensor_data(rv);
  const char *vp = THTensor_data(vc);
  for (int64_t e = 0, u = -1; e < nnz; e++) {
    bool first = e == 0 || kp[e].key != kp[e - 1].key;
    if (first) {
      u++;
      for (int64_t d = 0; d < nsp; d++) ro[d * nu + u] = iv[d * nnz + kp[e].pos];
    }
    row_axpy(vc->dtype, rvp + u * D * es, vp + kp[e].pos * D * es, D, 1.0, first);
  }
  *out_indices = ri;
  *out_values = rv;
  ri = rv = NULL;
done:
  free(kp);
  THTensor_free(ri); THTensor_free(rv); THTensor_free(ic); THTensor_free(vc);
  return *out_values ? 0 : -1;
}

int at_sparse_add(const THTensor *t_indices, const THTensor *t_values, const THTensor *s_indices,
                  const THTensor *s_values, double alpha, THTensor **out_indices, THTensor **out_values) {
  *out_indices = *out_values = NULL;
  if (check_parts(t_indices, t_values, "add") < 0 || check_parts(s_indices, s_values, "add") < 0) return -1;
  bool same = t_indices->sizes[0] == s_indices->sizes[0] && t_values->dtype == s_values->dtype &&
              t_values->ndim == s_values->ndim;
  for (int d = 1; same && d < t_values->ndim; d++) same = t_values->sizes[d] == s_values->sizes[d];
  if (!same) {
    THError_set(TH_ERR_RUNTIME, "add: sparse operands differ in sparse dims, dtype or dense sizes");
    return -1;
  }
  THTensor *ti, *tv, *si, *sv, *ri = NULL, *rv = NULL;
  if (contig(t_indices, t_values, &ti, &tv) < 0) return -1;
  if (contig(s_indices, s_values, &si, &sv) < 0) { THTensor_free(ti); THTensor_free(tv); return -1; }
  int64_t nsp = ti->sizes[0], tn = ti->sizes[1], sn = si->sizes[1];
  int64_t D = tn ? THTensor_numel(tv) / tn : sn ? THTensor_numel(sv) / sn : 0;
  size_t es = THDtype_size(tv->dtype);
  THTensor *big_i = THTensor_new(TH_Int64, 2, (int64_t[]){nsp, tn + sn});
  THTensor *big_v = big_i ? new_values(tn ? tv : sv, tn + sn) : NULL;
  if (!big_v) goto done;
  const int64_t *a = (const int64_t *)THTensor_data(ti), *b = (const int64_t *)THTensor_data(si);
  const char *av = THTensor_data(tv), *bv = THTensor_data(sv);
  int64_t *ro = (int64_t *)THTensor_data(big_i);
  char *rvp = THTensor_data(big_v);
  int64_t i = 0, j = 0, r = 0, cap = tn + sn;
  while (i < tn || j < sn) {
    int cmp;   /* >0: take t's entry, <0: s's, 0: both */
    if (i >= tn) cmp = -1;
    else if (j >= sn) cmp = 1;
    else {
      cmp = 0;
      for (int64_t d = 0; d < nsp && !cmp; d++) {
        int64_t x = a[d * tn + i], y = b[d * sn + j];
        cmp = x < y ? 1 : x > y ? -1 : 0;
      }
    }
    if (cmp >= 0) {
      for (int64_t d = 0; d < nsp; d++) ro[d * cap + r] = a[d * tn + i];
      row_axpy(tv->dtype, rvp + r * D * es, av + i * D * es, D, 1.0, true);
      i++;
    }
    if (cmp <= 0) {
      for (int64_t d = 0; d < nsp; d++) ro[d * cap + r] = b[d * sn + j];
      row_axpy(tv->dtype, rvp + r * D * es, bv + j * D * es, D, alpha, cmp < 0);
      j++;
    }
    r++;
  }
  /* the merged entries are the first r columns of big_i and rows of big_v */
  ri = THTensor_new(TH_Int64, 2, (int64_t[]){nsp, r});
  rv = ri ? new_values(big_v, r) : NULL;
  if (!rv) goto done;
  for (int64_t d = 0; d < nsp; d++) memcpy((int64_t *)THTensor_data(ri) + d * r, ro + d * cap, r * sizeof(int64_t));
  memcpy(THTensor_data(rv), rvp, r * D * es);
  *out_indices = ri;
  *out_values = rv;
  ri = rv = NULL;
done:
  THTensor_free(big_i); THTensor_free(big_v); THTensor_free(ri); THTensor_free(rv);
  THTensor_free(ti); THTensor_free(tv); THTensor_free(si); THTensor_free(sv);
  return *out_values ? 0 : -1;
}
