/* Argument checks for internal entry points (see ATArgChecks.h). */
#include "ATArgChecks.h"

int at_check_shape(const THTensor *t, int n, const int64_t *sizes, const char *op, const char *arg) {
  bool same = t->ndim == n;
  for (int i = 0; same && i < n; i++) same = t->sizes[i] == sizes[i];
  if (same) return 0;
  char b1[256], b2[256];
  THError_set(TH_ERR_RUNTIME, "%s: expected %s of size %s, but got %s", op, arg, THTensor_sizeStr(n, sizes, b1, 256),
              THTensor_sizeStr(t->ndim, t->sizes, b2, 256));
  return -1;
}

int at_check_same_shape(const THTensor *a, const THTensor *b, const char *op, const char *an, const char *bn) {
  bool same = a->ndim == b->ndim;
  for (int i = 0; same && i < a->ndim; i++) same = a->sizes[i] == b->sizes[i];
  if (same) return 0;
  char b1[256], b2[256];
  THError_set(TH_ERR_RUNTIME, "%s: expected %s and %s to have the same size, but got %s and %s", op, an, bn,
              THTensor_sizeStr(a->ndim, a->sizes, b1, 256), THTensor_sizeStr(b->ndim, b->sizes, b2, 256));
  return -1;
}

int at_check_ndim(const THTensor *t, int lo, int hi, const char *op, const char *arg) {
  if (t->ndim >= lo && t->ndim <= hi) return 0;
  if (lo == hi)
    THError_set(TH_ERR_RUNTIME, "%s: expected %s to be %dD, but got %dD", op, arg, lo, t->ndim);
  else
    THError_set(TH_ERR_RUNTIME, "%s: expected %s to be %dD to %dD, but got %dD", op, arg, lo, hi, t->ndim);
  return -1;
}

int at_check_int64(const THTensor *t, const char *op, const char *arg) {
  if (t->dtype == TH_Int64) return 0;
  THError_set(TH_ERR_RUNTIME, "%s: expected %s to have scalar type Long, but got %s", op, arg,
              THDtype_info[t->dtype].name);
  return -1;
}

int at_check_integral(const THTensor *t, const char *op, const char *arg) {
  if (THDtype_isIntegral(t->dtype, false)) return 0;
  THError_set(TH_ERR_RUNTIME, "%s: expected %s to be an integer tensor, but got %s", op, arg,
              THDtype_info[t->dtype].name);
  return -1;
}

int at_check_index_range(const THTensor *idx, int64_t lo, int64_t hi, const char *op, const char *arg) {
  if (at_check_integral(idx, op, arg) < 0) return -1;
  THTensor *l = at_to_dtype(idx, TH_Int64, false), *c = l ? at_contiguous(l) : NULL;
  THTensor_free(l);
  if (!c) return -1;
  const int64_t *v = (const int64_t *)THTensor_data(c);
  int64_t n = THTensor_numel(c), bad = 0;
  bool found = false;
  for (int64_t i = 0; i < n && !found; i++)
    if (v[i] < lo || v[i] >= hi) { found = true; bad = v[i]; }
  THTensor_free(c);
  if (!found) return 0;
  THError_set(TH_ERR_INDEX, "%s: %s %lld is out of bounds for [%lld, %lld)", op, arg, (long long)bad, (long long)lo,
              (long long)hi);
  return -1;
}
