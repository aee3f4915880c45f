/* Copies, fills and dtype conversions. */
#include "ATen.h"
#include "ATCuda.h"

#include <float.h>
#include <math.h>
#include "../TH/THKernels.h"
#include "../TH/THLoops.h"

#include <string.h>

#include "../TH/THKernelsComplex.h"
#include "../TH/THTranspose.h"
static const THLoopFn copy_loops[TH_NDTYPES] = { TH_BOOL_ENTRIES(copy_loop), TH_INTEGRAL_ENTRIES(copy_loop),
                                                 TH_FLOATING_ENTRIES(copy_loop), TH_COMPLEX_ENTRIES(copy_loop) };
static const THLoopFn fill_loops[TH_NDTYPES] = { TH_BOOL_ENTRIES(fill_loop), TH_INTEGRAL_ENTRIES(fill_loop),
                                                 TH_FLOATING_ENTRIES(fill_loop), TH_COMPLEX_ENTRIES(fill_loop) };

static bool same_geometry(const THTensor *a, const THTensor *b) {
  return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t)) &&
         !memcmp(a->strides, b->strides, a->ndim * sizeof(int64_t));
}

/* Copies involving the meta device move no bytes: into a meta tensor only
 * the shapes are checked; out of one there is nothing to read. */
static int copy_meta(THTensor *dst, const THTensor *src) {
  if (!THTensor_isMeta(dst)) {
    THError_set(TH_ERR_NOTIMPL, "Cannot copy out of meta tensor; no data!");
    return -1;
  }
  int nd;
  int64_t shape[TH_MAX_DIMS];
  if (at_broadcast_sizes(dst->ndim, dst->sizes, src->ndim, src->sizes, &nd, shape) < 0) return -1;
  if (nd != dst->ndim || memcmp(shape, dst->sizes, nd * sizeof(int64_t))) {
    char a[256], b[256];
    THError_set(TH_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                THTensor_sizeStr(dst->ndim, dst->sizes, a, sizeof a), THTensor_sizeStr(nd, shape, b, sizeof b));
    return -1;
  }
  return 0;
}

/* A same-dtype copy of 4-byte elements from a view whose last two dims are transposed
 * (x.t().contiguous(), x.transpose(1, 2).contiguous()) into a contiguous dst that shares no
 * bytes with it: 8 x 8 register transposes (TH/THTranspose.c) instead of the elementwise loop's
 * strided reads. Strips of 8 dst columns split over threads. false when it does not apply. */
static bool copy_transposed(THTensor *dst, const THTensor *src) {
  const int nd = dst->ndim;
  if (dst->dtype != src->dtype || THDtype_size(dst->dtype) != 4 || nd < 2 || nd > 3 || src->ndim != nd ||
      memcmp(dst->sizes, src->sizes, nd * sizeof(int64_t)) || !THTensor_isContiguous(dst))
    return false;
  const int64_t A = dst->sizes[nd - 2], B = dst->sizes[nd - 1], nb = nd == 3 ? dst->sizes[0] : 1;
  const int64_t lds = src->strides[nd - 1], bs = nd == 3 ? src->strides[0] : 0;
  if (src->strides[nd - 2] != 1 || A < 8 || B < 8 || lds < A || bs < 0) return false;
  const char *sp = THTensor_data(src), *dp = THTensor_data(dst);
  const char *se = sp + 4 * ((A - 1) + (B - 1) * lds + (nb - 1) * bs) + 4, *de = dp + 4 * nb * A * B;
  if (!(se <= dp || de <= sp)) return false;
  const float *S = (const float *)sp;
  float *D = (float *)dp;
  const int64_t strips = (B + 7) / 8;
#pragma omp parallel for if (nb * A * B > 65536)
  for (int64_t t = 0; t < nb * strips; t++) {
    const int64_t b = t / strips, i0 = t % strips * 8, m = B - i0 < 8 ? B - i0 : 8;
    THTranspose_f32(m, A, S + b * bs + i0 * lds, lds, D + b * A * B + i0, B);
  }
  return true;
}

int at_copy_(THTensor *dst, const THTensor *src) {
  if (dst == src) return 0;
  if (THTensor_isMeta(dst) || THTensor_isMeta(src)) return copy_meta(dst, src);
  int dd = THTensor_device(dst), sd = THTensor_device(src);
  /* no complex kernels in THC: a complex tensor never reaches the GPU */
  if ((THDtype_isComplex(dst->dtype) || THDtype_isComplex(src->dtype)) && (dd >= 0 || sd >= 0)) {
    THError_set(TH_ERR_NOTIMPL, "copy_: complex dtypes are not implemented on CUDA in cthtorch");
    return -1;
  }
  if (dd != sd && !(dd >= 0 && src->ndim == 0))   /* a 0-d host value broadcasts into the loop */
    return at_copy_across_devices(dst, src, false);
  if (dd >= 0 && dd == sd && dst->dtype == src->dtype && same_geometry(dst, src) && THTensor_isContiguous(dst)) {
    if (THTensor_data(dst) == THTensor_data(src)) return 0;   /* one device's bytes: one device memcpy */
    if (at_check_no_partial_overlap(dst, src) < 0) return -1;
    return at_cuda->memcpy(THTensor_data(dst), THTensor_data(src), THTensor_numel(dst) * THDtype_size(dst->dtype),
                           AT_D2D, true);
  }
  if (dd < 0 && dst->dtype == src->dtype && same_geometry(dst, src) && THTensor_isContiguous(dst)) {
    if (THTensor_data(dst) == THTensor_data(src)) return 0;
    if (at_check_no_partial_overlap(dst, src) < 0) return -1;
    memmove(THTensor_data(dst), THTensor_data(src), THTensor_numel(dst) * THDtype_size(dst->dtype));
    return 0;
  }
  if (dd < 0 && copy_transposed(dst, src)) return 0;
  if (THDtype_isComplex(src->dtype) && !THDtype_isComplex(dst->dtype))
    THWarn("Casting complex values to real discards the imaginary part");
  ATIterSpec spec = { .out = dst, .out_dtype = dst->dtype, .common_dtype = src->dtype, .inplace = true, .name = "copy_" };
  const THTensor *in[1] = { src };
  THTensor *r = at_iter_run(&spec, 1, in, copy_loops[dst->dtype], &src->dtype);
  if (!r) return -1;
  THTensor_free(r);
  return 0;
}

static void scalar_args(THOpArgs *a, int k, ATScalar s) {
  if (s.kind == AT_SCALAR_FLOAT) { a->d[k] = s.d; a->i[k] = (int64_t)s.d; }
  else { a->d[k] = (double)s.i; a->i[k] = s.i; }
}

/* c10's overflow rule for a number written into dt: integers in range
 * (unsigned types also take -max..-1, which wrap), floats to an integer
 * type in range and not NaN/inf, float32 finite values below FLT_MAX;
 * half, bfloat16 and bool take anything. cpp_names: the message names the
 * C++ type ("uint8_t", "int", as fill_ does) rather than the dtype. */
int at_scalar_check_fits(ATScalar s, THDtype dt, bool cpp_names) {
  static const struct { THDtype dt; double lo, hi; bool sgn; const char *cpp, *name; } lim[] = {
    { TH_UInt8, 0, 255, false, "uint8_t", "uint8" }, { TH_Int8, -128, 127, true, "int8_t", "int8" },
    { TH_Int16, -32768, 32767, true, "int16_t", "int16" }, { TH_Int32, -2147483648.0, 2147483647.0, true, "int", "int32" },
    { TH_Int64, -9223372036854775808.0, 9223372036854775807.0, true, "int64_t", "int64" },
  };
  bool bad = false;
  const char *cpp = NULL, *name = NULL;
  if (dt == TH_Float) {
    bad = s.kind == AT_SCALAR_FLOAT && isfinite(s.d) && fabs(s.d) > FLT_MAX;
    cpp = "float"; name = "float32";
  }
  for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
    if (lim[k].dt != dt) continue;
    cpp = lim[k].cpp; name = lim[k].name;
    if (s.kind == AT_SCALAR_FLOAT) bad = isnan(s.d) || s.d < lim[k].lo || s.d > lim[k].hi;
    else if (s.kind == AT_SCALAR_INT && dt != TH_Int64)
      bad = (double)s.i > lim[k].hi || (lim[k].sgn ? (double)s.i < lim[k].lo : -(double)s.i > lim[k].hi);
  }
  if (!bad) return 0;
  THError_set(TH_ERR_RUNTIME, "value cannot be converted to type %s without overflow", cpp_names ? cpp : name);
  return -1;
}

static int fill_with(THTensor *t, THOpArgs *args);

int at_fill_(THTensor *t, ATScalar value) {
  if (at_scalar_check_fits(value, t->dtype, true) < 0) return -1;
  THOpArgs args;
  scalar_args(&args, 0, value);
  args.d[1] = 0.0;   /* a complex fill's imaginary part */
  if (t->dtype == TH_Bool) args.i[0] = value.kind == AT_SCALAR_FLOAT ? value.d != 0 : value.i != 0;
  return fill_with(t, &args);
}

/* A complex number (torch's complex Scalar; ATScalar is real): a real dtype takes it only without an
 * imaginary part (c10's overflow check names the C++ type), bool takes any as its truth */
int at_fill_complex_(THTensor *t, double re, double im) {
  static const char *cpp[TH_NDTYPES] = { [TH_UInt8] = "uint8_t", [TH_Int8] = "int8_t", [TH_Int16] = "int16_t",
                                         [TH_Int32] = "int", [TH_Int64] = "int64_t", [TH_Half] = "c10::Half",
                                         [TH_BFloat16] = "c10::BFloat16", [TH_Float] = "float", [TH_Double] = "double" };
  if (t->dtype == TH_Bool) return at_fill_(t, at_scalar_bool(re != 0 || im != 0));
  if (!THDtype_isComplex(t->dtype)) {
    if (im != 0) {
      THError_set(TH_ERR_RUNTIME, "value cannot be converted to type %s without overflow",
                  cpp[t->dtype] ? cpp[t->dtype] : THDtype_info[t->dtype].name);
      return -1;
    }
    return at_fill_(t, at_scalar_float(re));
  }
  THOpArgs args;
  scalar_args(&args, 0, at_scalar_float(re));
  args.d[1] = im;
  return fill_with(t, &args);
}

static int fill_with(THTensor *t, THOpArgs *args) {
  /* torch fills a tensor whose elements alias (an expanded view): every
   * location gets the one value, so the dims of stride 0 are cut to size 1 */
  int64_t sizes[TH_MAX_DIMS];
  bool alias = false;
  for (int i = 0; i < t->ndim; i++) {
    sizes[i] = t->strides[i] == 0 && t->sizes[i] > 1 ? 1 : t->sizes[i];
    alias |= sizes[i] != t->sizes[i];
  }
  THTensor *target = alias ? THTensor_newView(t, t->ndim, sizes, t->strides, t->offset) : THTensor_retain(t);
  if (!target) return -1;
  int rc = at_check_no_internal_overlap(target);
  ATIterSpec spec = { .out = target, .out_dtype = t->dtype, .common_dtype = t->dtype, .inplace = true, .name = "fill_" };
  THTensor *r = rc < 0 ? NULL : at_iter_run(&spec, 0, NULL, fill_loops[t->dtype], args);
  THTensor_free(target);
  if (!r) return -1;
  THTensor_free(r);
  return 0;
}

/* A new tensor shaped like t; dense permuted layouts are preserved. */
static THTensor *empty_like_layout(const THTensor *t, THDtype dtype, bool preserve) {
  bool keep = preserve && !THTensor_isContiguous(t) && THTensor_isNonOverlappingAndDense(t);
  return at_new_on(THTensor_device(t), dtype, t->ndim, t->sizes, keep ? t->strides : NULL);
}

THTensor *at_clone(const THTensor *t, bool preserve_layout) {
  THTensor *r = empty_like_layout(t, t->dtype, preserve_layout);
  if (!r) return NULL;
  if (at_copy_(r, t) < 0) { THTensor_free(r); return NULL; }
  return r;
}

THTensor *at_contiguous(const THTensor *t) {
  if (THTensor_isContiguous(t)) return THTensor_retain((THTensor *)t);
  return at_clone(t, false);
}

/* The channels-last formats' dims from fastest to slowest: C, the spatial dims from last to first,
 * N. The rank they need; 0 for the other formats. */
static int channels_last_order(ATMemoryFormat f, int order[5]) {
  int rank = f == AT_CHANNELS_LAST ? 4 : f == AT_CHANNELS_LAST_3D ? 5 : 0;
  if (!rank) return 0;
  order[0] = 1;
  for (int i = 1; i < rank - 1; i++) order[i] = rank - i;
  order[rank - 1] = 0;
  return rank;
}

static void channels_last_strides(const int64_t *sizes, const int *order, int rank, int64_t *strides) {
  int64_t step = 1;
  for (int i = 0; i < rank; i++) {   /* plain products: a size-0 channel gives the slower dims stride 0, as torch */
    strides[order[i]] = step;
    step *= sizes[order[i]];
  }
}

static int check_format_rank(const THTensor *t, int rank) {
  if (t->ndim == rank) return 0;
  THError_set(TH_ERR_RUNTIME, "required rank %d tensor to use %s format", rank, rank == 4 ? "channels_last" : "channels_last_3d");
  return -1;
}

int at_restride_format(THTensor *t, ATMemoryFormat f) {
  int order[5], rank = channels_last_order(f, order);
  if (!rank) return 0;   /* resize_ already left its sizes contiguous */
  if (check_format_rank(t, rank) < 0) return -1;
  channels_last_strides(t->sizes, order, rank, t->strides);
  return 0;
}

bool at_is_contiguous_format(const THTensor *t, ATMemoryFormat f) {
  int order[5], rank = channels_last_order(f, order);
  if (!rank) return THTensor_isContiguous(t);
  if (t->ndim != rank) return false;
  /* size-1 dims may have any stride, as torch's check */
  int64_t expected = 1;
  for (int i = 0; i < rank; i++) {
    int d = order[i];
    if (t->sizes[d] == 1) continue;
    if (t->strides[d] != expected) return false;
    expected *= t->sizes[d];
  }
  return true;
}

THTensor *at_clone_format(const THTensor *t, ATMemoryFormat f) {
  int order[5], rank = channels_last_order(f, order);
  if (!rank) return at_clone(t, f == AT_PRESERVE_FORMAT);
  if (check_format_rank(t, rank) < 0) return NULL;
  int64_t strides[5];
  channels_last_strides(t->sizes, order, rank, strides);
  THTensor *r = at_new_on(THTensor_device(t), t->dtype, rank, t->sizes, strides);
  if (!r) return NULL;
  if (at_copy_(r, t) < 0) { THTensor_free(r); return NULL; }
  return r;
}

THTensor *at_contiguous_format(const THTensor *t, ATMemoryFormat f) {
  /* preserve reads as contiguous: torch refuses it only when a copy is needed */
  if (at_is_contiguous_format(t, f)) return THTensor_retain((THTensor *)t);
  if (f == AT_PRESERVE_FORMAT) {
    THError_set(TH_ERR_RUNTIME, "preserve memory format is unsupported by the contiguous operator");
    return NULL;
  }
  return at_clone_format(t, f);
}

ATMemoryFormat at_suggest_format(const THTensor *t) {
  ATMemoryFormat f = t->ndim == 4 ? AT_CHANNELS_LAST : t->ndim == 5 ? AT_CHANNELS_LAST_3D : AT_CONTIGUOUS_FORMAT;
  int order[5], rank = channels_last_order(f, order);
  if (!rank || t->strides[1] == 0) return AT_CONTIGUOUS_FORMAT;
  /* each dim's stride at least the span of the faster ones; N must not merely repeat C's stride (an (N,1,..,1)
   * tensor reads as contiguous) */
  int64_t span = 0;
  for (int i = 0; i < rank; i++) {
    int d = order[i];
    if (t->sizes[d] == 0 || t->strides[d] < span) return AT_CONTIGUOUS_FORMAT;
    if (d == 0 && span == t->strides[1]) return AT_CONTIGUOUS_FORMAT;
    span = t->sizes[d] > 1 ? t->strides[d] * t->sizes[d] : t->strides[d];
  }
  return f;
}

int at_keep_format(const THTensor *like, THTensor **out) {
  ATMemoryFormat f = at_suggest_format(like);
  if (f == AT_CONTIGUOUS_FORMAT || !*out || (*out)->ndim != like->ndim) return 0;
  /* torch's exact strides, those of size-1 dims too */
  int order[5], rank = channels_last_order(f, order);
  int64_t strides[5];
  channels_last_strides((*out)->sizes, order, rank, strides);
  if (!memcmp(strides, (*out)->strides, sizeof(int64_t) * rank)) return 0;
  THTensor *r = at_clone_format(*out, f);
  THTensor_free(*out);
  *out = r;
  return r ? 0 : -1;
}

THTensor *at_to_dtype(const THTensor *t, THDtype dtype, bool copy) {
  if (t->dtype == dtype && !copy) return THTensor_retain((THTensor *)t);
  THTensor *r = empty_like_layout(t, dtype, true);
  if (!r) return NULL;
  if (at_copy_(r, t) < 0) { THTensor_free(r); return NULL; }
  r->wrapped_number = t->wrapped_number;
  return r;
}

THTensor *at_scalar_tensor(ATScalar s, THDtype dtype) {
  THTensor *r = THTensor_new(dtype, 0, NULL);
  if (!r) return NULL;
  if (at_fill_(r, s) < 0) { THTensor_free(r); return NULL; }
  return r;
}

/* Element 0 of t, read directly (no loop machinery: this is .item()'s path). */
#define AT_READ(T, RESULT)                                                   \
  _Alignas(8) char dev_copy_[8];                                             \
  if (THTensor_isMeta(t)) {                                                  \
    THError_set(TH_ERR_RUNTIME, "Tensor.item() cannot be called on meta tensors"); \
    return RESULT;                                                           \
  }                                                                          \
  const char *p = THTensor_data(t);                                          \
  if (THTensor_device(t) >= 0) {   /* one element across: the host cannot read GPU memory */ \
    if (at_cuda->memcpy(dev_copy_, p, THDtype_size(t->dtype), AT_D2H, false) < 0) return RESULT; \
    p = dev_copy_;                                                           \
  }                                                                          \
  switch (t->dtype) {                                                        \
    /* a byte, not a _Bool: an element of empty()/resize_() memory may hold \
     * any value, and loading that as _Bool is undefined */                 \
    case TH_Bool: return (T)(*(const uint8_t *)p != 0);                      \
    case TH_UInt8: return (T)*(const uint8_t *)p;                            \
    case TH_Int8: return (T)*(const int8_t *)p;                              \
    case TH_Int16: return (T)*(const int16_t *)p;                            \
    case TH_Int32: return (T)*(const int32_t *)p;                            \
    case TH_Int64: return (T)*(const int64_t *)p;                            \
    case TH_Half: return (T)th_half2float(*(const THHalf *)p);               \
    case TH_BFloat16: return (T)th_bf2float(*(const THBFloat16 *)p);         \
    case TH_Float: return (T)*(const float *)p;                              \
    case TH_Double: return (T)*(const double *)p;                            \
    default: return RESULT;                                                  \
  }
double at_item_double(const THTensor *t) { AT_READ(double, 0) }
int64_t at_item_int(const THTensor *t) { AT_READ(int64_t, 0) }

int at_item_complex(const THTensor *t, double *re, double *im) {
  _Alignas(16) char dev_copy[16];
  if (THTensor_isMeta(t)) {
    THError_set(TH_ERR_RUNTIME, "Tensor.item() cannot be called on meta tensors");
    return -1;
  }
  const char *p = THTensor_data(t);
  if (THTensor_device(t) >= 0) {
    if (at_cuda->memcpy(dev_copy, p, THDtype_size(t->dtype), AT_D2H, false) < 0) return -1;
    p = dev_copy;
  }
  if (t->dtype == TH_ComplexFloat) {
    float v[2];
    memcpy(v, p, sizeof v);
    *re = v[0]; *im = v[1];
  } else {
    double v[2];
    memcpy(v, p, sizeof v);
    *re = v[0]; *im = v[1];
  }
  return 0;
}

const char *at_cpp_dtype_name(THDtype t) {
  static const char *names[TH_NDTYPES] = { "bool", "unsigned char", "signed char", "short int", "int", "long int",
                                           "c10::Half", "c10::BFloat16", "float", "double",
                                           "c10::complex<float>", "c10::complex<double>" };
  return t >= 0 && t < TH_NDTYPES ? names[t] : "?";
}

int at_resize_out(THTensor *out, int ndim, const int64_t *shape) {
  if (out->ndim == ndim && memcmp(out->sizes, shape, ndim * sizeof(int64_t)) == 0) return 0;
  if (THTensor_numel(out) != 0) {
    char b0[256], b1[256];
    THWarn("An output with one or more elements was resized since it had shape %s, which does not match "
           "the required output shape %s. This behavior is deprecated, and in a future PyTorch release "
           "outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
           "tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
           THTensor_sizeStr(out->ndim, out->sizes, b0, 256), THTensor_sizeStr(ndim, shape, b1, 256));
  }
  return THTensor_resize(out, ndim, shape);
}

int at_write_out(THTensor *out, const THTensor *res) {
  if (out->dtype != res->dtype) {
    THError_set(TH_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                at_cpp_dtype_name(res->dtype), at_cpp_dtype_name(out->dtype));
    return -1;
  }
  if (at_resize_out(out, res->ndim, res->sizes) < 0) return -1;
  return at_copy_(out, res);
}

THTensor *at_into_out(THTensor *res, THTensor *out) {
  if (!res || !out) return res;
  int rc = (out->ndim != res->ndim || memcmp(out->sizes, res->sizes, sizeof(int64_t) * res->ndim))
               ? THTensor_resize(out, res->ndim, res->sizes) : 0;
  if (rc == 0) rc = at_copy_(out, res);
  THTensor_free(res);
  return rc < 0 ? NULL : THTensor_retain(out);
}
