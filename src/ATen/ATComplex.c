/* Complex dtypes (see ATComplex.h). */
#include "ATComplex.h"
#include "../TH/THKernelsComplex.h"
#include "../TH/THLoops.h"

#include <string.h>
#include <complex.h>

static int not_cuda(const THTensor *t, const char *op) {
  if (THTensor_device(t) < 0) return 0;
  THError_set(TH_ERR_NOTIMPL, "%s: complex dtypes are not implemented on CUDA in cthtorch", op);
  return -1;
}

int at_no_complex(const THTensor *t, const char *kernel) {
  if (!t || !THDtype_isComplex(t->dtype)) return 0;
  THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'", kernel, THDtype_info[t->dtype].legacy);
  return -1;
}

/* (..., n) complex -> (..., n, 2) real, the same bytes */
THTensor *at_view_as_real(const THTensor *t) {
  if (!THDtype_isComplex(t->dtype)) {
    THError_set(TH_ERR_RUNTIME, "view_as_real is only supported for complex tensors");
    return NULL;
  }
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  if (t->ndim + 1 > TH_MAX_DIMS) { THError_set(TH_ERR_RUNTIME, "view_as_real: too many dimensions"); return NULL; }
  for (int d = 0; d < t->ndim; d++) { sizes[d] = t->sizes[d]; strides[d] = t->strides[d] * 2; }
  sizes[t->ndim] = 2;
  strides[t->ndim] = 1;
  return THTensor_newWithStorage(t->storage, THDtype_toReal(t->dtype), t->offset * 2, t->ndim + 1, sizes, strides);
}

/* (..., 2) real -> (...) complex, with torch's checks and texts */
THTensor *at_view_as_complex(const THTensor *t) {
  if (t->dtype == TH_Half) {
    THError_set(TH_ERR_NOTIMPL, "view_as_complex: complex32 (from float16) is not implemented in cthtorch");
    return NULL;
  }
  if (t->dtype != TH_Float && t->dtype != TH_Double) {
    THError_set(TH_ERR_RUNTIME, "view_as_complex is only supported for float and double tensors, but got a tensor of "
                "scalar type: %s", THDtype_info[t->dtype].legacy);
    return NULL;
  }
  if (t->ndim == 0 || t->sizes[t->ndim - 1] != 2) {
    THError_set(TH_ERR_RUNTIME, "Tensor must have a last dimension of size 2");
    return NULL;
  }
  if (t->strides[t->ndim - 1] != 1) {
    THError_set(TH_ERR_RUNTIME, "Tensor must have a last dimension with stride 1");
    return NULL;
  }
  int64_t strides[TH_MAX_DIMS];
  for (int d = 0; d < t->ndim - 1; d++) {
    if (t->strides[d] % 2) {
      THError_set(TH_ERR_RUNTIME, "Tensor must have a stride divisible by 2 for all but last dimension");
      return NULL;
    }
    strides[d] = t->strides[d] / 2;
  }
  if (t->offset % 2) {
    THError_set(TH_ERR_RUNTIME, "Tensor must have a storage_offset divisible by 2");
    return NULL;
  }
  return THTensor_newWithStorage(t->storage, THDtype_toComplex(t->dtype), t->offset / 2, t->ndim - 1, t->sizes, strides);
}

static THTensor *run1(const THTensor *a, THTensor *out, THDtype odt, THLoopFn fn, const char *name) {
  if (not_cuda(a, name) < 0) return NULL;
  ATIterSpec spec = { .out = out, .out_dtype = odt, .common_dtype = a->dtype, .inplace = out == a,
                      .check_cast = true, .name = name };
  const THTensor *in[1] = { a };
  return at_iter_run(&spec, 1, in, fn, NULL);
}

/* conj_physical of a real tensor is the tensor itself (torch returns self too) */
static const THLoopFn conj_loops[TH_NDTYPES] = { TH_COMPLEX_ENTRIES(conj_loop) };
THTensor *at_conj_physical(const THTensor *t, THTensor *out) {
  if (!THDtype_isComplex(t->dtype)) {
    if (!out) return at_alias(t);   /* a fresh tensor: formulas give it its own grad_fn */
    return at_copy_(out, t) < 0 ? NULL : THTensor_retain(out);
  }
  return run1(t, out, t->dtype, conj_loops[t->dtype], "conj_physical");
}

static const THLoopFn abs_loops[TH_NDTYPES] = { TH_COMPLEX_ENTRIES(abs_loop) };
THTensor *at_complex_abs(const THTensor *a, THTensor *out) {
  return run1(a, out, THDtype_toReal(a->dtype), abs_loops[a->dtype], "abs");
}

static const THLoopFn angle_loops[TH_NDTYPES] = { TH_COMPLEX_ENTRIES(angle_loop) };
/* angle of a real number: 0 or pi (nan stays nan); integers give the default float dtype */
THTensor *at_angle(const THTensor *t, THTensor *out) {
  if (THDtype_isComplex(t->dtype)) return run1(t, out, THDtype_toReal(t->dtype), angle_loops[t->dtype], "angle");
  THTensor *x = THDtype_isFloating(t->dtype) ? THTensor_retain((THTensor *)t) : at_to_dtype(t, at_default_dtype(), false);
  if (!x) return NULL;
  /* atan2(0, x): pi for negative x, 0 otherwise, nan for nan */
  /* x + 0 turns -0.0 into +0.0: torch's angle(-0.0) is 0, where atan2(0, -0.0) is pi */
  THTensor *zero = at_scalar_tensor(at_scalar_float(0.0), x->dtype);
  THTensor *xp = zero ? at_add(x, zero, at_scalar_int(1), NULL) : NULL;
  THTensor *r = xp ? at_atan2(zero, xp, out) : NULL;
  THTensor_free(zero);
  THTensor_free(xp);
  THTensor_free(x);
  return r;
}

/* predicate: a bool result (isnan...), else the input's complex dtype */
static const struct { const char *name; THLoopFn loops[TH_NDTYPES]; bool predicate; } unary_table[] = {
  { "exp", { TH_COMPLEX_ENTRIES(exp_loop) } }, { "log", { TH_COMPLEX_ENTRIES(log_loop) } },
  { "sqrt", { TH_COMPLEX_ENTRIES(sqrt_loop) } }, { "sin", { TH_COMPLEX_ENTRIES(sin_loop) } },
  { "cos", { TH_COMPLEX_ENTRIES(cos_loop) } }, { "tanh", { TH_COMPLEX_ENTRIES(tanh_loop) } },
  { "reciprocal", { TH_COMPLEX_ENTRIES(reciprocal_loop) } }, { "neg", { TH_COMPLEX_ENTRIES(neg_loop) } },
  { "sgn", { TH_COMPLEX_ENTRIES(sgn_loop) } }, { "tan", { TH_COMPLEX_ENTRIES(tan_loop) } },
  { "sinh", { TH_COMPLEX_ENTRIES(sinh_loop) } }, { "cosh", { TH_COMPLEX_ENTRIES(cosh_loop) } },
  { "asin", { TH_COMPLEX_ENTRIES(asin_loop) } }, { "acos", { TH_COMPLEX_ENTRIES(acos_loop) } },
  { "atan", { TH_COMPLEX_ENTRIES(atan_loop) } }, { "asinh", { TH_COMPLEX_ENTRIES(asinh_loop) } },
  { "acosh", { TH_COMPLEX_ENTRIES(acosh_loop) } }, { "atanh", { TH_COMPLEX_ENTRIES(atanh_loop) } },
  { "log10", { TH_COMPLEX_ENTRIES(log10_loop) } }, { "log2", { TH_COMPLEX_ENTRIES(log2_loop) } },
  { "log1p", { TH_COMPLEX_ENTRIES(log1p_loop) } }, { "expm1", { TH_COMPLEX_ENTRIES(expm1_loop) } },
  { "exp2", { TH_COMPLEX_ENTRIES(exp2_loop) } }, { "rsqrt", { TH_COMPLEX_ENTRIES(rsqrt_loop) } },
  { "sigmoid", { TH_COMPLEX_ENTRIES(sigmoid_loop) } },
  { "isnan", { TH_COMPLEX_ENTRIES(isnan_loop) }, true }, { "isinf", { TH_COMPLEX_ENTRIES(isinf_loop) }, true },
  { "isfinite", { TH_COMPLEX_ENTRIES(isfinite_loop) }, true },
};

THTensor *at_complex_unary(const char *name, const THTensor *a, THTensor *out) {
  if (!strcmp(name, "relu")) {   /* torch's relu is clamp_min(0), which refuses complex */
    THError_set(TH_ERR_NOTIMPL, "clamp is not supported for complex types");
    return NULL;
  }
  if (!strcmp(name, "sign")) {
    THError_set(TH_ERR_NOTIMPL, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                "torch.sgn instead.");
    return NULL;
  }
  for (size_t k = 0; k < sizeof unary_table / sizeof *unary_table; k++)
    if (!strcmp(unary_table[k].name, name))
      return run1(a, out, unary_table[k].predicate ? TH_Bool : a->dtype, unary_table[k].loops[a->dtype], name);
  THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", name, THDtype_info[a->dtype].legacy);
  return NULL;
}

/* sgn: z / |z| (0 at 0) for complex, sign for real */
THTensor *at_sgn(const THTensor *a, THTensor *out) {
  return THDtype_isComplex(a->dtype) ? at_complex_unary("sgn", a, out) : at_sign(a, out);
}

THTensor *at_complex_sum(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out,
                         bool mean) {
  const char *name = mean ? "mean" : "sum";
  if (not_cuda(self, name) < 0) return NULL;
  if (dtype != TH_Undefined && !THDtype_isComplex(dtype)) {
    THError_set(TH_ERR_RUNTIME, "%s(): dtype %s cannot hold the complex values of a %s tensor", name,
                THDtype_info[dtype].legacy, THDtype_info[self->dtype].legacy);
    return NULL;
  }
  THDtype odt = dtype == TH_Undefined ? self->dtype : dtype;
  /* the real view's trailing (re, im) dim is never reduced: wrap dims against self first */
  ATIntList d = { 0 };
  if (dims && dims->n) {
    d.n = dims->n;
    for (int k = 0; k < dims->n; k++)
      if (at_wrap_dim(dims->v[k], self->ndim, &d.v[k]) < 0) return NULL;
  } else {
    d.n = self->ndim;
    for (int k = 0; k < self->ndim; k++) d.v[k] = k;
  }
  THTensor *src = odt == self->dtype ? THTensor_retain((THTensor *)self) : at_to_dtype(self, odt, false);
  THTensor *rv = src ? at_view_as_real(src) : NULL;
  THTensor *s = NULL, *c = NULL, *res = NULL;
  if (rv && self->ndim == 0) s = at_clone(rv, false);   /* dims 0 / -1 (checked above) name no dim of the pair */
  else if (rv) s = mean ? at_mean(rv, &d, keepdim, TH_Undefined, NULL) : at_sum(rv, &d, keepdim, TH_Undefined, NULL);
  if (s) c = at_contiguous(s);
  if (c) res = at_view_as_complex(c);
  if (res && out) res = at_into_out(res, out);
  THTensor_free(c); THTensor_free(s); THTensor_free(rv); THTensor_free(src);
  return res;
}

THTensor *at_fft_c2c(const THTensor *self, int64_t dim, bool forward, double scale) {
  if (not_cuda(self, "fft") < 0) return NULL;
  if (!THDtype_isComplex(self->dtype)) {
    THError_set(TH_ERR_RUNTIME, "_fft_c2c expects a complex input tensor, but got %s", THDtype_info[self->dtype].legacy);
    return NULL;
  }
  int64_t d;
  if (self->ndim == 0) { THError_set(TH_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim); return NULL; }
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
  /* bring dim last, copy into fresh contiguous rows, transform in place, move it back */
  THTensor *tr = at_transpose(self, d, self->ndim - 1);
  THTensor *rows = tr ? at_clone(tr, false) : NULL;
  THTensor_free(tr);
  if (!rows) return NULL;
  int64_t n = self->sizes[d], numel = THTensor_numel(rows), batch = n ? numel / n : 0;
  int rc = self->dtype == TH_ComplexFloat
               ? THComplexFloatTensor_fft_rows((float _Complex *)THTensor_data(rows), n, batch, forward ? -1 : 1, scale)
               : THComplexDoubleTensor_fft_rows((double _Complex *)THTensor_data(rows), n, batch, forward ? -1 : 1, scale);
  if (rc < 0) { THTensor_free(rows); return NULL; }
  THTensor *back = at_transpose(rows, d, self->ndim - 1);
  THTensor_free(rows);
  if (!back) return NULL;
  THTensor *res = at_contiguous(back);
  THTensor_free(back);
  return res;
}

THTensor *at_angle_backward(const THTensor *grad, const THTensor *self) {
  if (!THDtype_isComplex(self->dtype)) {
    THTensor *z = at_scalar_tensor(at_scalar_float(0.0), grad->dtype);
    THTensor *r = z ? at_mul(grad, z, NULL) : NULL;   /* zeros of the gradient's shape and dtype */
    THTensor_free(z);
    return r;
  }
  /* d angle: grad * i / conj(z); i as a 0-d tensor of self's dtype */
  THTensor *iu = THTensor_new(self->dtype, 0, NULL), *c = NULL, *q = NULL, *r = NULL, *zero = NULL, *mask = NULL, *res = NULL;
  if (!iu) return NULL;
  if (self->dtype == TH_ComplexFloat) *(float _Complex *)THTensor_data(iu) = (float _Complex)I;
  else *(double _Complex *)THTensor_data(iu) = (double _Complex)I;
  c = at_conj_physical(self, NULL);
  q = c ? at_div(grad, c, NULL, NULL) : NULL;
  r = q ? at_mul(q, iu, NULL) : NULL;
  zero = r ? at_scalar_tensor(at_scalar_float(0.0), self->dtype) : NULL;
  mask = zero ? at_eq(self, zero, NULL) : NULL;
  res = mask ? at_where(mask, zero, r, NULL) : NULL;
  THTensor_free(iu); THTensor_free(c); THTensor_free(q); THTensor_free(r); THTensor_free(zero); THTensor_free(mask);
  return res;
}
