/* searchsorted, bincount and histogram binning (see THKernelsBucketize.h). */
#ifndef TH_GENERIC_FILE
#error "include through THTensorBucketize.c"
#endif

/* PyTorch's binary searches: the first position whose boundary is >= val
 * (left) or > val (right), comparing with !(b >= v) / !(b > v) so a NaN
 * value lands at the end; the same midpoints as PyTorch's, so NaN
 * boundaries give its answers too. */
/* Rows of bd that are non-decreasing with no NaN have one insertion point
 * per value, so any search order gives PyTorch's answer: then
 * TH_SEARCH_LANES values are searched in lockstep (the halving sequence
 * depends on n alone), their dependent loads overlapping, each step a
 * branch-free select. Every window [base, base + len] holds the answer. */
#ifndef TH_SEARCH_LANES
#define TH_SEARCH_LANES 8
#endif
bool THTensor_(search_ordered)(const char *bd, int64_t rows, int64_t n) {
  const scalar_t *b = (const scalar_t *)bd;
  for (int64_t r = 0; r < rows; r++, b += n) {
    if (n && TOC(b[0]) != TOC(b[0])) return false;
    for (int64_t j = 1; j < n; j++)
      if (!(TOC(b[j - 1]) <= TOC(b[j]))) return false;
  }
  return true;
}

static void THTensor_(search_lanes)(const THSearchArgs *a, int64_t i0, int64_t i1) {
  const scalar_t *bd = (const scalar_t *)a->bd, *val = (const scalar_t *)a->val;
  int64_t n = a->n_bd;
  for (int64_t i = i0; i < i1; i += TH_SEARCH_LANES) {
    int m = i1 - i < TH_SEARCH_LANES ? (int)(i1 - i) : TH_SEARCH_LANES;
    const scalar_t *bl[TH_SEARCH_LANES];
    compute_t v[TH_SEARCH_LANES];
    int64_t base[TH_SEARCH_LANES];
    for (int r = 0; r < m; r++) {
      bl[r] = bd + (a->one_row ? 0 : (i + r) / a->per_row) * n;
      v[r] = TOC(val[i + r]);
      base[r] = 0;
    }
    if (n > 0) {
      for (int64_t len = n; len > 1; len -= len >> 1) {
        int64_t half = len >> 1;
        if (a->right)
          for (int r = 0; r < m; r++) base[r] += !(TOC(bl[r][base[r] + half]) > v[r]) ? half : 0;
        else
          for (int r = 0; r < m; r++) base[r] += !(TOC(bl[r][base[r] + half]) >= v[r]) ? half : 0;
      }
      for (int r = 0; r < m; r++)
        base[r] += a->right ? !(TOC(bl[r][base[r]]) > v[r]) : !(TOC(bl[r][base[r]]) >= v[r]);
    }
    for (int r = 0; r < m; r++) {
      if (a->out_int32) ((int32_t *)a->out)[i + r] = (int32_t)base[r];
      else ((int64_t *)a->out)[i + r] = base[r];
    }
  }
}

void THTensor_(searchsorted)(const THSearchArgs *a, int64_t i0, int64_t i1) {
  if (a->ordered && !a->sorter) { THTensor_(search_lanes)(a, i0, i1); return; }
  const scalar_t *bd = (const scalar_t *)a->bd, *val = (const scalar_t *)a->val;
  int64_t n = a->n_bd;
  for (int64_t i = i0; i < i1; i++) {
    int64_t row = a->one_row ? 0 : i / a->per_row;
    const scalar_t *b = bd + row * n;
    const int64_t *st = a->sorter ? a->sorter + row * n : NULL;
    compute_t v = TOC(val[i]);
    int64_t base = 0, len = n;
    if (st) {
      while (len > 0) {
        int64_t half = len >> 1;
        compute_t m = TOC(b[st[base + half]]);
        bool go_right = a->right ? !(m > v) : !(m >= v);
        if (go_right) { base += half + 1; len -= half + 1; } else len = half;
      }
    } else if (a->right) {
      while (len > 0) {
        int64_t half = len >> 1;
        bool go = !(TOC(b[base + half]) > v);
        base = go ? base + half + 1 : base;
        len = go ? len - half - 1 : half;
      }
    } else {
      while (len > 0) {
        int64_t half = len >> 1;
        bool go = !(TOC(b[base + half]) >= v);
        base = go ? base + half + 1 : base;
        len = go ? len - half - 1 : half;
      }
    }
    if (a->out_int32) ((int32_t *)a->out)[i] = (int32_t)base;
    else ((int64_t *)a->out)[i] = base;
  }
}

#ifdef TH_REAL_IS_INTEGRAL
void THTensor_(minmax_int)(const char *x, int64_t n, int64_t *mn, int64_t *mx) {
  const scalar_t *p = (const scalar_t *)x;
  scalar_t lo = p[0], hi = p[0];
  for (int64_t i = 1; i < n; i++) { lo = p[i] < lo ? p[i] : lo; hi = p[i] > hi ? p[i] : hi; }
  *mn = (int64_t)lo;
  *mx = (int64_t)hi;
}

void THTensor_(bincount)(const char *x, const char *w, THDtype wdt, char *hist, int64_t i0, int64_t i1) {
  const scalar_t *p = (const scalar_t *)x;
  if (!w) {
    int64_t *h = (int64_t *)hist;
    for (int64_t i = i0; i < i1; i++) h[(int64_t)p[i]]++;
  } else if (wdt == TH_Float) {
    float *h = (float *)hist;
    const float *wv = (const float *)w;
    for (int64_t i = i0; i < i1; i++) h[(int64_t)p[i]] += wv[i];
  } else {
    double *h = (double *)hist;
    const double *wv = (const double *)w;
    for (int64_t i = i0; i < i1; i++) h[(int64_t)p[i]] += wv[i];
  }
}
#endif

#ifdef TH_REAL_IS_FLOATING
/* PyTorch computes the linear position in the input dtype: half types
 * round after each operation. */
#ifdef TH_REAL_IS_REDUCED
#define RND(v) TOC(FROMC(v))
#else
#define RND(v) (v)
#endif
void THTensor_(histogram)(const THHistArgs *a, double *hist, int64_t i0, int64_t i1) {
  const scalar_t *x = (const scalar_t *)a->x, *w = (const scalar_t *)a->w, *e = (const scalar_t *)a->edges;
  int64_t nb = a->nbins, ne = nb + 1;
  compute_t left = TOC(e[0]), right = TOC(e[nb]);
  compute_t scale_n = RND((compute_t)nb), width = RND(right - left);
  for (int64_t i = i0; i < i1; i++) {
    compute_t v = TOC(x[i]);
    if (!(v >= left && v <= right)) continue;
    int64_t pos;
    if (a->mode == TH_HIST_BINARY) {
      int64_t lo = 0, len = ne;    /* upper_bound over all edges */
      while (len > 0) { int64_t h = len >> 1; if (!(v < TOC(e[lo + h]))) { lo += h + 1; len -= h + 1; } else len = h; }
      pos = lo - 1;
    } else {
      pos = (int64_t)(RND(RND(RND(v - left) * scale_n) / width));
      if (a->mode == TH_HIST_LINEAR_LOCAL) {
        int64_t lo = pos - 1 > 0 ? pos - 1 : 0, hi = pos + 2 < ne ? pos + 2 : ne, len = hi - lo;
        while (len > 0) { int64_t h = len >> 1; if (!(v < TOC(e[lo + h]))) { lo += h + 1; len -= h + 1; } else len = h; }
        pos = lo - 1;
      }
    }
    if (pos == ne - 1) pos -= 1;
    hist[pos] += w ? (double)TOC(w[i]) : 1.0;
  }
}
#undef RND
#endif
