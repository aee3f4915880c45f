/* ATen: the C operator layer. One entry point per op, named at_<op>.
 *
 * Conventions (every op follows them; generated bindings rely on it):
 *   - inputs are borrowed `const THTensor *`; the result is a new reference
 *     (THTensor_free it), or NULL with THError set;
 *   - ops with an `out` parameter write into it when it is non-NULL and
 *     return a new reference to it; NULL means "allocate";
 *   - in-place forms are the out-forms called with out == self;
 *   - devices: CPU kernels come from src/TH; the device slot of every
 *     tensor is checked in at_dispatch_device() so THC can plug in.
 */
#ifndef AT_ATEN_H
#define AT_ATEN_H

#include "../TH/THTensor.h"
#include "../TH/THDispatch.h"

#define AT_API TH_API

/* A Python number crossing into C. Ints and bools are "weak" in promotion. */
typedef enum { AT_SCALAR_BOOL, AT_SCALAR_INT, AT_SCALAR_FLOAT } ATScalarKind;
typedef struct { ATScalarKind kind; int64_t i; double d; } ATScalar;
static inline ATScalar at_scalar_int(int64_t v) { ATScalar s = {AT_SCALAR_INT, v, (double)v}; return s; }
static inline ATScalar at_scalar_float(double v) { ATScalar s = {AT_SCALAR_FLOAT, (int64_t)v, v}; return s; }
static inline ATScalar at_scalar_bool(bool v) { ATScalar s = {AT_SCALAR_BOOL, v, v}; return s; }

/* Optional scalar/int/double arguments. */
typedef struct { bool has; ATScalar v; } ATOptScalar;
typedef struct { bool has; int64_t v; } ATOptInt;
typedef struct { bool has; double v; } ATOptDouble;
/* An int list argument (sizes, dims). */
typedef struct { int n; int64_t v[TH_MAX_DIMS]; } ATIntList;
/* A Tensor[] / Tensor?[] argument: n borrowed tensors (NULL entries for None in Tensor?[]); the caller owns the array. */
typedef struct { int n; THTensor **v; } ATTensorList;

/* ---- threads ---- */
AT_API void at_set_num_threads(int n);
AT_API int at_get_num_threads(void);

/* ---- devices (ATDevice.c; the CUDA table is ATCuda.h) ---- */
/* Data not in host memory: a GPU tensor, or a meta one (no data at all).
 * Ops take their device path for both, and that path allocates outputs on
 * the inputs' device and skips the kernel when the device is meta. */
static inline bool at_off_host(const THTensor *t) { return THTensor_device(t) != -1; }
/* "cpu" / "cuda:N" / "meta" */
AT_API const char *at_device_str(int device, char *buf, size_t n);
/* The allocator for device (NULL: host); makes device current. */
AT_API const THAllocator *at_allocator_for(int device);
/* A new tensor on device (-1: host; TH_DEVICE_META: no memory); strides NULL: contiguous. */
AT_API THTensor *at_new_on(int device, THDtype dtype, int ndim, const int64_t *sizes, const int64_t *strides);
/* A new tensor on device shaped like t, in dtype: t's strides kept where t is dense (a
 * permutation of a contiguous layout), else contiguous; torch's preserve_format. */
AT_API THTensor *at_empty_like_on(const THTensor *t, int device, THDtype dtype);
/* The device an op on ts runs on: their common GPU, else the host. 0-d host
 * tensors (numbers) join any device; anything else mixed is PyTorch's
 * "Expected all tensors to be on the same device" error. Meta tensors join
 * meta ones and 0-d host ones only. NULL entries skipped. */
AT_API int at_common_device(int n, const THTensor *const *ts, const char *name, int *device);
/* t on device in dtype (the same tensor when nothing changes and !copy). */
AT_API THTensor *at_to_device(const THTensor *t, int device, THDtype dtype, bool copy);
/* dst.copy_(src) where they live on different devices. */
AT_API int at_copy_across_devices(THTensor *dst, const THTensor *src, bool non_blocking);

/* ---- dtypes (ATDtype.c) ---- */
AT_API THDtype at_default_dtype(void);
AT_API int at_set_default_dtype(THDtype t);
AT_API THDtype at_promote_types(THDtype a, THDtype b);
AT_API bool at_can_cast(THDtype from, THDtype to);
/* PyTorch's result_type over tensors (0-d and wrapped numbers are weak). */
AT_API THDtype at_result_type(int n, const THTensor *const *ts);
AT_API THDtype at_scalar_dtype(ATScalar s);
/* Casting check with PyTorch's message; -1 on failure. */
AT_API int at_check_cast(THDtype result, THDtype out);

/* ---- the elementwise loop driver (ATIter.c) ---- */
typedef struct {
  THTensor *out;        /* NULL: allocate */
  THDtype out_dtype;    /* dtype to allocate / compute the output in */
  THDtype common_dtype; /* inputs are converted to this first */
  bool inplace;         /* out is the op's self: no resize allowed */
  bool check_cast;      /* out->dtype must be castable from out_dtype */
  const char *name;     /* for messages */
  const THDtype *in_dtypes;  /* optional per-input dtypes (TH_Undefined: common_dtype) */
} ATIterSpec;
/* Runs fn over the broadcast of nin inputs; returns the output. */
AT_API THTensor *at_iter_run(ATIterSpec *spec, int nin, const THTensor *const *in, THLoopFn fn,
                             const void *extra);
/* Broadcast shape of n shapes; -1 with PyTorch's message on mismatch. */
AT_API int at_broadcast_shape(int n, const THTensor *const *ts, int *ndim, int64_t *shape);
AT_API int at_broadcast_sizes(int na, const int64_t *a, int nb, const int64_t *b, int *ndim, int64_t *out);
/* Memory overlap checks used by in-place and out= ops. */
AT_API int at_check_no_internal_overlap(const THTensor *t);
AT_API int at_check_no_partial_overlap(const THTensor *a, const THTensor *b);
/* After a kernel ran: turn a kernel-flagged error into THError. */
AT_API int at_check_kernel_error(void);
/* Makes a tensor of the given dtype holding a scalar (0-d). */
AT_API THTensor *at_scalar_tensor(ATScalar s, THDtype dtype);
/* Reads element 0 of t as double / int64. */
AT_API double at_item_double(const THTensor *t);
/* the value of a one-element complex tensor; -1 with the error (a meta tensor) */
AT_API int at_item_complex(const THTensor *t, double *re, double *im);
AT_API int64_t at_item_int(const THTensor *t);

/* ---- factories (ATFactory.c) ---- */
AT_API THTensor *at_empty(const ATIntList *size, THDtype dtype);
AT_API THTensor *at_empty_strided(const ATIntList *size, const ATIntList *stride, THDtype dtype);
AT_API THTensor *at_full(const ATIntList *size, ATScalar value, THDtype dtype);
AT_API THTensor *at_arange(ATScalar start, ATScalar end, ATScalar step, THDtype dtype, bool dtype_given);
AT_API THTensor *at_linspace(ATScalar start, ATScalar end, int64_t steps, THDtype dtype);
AT_API THTensor *at_logspace(ATScalar start, ATScalar end, int64_t steps, double base, THDtype dtype);
AT_API THTensor *at_eye(int64_t n, int64_t m, THDtype dtype);

/* ---- copy and fill (ATCopy.c) ---- */
/* dst[...] = src broadcast to dst's shape, converting dtype. */
AT_API int at_copy_(THTensor *dst, const THTensor *src);
AT_API int at_fill_(THTensor *t, ATScalar value);
/* fills t with re + im*i (a Python complex fill value); -1 with torch's error where t's dtype cannot hold it */
AT_API int at_fill_complex_(THTensor *t, double re, double im);
/* -1 with torch's "value cannot be converted to type X without overflow"
 * when s doesn't fit dt (c10's rule; see ATCopy.c). */
AT_API int at_scalar_check_fits(ATScalar s, THDtype dt, bool cpp_names);
AT_API THTensor *at_clone(const THTensor *t, bool preserve_layout);
AT_API THTensor *at_contiguous(const THTensor *t);   /* returns t retained when already contiguous */
/* torch.memory_format, in the order of the Python objects (THPMemoryFormat_objs) */
typedef enum { AT_CONTIGUOUS_FORMAT, AT_PRESERVE_FORMAT, AT_CHANNELS_LAST, AT_CHANNELS_LAST_3D } ATMemoryFormat;
AT_API bool at_is_contiguous_format(const THTensor *t, ATMemoryFormat f);
/* a copy laid out in f (preserve: t's own layout when dense); channels_last wants rank 4, _3d rank 5 */
AT_API THTensor *at_clone_format(const THTensor *t, ATMemoryFormat f);
/* t's strides set to f's for its sizes (resize_'s memory_format); -1 when t's rank is not f's */
AT_API int at_restride_format(THTensor *t, ATMemoryFormat f);
/* t retained when already laid out in f, else at_clone_format; preserve is torch's error */
AT_API THTensor *at_contiguous_format(const THTensor *t, ATMemoryFormat f);
/* torch's suggest_memory_format: channels_last(_3d) when t's strides run C, the spatial dims from last to
 * first, then N (a slice of such a tensor too), else contiguous */
AT_API ATMemoryFormat at_suggest_format(const THTensor *t);
/* the ops that keep their input's layout (conv, pooling, batch_norm, upsample): *out replaced by a copy laid
 * out in `like`'s suggested format when that is channels-last and *out has its rank; 0, or -1 (and *out freed) */
AT_API int at_keep_format(const THTensor *like, THTensor **out);
AT_API THTensor *at_to_dtype(const THTensor *t, THDtype dtype, bool copy);
/* out= for ops that compute into a new tensor: out resized to res's shape and
 * filled from it; consumes res; returns out retained (res when out is NULL). */
AT_API THTensor *at_into_out(THTensor *res, THTensor *out);
/* out= resized to an op's result shape, with torch's deprecation warning when
 * out held elements in another shape */
AT_API int at_resize_out(THTensor *out, int ndim, const int64_t *shape);
/* out= of an op computed into the fresh tensor res: out must have res's dtype
 * (torch's "Expected out tensor to have dtype ..."), is resized
 * (at_resize_out) and filled from res */
AT_API int at_write_out(THTensor *out, const THTensor *res);
/* C++'s name of a dtype ("long int", "c10::Half"), as torch's messages print it */
AT_API const char *at_cpp_dtype_name(THDtype t);

/* ---- views (ATView.c): no copies, share storage ---- */
AT_API int at_wrap_dim(int64_t dim, int ndim, int64_t *out);   /* IndexError message */
AT_API THTensor *at_view(const THTensor *t, const ATIntList *size);
/* view(dtype): the same bytes as another dtype; a different element size
 * rescales the last dim (torch's view.dtype rules and texts) */
AT_API THTensor *at_view_dtype(const THTensor *t, THDtype dtype);
AT_API THTensor *at_reshape(const THTensor *t, const ATIntList *size);
/* 1: reshape(t, size) is a view of t; 0: it copies; -1: size does not fit t (error set) */
AT_API int at_reshape_views(const THTensor *t, const ATIntList *size);
AT_API THTensor *at_as_strided(const THTensor *t, const ATIntList *size, const ATIntList *stride, ATOptInt offset);
AT_API THTensor *at_permute(const THTensor *t, const ATIntList *dims);
AT_API THTensor *at_transpose(const THTensor *t, int64_t d0, int64_t d1);
AT_API THTensor *at_t(const THTensor *t);
AT_API THTensor *at_expand(const THTensor *t, const ATIntList *size);
AT_API THTensor *at_narrow(const THTensor *t, int64_t dim, int64_t start, int64_t length);
AT_API THTensor *at_select(const THTensor *t, int64_t dim, int64_t index);
AT_API THTensor *at_slice(const THTensor *t, int64_t dim, ATOptInt start, ATOptInt end, int64_t step);
/* Multi-output views (split, split_with_sizes, unbind): out->v is a malloc'd array of new views of t */
AT_API int at_split_views(ATTensorList *out, const THTensor *t, int64_t split_size, int64_t dim);
AT_API int at_split_with_sizes_views(ATTensorList *out, const THTensor *t, const ATIntList *split_sizes, int64_t dim);
AT_API int at_unbind_views(ATTensorList *out, const THTensor *t, int64_t dim);
AT_API THTensor *at_squeeze(const THTensor *t);
AT_API THTensor *at_squeeze_dims(const THTensor *t, const ATIntList *dims);
AT_API THTensor *at_unsqueeze(const THTensor *t, int64_t dim);
AT_API int at_flatten_shape(const THTensor *t, int64_t start, int64_t end, ATIntList *shape);
AT_API THTensor *at_flatten(const THTensor *t, int64_t start, int64_t end);
AT_API THTensor *at_unflatten(const THTensor *t, int64_t dim, const ATIntList *sizes);
AT_API THTensor *at_unfold(const THTensor *t, int64_t dim, int64_t size, int64_t step);
AT_API THTensor *at_movedim(const THTensor *t, const ATIntList *src, const ATIntList *dst);
AT_API THTensor *at_diagonal(const THTensor *t, int64_t offset, int64_t d1, int64_t d2);
AT_API THTensor *at_alias(const THTensor *t);

/* ---- pointwise (ATPointwise.c) ---- */
AT_API THTensor *at_add(const THTensor *a, const THTensor *b, ATScalar alpha, THTensor *out);
AT_API THTensor *at_sub(const THTensor *a, const THTensor *b, ATScalar alpha, THTensor *out);
AT_API THTensor *at_mul(const THTensor *a, const THTensor *b, THTensor *out);
/* rounding: NULL, "trunc" or "floor" */
AT_API THTensor *at_div(const THTensor *a, const THTensor *b, const char *rounding, THTensor *out);
/* Binary ops: THTensor *at_<name>(const THTensor *a, const THTensor *b, THTensor *out).
 * The X-macro lists name, result kind and kernel table (ATPointwise.c). */
#define AT_BINARY_OPS(_) \
  _(remainder) _(fmod) _(pow) _(atan2) _(hypot) _(copysign) _(maximum) _(minimum) \
  _(fmax) _(fmin) _(bitwise_and) _(bitwise_or) _(bitwise_xor) \
  _(bitwise_left_shift) _(bitwise_right_shift) _(floor_divide) \
  _(eq) _(ne) _(lt) _(le) _(gt) _(ge) _(logical_and) _(logical_or) _(logical_xor)
#define AT_DECL_BINARY(n) AT_API THTensor *at_##n(const THTensor *a, const THTensor *b, THTensor *out);
AT_BINARY_OPS(AT_DECL_BINARY)
/* Unary ops: THTensor *at_<name>(const THTensor *a, THTensor *out). */
#define AT_UNARY_OPS(_) \
  _(exp) _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p) _(sin) _(cos) _(tan) \
  _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh) _(asinh) _(acosh) _(atanh) \
  _(sqrt) _(rsqrt) _(sigmoid) _(erf) _(erfc) _(erfinv) _(lgamma) _(digamma) \
  _(reciprocal) _(ceil) _(floor) _(round) _(trunc) _(frac) _(neg) _(abs) _(sign) \
  _(relu) _(isnan) _(isinf) _(isfinite) _(signbit) _(bitwise_not) _(logical_not)
#define AT_DECL_UNARY(n) AT_API THTensor *at_##n(const THTensor *a, THTensor *out);
AT_UNARY_OPS(AT_DECL_UNARY)

/* where(condition, a, b): a where condition is true, else b */
AT_API THTensor *at_where(const THTensor *cond, const THTensor *a, const THTensor *b, THTensor *out);

/* ---- view backward helpers (ATViewBackward.c) ---- */
AT_API THTensor *at_narrow_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, int64_t start, int64_t len);
AT_API THTensor *at_select_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, int64_t index);
AT_API THTensor *at_slice_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, ATOptInt start,
                                   ATOptInt end, int64_t step);
AT_API THTensor *at_diagonal_backward(const THTensor *g, const ATIntList *sizes, int64_t off, int64_t d1, int64_t d2);
AT_API THTensor *at_unfold_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, int64_t size, int64_t step);
AT_API THTensor *at_as_strided_backward(const THTensor *g, const ATIntList *input_size, const ATIntList *input_stride,
                                        ATOptInt input_offset, int64_t storage_numel, const ATIntList *size,
                                        const ATIntList *stride, ATOptInt offset);
AT_API THTensor *at_sum_to_size(const THTensor *t, const ATIntList *size);

/* ---- reductions (ATReduce.c; driver in ATReduce.h). dims NULL/empty = all. ---- */
AT_API THTensor *at_sum(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out);
AT_API THTensor *at_mean(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out);

#endif
