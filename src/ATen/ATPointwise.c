/* Pointwise ops: each is a kernel table plus a rule for the result dtype;
 * at_iter_run does the rest. */
#include "ATPointwise.h"
#include "../TH/THKernelsPointwise.h"
#include "../TH/THKernels.h"
#include "../TH/THLoops.h"
#include "../TH/THSpecialFunctions.h"   /* th_zeta, shared with special.zeta */
#include "../TH/THKernelsComplex.h"
#include "ATComplex.h"

#include <string.h>
#include <math.h>
#include <float.h>

typedef enum {
  R_SAME,      /* out dtype = promoted dtype */
  R_FLOAT,     /* integers promote to the default float dtype */
  R_BOOL,      /* comparisons and logical ops: bool out, compute in promoted dtype */
  R_INTEGRAL,  /* bitwise: integers and bool only */
} ResultRule;

typedef struct {
  const char *name;      /* kernel name for "not implemented for" messages */
  ResultRule rule;
  THLoopFn loops[TH_NDTYPES];
  bool scalar_opmath;    /* half/bfloat16 with a 0-d second operand compute in float (mul: checked against torch) */
} OpDef;

static void scalar_arg(THOpArgs *a, int k, ATScalar s) {
  if (s.kind == AT_SCALAR_FLOAT) { a->d[k] = s.d; a->i[k] = (int64_t)s.d; }
  else { a->d[k] = (double)s.i; a->i[k] = s.i; }
}

static THDtype compute_dtype(const OpDef *op, THDtype promoted) {
  if (op->rule == R_FLOAT && !THDtype_isFloating(promoted) && !THDtype_isComplex(promoted)) return at_default_dtype();
  return promoted;
}

/* whether v, as the float torch computes with, is a value of 16-bit dtype dt:
 * then the dt loop (which computes in float) gives torch's result directly */
static bool exact_in(double v, THDtype dt) {
  float f = (float)v;
  float back = dt == TH_Half ? th_half2float(th_float2half(f)) : th_bf2float(th_float2bf(f));
  return back == f || (isnan(f) && isnan(back));
}

static THTensor *run_binary(const OpDef *op, const THTensor *a, const THTensor *b, THTensor *out,
                            const void *extra) {
  const THTensor *in[2] = { a, b };
  THDtype common = compute_dtype(op, at_result_type(2, in));
  THLoopFn fn = op->loops[common];
  if (!fn || (op->rule == R_INTEGRAL && THDtype_isFloating(common))) {
    int nd;   /* torch reports shapes that do not broadcast before the dtype it lacks */
    int64_t shape[TH_MAX_DIMS];
    if (at_broadcast_shape(2, in, &nd, shape) < 0) return NULL;
  }
  if (op->rule == R_INTEGRAL && THDtype_isFloating(common)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", op->name, THDtype_info[common].legacy);
    return NULL;
  }
  if (!fn) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", op->name, THDtype_info[common].legacy);
    return NULL;
  }
  if (op->scalar_opmath && (common == TH_Half || common == TH_BFloat16) && b->ndim == 0 &&
      THTensor_device(a) == -1 && THTensor_device(b) == -1 && !exact_in(at_item_double(b), common)) {
    /* torch's CPU kernel reads a 0-d second operand as a float and computes in
     * float, so the number is never rounded to half first (0 * 2**40 is 0, not
     * 0 * inf); the float result is rounded once, to the half output. Three
     * passes, so only for numbers the 16-bit type cannot hold (exact_in). */
    ATIterSpec spec = { .out = out, .out_dtype = TH_Float, .common_dtype = TH_Float, .inplace = out == a,
                        .check_cast = true, .name = op->name };
    THTensor *r = at_iter_run(&spec, 2, in, op->loops[TH_Float], extra);
    if (!r || out) return r;
    THTensor *h = at_to_dtype(r, common, false);
    THTensor_free(r);
    return h;
  }
  ATIterSpec spec = { .out = out, .out_dtype = op->rule == R_BOOL ? TH_Bool : common, .common_dtype = common, .inplace = out == a, .check_cast = true, .name = op->name };
  return at_iter_run(&spec, 2, in, fn, extra);
}

static const OpDef op_add = { "add", R_SAME, { TH_BOOL_ENTRIES(add_loop), TH_INTEGRAL_ENTRIES(add_loop), TH_FLOATING_ENTRIES(add_loop), TH_COMPLEX_ENTRIES(add_loop) } };
static const OpDef op_sub = { "sub", R_SAME, { TH_BOOL_ENTRIES(sub_loop), TH_INTEGRAL_ENTRIES(sub_loop), TH_FLOATING_ENTRIES(sub_loop), TH_COMPLEX_ENTRIES(sub_loop) } };
static const OpDef op_mul = { "mul", R_SAME, { TH_BOOL_ENTRIES(mul_loop), TH_INTEGRAL_ENTRIES(mul_loop), TH_FLOATING_ENTRIES(mul_loop), TH_COMPLEX_ENTRIES(mul_loop) }, true };
static const OpDef op_div = { "div_true", R_FLOAT, { TH_FLOATING_ENTRIES(div_loop), TH_COMPLEX_ENTRIES(div_loop) } };
static const OpDef op_div_trunc = { "div_trunc", R_SAME, TH_ALL_TABLE(div_trunc_loop) };
static const OpDef op_div_floor = { "div_floor", R_SAME, TH_ALL_TABLE(div_floor_loop) };

static int check_alpha(const THTensor *a, const THTensor *b, ATScalar alpha) {
  const THTensor *in[2] = { a, b };
  THDtype common = at_result_type(2, in);
  if (alpha.kind == AT_SCALAR_FLOAT && !THDtype_isFloating(common) && !THDtype_isComplex(common)) {
    THError_set(TH_ERR_RUNTIME, "For integral input tensors, argument alpha must not be a floating point number.");
    return -1;
  }
  if (alpha.kind != AT_SCALAR_BOOL && common == TH_Bool && alpha.i != 1 && alpha.i != 0) {
    THError_set(TH_ERR_RUNTIME, "Boolean alpha only supported for Boolean results.");
    return -1;
  }
  return 0;
}

THTensor *at_add(const THTensor *a, const THTensor *b, ATScalar alpha, THTensor *out) {
  if (check_alpha(a, b, alpha) < 0) return NULL;
  THOpArgs args;
  scalar_arg(&args, 0, alpha);
  return run_binary(&op_add, a, b, out, &args);
}

THTensor *at_sub(const THTensor *a, const THTensor *b, ATScalar alpha, THTensor *out) {
  if (a->dtype == TH_Bool && b->dtype == TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                "Use the `^` or `logical_xor()` operator instead.");
    return NULL;
  }
  if (a->dtype == TH_Bool || b->dtype == TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    return NULL;
  }
  if (check_alpha(a, b, alpha) < 0) return NULL;
  THOpArgs args;
  scalar_arg(&args, 0, alpha);
  return run_binary(&op_sub, a, b, out, &args);
}

THTensor *at_mul(const THTensor *a, const THTensor *b, THTensor *out) {
  return run_binary(&op_mul, a, b, out, NULL);
}

THTensor *at_div(const THTensor *a, const THTensor *b, const char *rounding, THTensor *out) {
  if (!rounding) return run_binary(&op_div, a, b, out, NULL);
  if (!strcmp(rounding, "trunc")) return run_binary(&op_div_trunc, a, b, out, NULL);
  if (!strcmp(rounding, "floor")) return run_binary(&op_div_floor, a, b, out, NULL);
  THError_set(TH_ERR_VALUE, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", rounding);
  return NULL;
}

/* ---- the rest of the binary ops, by table ---- */
#define BIN(NAME, KNAME, RULE, ...) \
  static const OpDef op_##NAME = { KNAME, RULE, __VA_ARGS__ }; \
  THTensor *at_##NAME(const THTensor *a, const THTensor *b, THTensor *out) { \
    return run_binary(&op_##NAME, a, b, out, NULL); }

BIN(remainder, "remainder", R_SAME, TH_NUMERIC_TABLE(remainder_loop))
BIN(fmod, "fmod", R_SAME, TH_NUMERIC_TABLE(fmod_loop))
static const OpDef op_pow = { "pow", R_SAME, { TH_INTEGRAL_ENTRIES(pow_loop), TH_FLOATING_ENTRIES(pow_loop), TH_COMPLEX_ENTRIES(pow_loop) } };
THTensor *at_pow(const THTensor *a, const THTensor *b, THTensor *out) {
  /* a Python int exponent below zero has no integer answer (a tensor of
   * them gives 0 and 1s, as PyTorch's) */
  const THTensor *in[2] = { a, b };
  if (b->wrapped_number && !THDtype_isFloating(b->dtype) && !THDtype_isFloating(at_result_type(2, in)) &&
      at_item_int(b) < 0) {
    THError_set(TH_ERR_RUNTIME, "Integers to negative integer powers are not allowed.");
    return NULL;
  }
  return run_binary(&op_pow, a, b, out, NULL);
}
BIN(atan2, "atan2", R_FLOAT, TH_FLOATING_TABLE(atan2_loop))
static const OpDef op_hypot = { "hypot", R_FLOAT, TH_FLOATING_TABLE(hypot_loop) };
THTensor *at_hypot(const THTensor *a, const THTensor *b, THTensor *out) {
  const THTensor *in[2] = { a, b };
  THDtype common = at_result_type(2, in);
  if (!THDtype_isFloating(common)) {   /* PyTorch's hypot does not promote integers */
    THError_set(TH_ERR_NOTIMPL, "\"hypot_cpu\" not implemented for '%s'", THDtype_info[common].legacy);
    return NULL;
  }
  return run_binary(&op_hypot, a, b, out, NULL);
}
BIN(copysign, "copysign", R_FLOAT, TH_FLOATING_TABLE(copysign_loop))
/* the ordered ones: complex numbers have none (torch's error, before any dtype dispatch) */
#define BIN_ORDERED(NAME, RULE, ...) \
  static const OpDef op_##NAME = { #NAME, RULE, __VA_ARGS__ }; \
  THTensor *at_##NAME(const THTensor *a, const THTensor *b, THTensor *out) { \
    if (THDtype_isComplex(a->dtype) || THDtype_isComplex(b->dtype)) { \
      THError_set(TH_ERR_RUNTIME, #NAME " not implemented for complex tensors."); \
      return NULL; \
    } \
    return run_binary(&op_##NAME, a, b, out, NULL); }
BIN_ORDERED(maximum, R_SAME, TH_ALL_TABLE(maximum_loop))
BIN_ORDERED(minimum, R_SAME, TH_ALL_TABLE(minimum_loop))
BIN_ORDERED(fmax, R_SAME, { TH_INTEGRAL_ENTRIES(maximum_loop), TH_BOOL_ENTRIES(maximum_loop), TH_FLOATING_ENTRIES(fmax_loop) })
BIN_ORDERED(fmin, R_SAME, { TH_INTEGRAL_ENTRIES(minimum_loop), TH_BOOL_ENTRIES(minimum_loop), TH_FLOATING_ENTRIES(fmin_loop) })
BIN(bitwise_and, "bitwise_and", R_INTEGRAL, TH_INTEGRAL_BOOL_TABLE(bitwise_and_loop))
BIN(bitwise_or, "bitwise_or", R_INTEGRAL, TH_INTEGRAL_BOOL_TABLE(bitwise_or_loop))
BIN(bitwise_xor, "bitwise_xor", R_INTEGRAL, TH_INTEGRAL_BOOL_TABLE(bitwise_xor_loop))
BIN(bitwise_left_shift, "lshift", R_INTEGRAL, { TH_INTEGRAL_ENTRIES(lshift_loop) })
BIN(bitwise_right_shift, "rshift", R_INTEGRAL, { TH_INTEGRAL_ENTRIES(rshift_loop) })
BIN(floor_divide, "div_floor", R_SAME, TH_NUMERIC_TABLE(div_floor_loop))
BIN(eq, "eq", R_BOOL, { TH_BOOL_ENTRIES(eq_loop), TH_INTEGRAL_ENTRIES(eq_loop), TH_FLOATING_ENTRIES(eq_loop), TH_COMPLEX_ENTRIES(eq_loop) })
BIN(ne, "ne", R_BOOL, { TH_BOOL_ENTRIES(ne_loop), TH_INTEGRAL_ENTRIES(ne_loop), TH_FLOATING_ENTRIES(ne_loop), TH_COMPLEX_ENTRIES(ne_loop) })
BIN(lt, "lt", R_BOOL, TH_ALL_TABLE(lt_loop))
BIN(le, "le", R_BOOL, TH_ALL_TABLE(le_loop))
BIN(gt, "gt", R_BOOL, TH_ALL_TABLE(gt_loop))
BIN(ge, "ge", R_BOOL, TH_ALL_TABLE(ge_loop))
BIN(logical_and, "logical_and", R_BOOL, TH_ALL_TABLE(logical_and_loop))
BIN(logical_or, "logical_or", R_BOOL, TH_ALL_TABLE(logical_or_loop))
BIN(logical_xor, "logical_xor", R_BOOL, TH_ALL_TABLE(logical_xor_loop))

/* ---- unary ops ---- */
typedef enum {
  U_FLOAT,       /* integer inputs compute in the default float dtype */
  U_SAME,        /* any dtype in, same dtype out */
  U_ROUNDING,    /* floats computed, integers copied unchanged */
  U_PREDICATE,   /* bool out; integers give a constant (isnan...) */
} UnaryRule;

typedef struct { const char *name; UnaryRule rule; bool int_value; THLoopFn loops[TH_NDTYPES]; } UnaryDef;

static THTensor *run_unary(const UnaryDef *op, const THTensor *a, THTensor *out) {
  THDtype dt = a->dtype, odt;
  THLoopFn fn;
  if (THDtype_isComplex(dt)) return at_complex_unary(op->name, a, out);
  if (op->rule == U_FLOAT && !THDtype_isFloating(dt)) dt = at_default_dtype();
  if (op->rule == U_ROUNDING && dt == TH_Bool) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_vml_cpu\" not implemented for 'Bool'", op->name);
    return NULL;
  }
  if (op->rule == U_ROUNDING && !THDtype_isFloating(dt)) {
    static const THLoopFn copies[TH_NDTYPES] = TH_ALL_TABLE(copy_loop);
    ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == a, .check_cast = true, .name = op->name };
    const THTensor *in[1] = { a };
    return at_iter_run(&spec, 1, in, copies[dt], &a->dtype);
  }
  if (op->rule == U_PREDICATE && !THDtype_isFloating(dt) && !op->loops[dt]) {
    /* isnan(int) is all false, isfinite(int) all true */
    THTensor *r = out ? THTensor_retain(out) : at_new_on(THTensor_device(a), TH_Bool, a->ndim, a->sizes, NULL);
    if (!r) return NULL;
    if (out && THTensor_resize(r, a->ndim, a->sizes) < 0) { THTensor_free(r); return NULL; }
    if (at_fill_(r, at_scalar_bool(op->int_value)) < 0) { THTensor_free(r); return NULL; }
    return r;
  }
  fn = op->loops[dt];
  if (!fn) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", op->name, THDtype_info[dt].legacy);
    return NULL;
  }
  odt = op->rule == U_PREDICATE ? TH_Bool : dt;
  ATIterSpec spec = { .out = out, .out_dtype = odt, .common_dtype = dt, .inplace = out == a, .check_cast = true, .name = op->name };
  const THTensor *in[1] = { a };
  return at_iter_run(&spec, 1, in, fn, NULL);
}

#define UN(NAME, RULE, IV, ...) \
  static const UnaryDef un_##NAME = { #NAME, RULE, IV, __VA_ARGS__ }; \
  THTensor *at_##NAME(const THTensor *a, THTensor *out) { return run_unary(&un_##NAME, a, out); }
#define UN_FLOAT(NAME) UN(NAME, U_FLOAT, false, TH_FLOATING_TABLE(NAME##_loop))
TH_FLOAT_UNARY_OPS(UN_FLOAT)
UN(ceil, U_ROUNDING, false, TH_FLOATING_TABLE(ceil_loop))
UN(floor, U_ROUNDING, false, TH_FLOATING_TABLE(floor_loop))
UN(round, U_ROUNDING, false, TH_FLOATING_TABLE(round_loop))
UN(trunc, U_ROUNDING, false, TH_FLOATING_TABLE(trunc_loop))
UN(frac, U_SAME, false, TH_FLOATING_TABLE(frac_loop))
static const UnaryDef un_abs = { "abs", U_SAME, false, { TH_INTEGRAL_ENTRIES(abs_loop), TH_FLOATING_ENTRIES(abs_loop) } };
THTensor *at_abs(const THTensor *a, THTensor *out) {
  if (THDtype_isComplex(a->dtype)) {   /* |z| is real, so it cannot overwrite z */
    if (out == a) { THError_set(TH_ERR_RUNTIME, "In-place abs is not supported for complex tensors."); return NULL; }
    return at_complex_abs(a, out);
  }
  return run_unary(&un_abs, a, out);
}
UN(sign, U_SAME, false, TH_ALL_TABLE(sign_loop))
UN(isnan, U_PREDICATE, false, TH_FLOATING_TABLE(isnan_loop))
UN(isinf, U_PREDICATE, false, TH_FLOATING_TABLE(isinf_loop))
UN(isfinite, U_PREDICATE, true, TH_FLOATING_TABLE(isfinite_loop))
UN(signbit, U_PREDICATE, false, TH_NUMERIC_TABLE(signbit_loop))
UN(bitwise_not, U_SAME, false, TH_INTEGRAL_BOOL_TABLE(bitwise_not_loop))
UN(logical_not, U_PREDICATE, false, TH_ALL_TABLE(logical_not_loop))

static const UnaryDef un_relu = { "relu", U_SAME, false, TH_NUMERIC_TABLE(relu_loop) };
THTensor *at_relu(const THTensor *a, THTensor *out) {
  if (a->dtype == TH_Bool) { THError_set(TH_ERR_RUNTIME, "Boolean inputs not supported for relu"); return NULL; }
  return run_unary(&un_relu, a, out);
}

/* torch.square is pow(x, 2): a bool tensor squares to int64 */
THTensor *at_square(const THTensor *a, THTensor *out) {
  if (a->dtype != TH_Bool) return at_mul(a, a, out);
  THTensor *l = at_to_dtype(a, TH_Int64, false);
  THTensor *r = l ? at_mul(l, l, out) : NULL;
  THTensor_free(l);
  return r;
}

static const UnaryDef un_neg = { "neg", U_SAME, false, TH_NUMERIC_TABLE(neg_loop) };
THTensor *at_neg(const THTensor *a, THTensor *out) {
  if (a->dtype == TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    return NULL;
  }
  return run_unary(&un_neg, a, out);
}

static const THLoopFn where_loops[TH_NDTYPES] = { TH_BOOL_ENTRIES(where_loop), TH_INTEGRAL_ENTRIES(where_loop),
                                                  TH_FLOATING_ENTRIES(where_loop), TH_COMPLEX_ENTRIES(where_loop) };
THTensor *at_where(const THTensor *cond, const THTensor *a, const THTensor *b, THTensor *out) {
  const THTensor *vals[2] = { a, b };
  THDtype common = at_result_type(2, vals);
  const THTensor *in[3] = { cond, a, b };
  THDtype dts[3] = { TH_Bool, TH_Undefined, TH_Undefined };
  if (cond->dtype != TH_Bool && cond->dtype != TH_UInt8) {
    THError_set(TH_ERR_RUNTIME, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                THDtype_info[cond->dtype].legacy);
    return NULL;
  }
  /* a uint8 condition still selects; torch says so once per process (TORCH_WARN_ONCE) */
  static int warned_uint8;
  if (cond->dtype == TH_UInt8 && !__atomic_exchange_n(&warned_uint8, 1, __ATOMIC_RELAXED))
    THWarn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a future "
           "version of PyTorch. Use a boolean condition instead.");
  ATIterSpec spec = { .out = out, .out_dtype = common, .common_dtype = common, .check_cast = true, .name = "where", .in_dtypes = dts };
  return at_iter_run(&spec, 3, in, where_loops[common], NULL);
}

/* ---- ops with parameters or three inputs (ATPointwise.h) ---- */
static void put(THOpArgs *a, int k, ATScalar s) {
  if (s.kind == AT_SCALAR_FLOAT) { a->d[k] = s.d; a->i[k] = (int64_t)s.d; }
  else { a->d[k] = (double)s.i; a->i[k] = s.i; }
}

static const THLoopFn clamp_loops[TH_NDTYPES] = TH_NUMERIC_TABLE(clamp_loop);

/* a Python number's dtype in type promotion (a bool stays bool) */
static THDtype scalar_tensor_dtype(ATScalar s) {
  return s.kind == AT_SCALAR_FLOAT ? TH_Double : s.kind == AT_SCALAR_BOOL ? TH_Bool : TH_Int64;
}

/* clamp converts its bounds checked, half and bfloat16 included (where a
 * finite bound past the type's largest value raises; fill_ lets some through) */
static int clamp_bound_fits(ATScalar s, THDtype dt) {
  if (dt != TH_Half && dt != TH_BFloat16) return at_scalar_check_fits(s, dt, true);
  double v = s.kind == AT_SCALAR_FLOAT ? s.d : (double)s.i;
  if (s.kind == AT_SCALAR_BOOL || !isfinite(v) || fabs(v) <= (dt == TH_Half ? 65504.0 : 3.3895313892515355e38))
    return 0;
  THError_set(TH_ERR_RUNTIME, "value cannot be converted to type %s without overflow",
              dt == TH_Half ? "c10::Half" : "c10::BFloat16");
  return -1;
}

THTensor *at_clamp(const THTensor *self, ATOptScalar min, ATOptScalar max, THTensor *out) {
  if (!min.has && !max.has) {
    THError_set(TH_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    return NULL;
  }
  if (THDtype_isComplex(self->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "clamp is not supported for complex types");
    return NULL;
  }
  /* a float bound on an integer tensor promotes, as clamp's result_type does */
  THTensor *wrapped[2] = { NULL, NULL };
  const THTensor *ops[3] = { self, NULL, NULL };
  int n = 1;
  if (min.has) { wrapped[0] = at_scalar_tensor(min.v, scalar_tensor_dtype(min.v)); if (wrapped[0]) wrapped[0]->wrapped_number = true; ops[n++] = wrapped[0]; }
  if (max.has) { wrapped[1] = at_scalar_tensor(max.v, scalar_tensor_dtype(max.v)); if (wrapped[1]) wrapped[1]->wrapped_number = true; ops[n++] = wrapped[1]; }
  bool made = (!min.has || wrapped[0]) && (!max.has || wrapped[1]);
  THDtype dt = made ? at_result_type(n, ops) : TH_Bool;
  THTensor_free(wrapped[0]);
  THTensor_free(wrapped[1]);
  if (!made) return NULL;   /* at_scalar_tensor set the error */
  if (dt == TH_Bool) { THError_set(TH_ERR_NOTIMPL, "\"clamp_cpu\" not implemented for 'Bool'"); return NULL; }
  /* the bounds are converted to the result dtype checked, as torch's are */
  if ((min.has && clamp_bound_fits(min.v, dt) < 0) || (max.has && clamp_bound_fits(max.v, dt) < 0)) return NULL;
  THOpArgs a = {{0}};
  if (min.has) put(&a, 0, min.v);
  if (max.has) put(&a, 1, max.v);
  a.i[2] = min.has;
  a.i[3] = max.has;
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == self, .check_cast = true, .name = "clamp" };
  const THTensor *in[1] = { self };
  return at_iter_run(&spec, 1, in, clamp_loops[dt], &a);
}

THTensor *at_clamp_tensor(const THTensor *self, const THTensor *min, const THTensor *max, THTensor *out) {
  if (!min && !max) {
    THError_set(TH_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    return NULL;
  }
  THTensor *cur = THTensor_retain((THTensor *)self), *next;
  if (min) { next = at_maximum(cur, min, (!max) ? out : NULL); THTensor_free(cur); if (!(cur = next)) return NULL; }
  if (max) { next = at_minimum(cur, max, out); THTensor_free(cur); if (!(cur = next)) return NULL; }
  return cur;
}

static const THLoopFn lerp_loops[TH_NDTYPES] = { TH_FLOATING_ENTRIES(lerp_loop), TH_COMPLEX_ENTRIES(lerp_loop) };
static const THLoopFn lerp_scalar_loops[TH_NDTYPES] = TH_FLOATING_TABLE(lerp_scalar_loop);
THTensor *at_lerp(const THTensor *self, const THTensor *end, const THTensor *weight, THTensor *out) {
  const THTensor *in[3] = { self, end, weight };
  /* end and a weight tensor have self's dtype (torch's check); a number or 0-d weight converts, as a Scalar */
  const char *which = end->dtype != self->dtype ? "end" : (weight->ndim > 0 && weight->dtype != self->dtype ? "weight" : NULL);
  if (which) {
    THError_set(TH_ERR_RUNTIME, "expected dtype %s for `%s` but got dtype %s", at_cpp_dtype_name(self->dtype), which,
                at_cpp_dtype_name(which[0] == 'e' ? end->dtype : weight->dtype));
    return NULL;
  }
  THDtype dt = at_result_type(2, in);
  if (!THDtype_isFloating(dt) && !THDtype_isComplex(dt)) {
    THError_set(TH_ERR_NOTIMPL, "\"lerp_kernel_scalar\" not implemented for '%s'", THDtype_info[dt].legacy);
    return NULL;
  }
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == self, .check_cast = true, .name = "lerp" };
  if (weight->wrapped_number && (dt == TH_Half || dt == TH_BFloat16) && !at_off_host(self) && !at_off_host(end)) {
    /* lerp(a, b, 0.3) on half/bfloat16: the weight stays a float, not rounded to the tensors' dtype (torch's) */
    THOpArgs a = {{0}};
    a.d[0] = at_item_double(weight);
    return at_iter_run(&spec, 2, in, lerp_scalar_loops[dt], &a);
  }
  return at_iter_run(&spec, 3, in, lerp_loops[dt], NULL);
}

static THTensor *addc(const THTensor *self, const THTensor *t1, const THTensor *t2, ATScalar value, THTensor *out,
                      const THLoopFn *loops, const char *name) {
  const THTensor *in[3] = { self, t1, t2 };
  THDtype dt = at_result_type(3, in);
  if (loops == NULL || !loops[dt]) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", name, THDtype_info[dt].legacy);
    return NULL;
  }
  if (!strcmp(name, "addcdiv") && !THDtype_isFloating(t1->dtype) && !THDtype_isFloating(t2->dtype) &&
      !THDtype_isComplex(t1->dtype) && !THDtype_isComplex(t2->dtype)) {
    THError_set(TH_ERR_RUNTIME, "Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs "
                "and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
                "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
    return NULL;
  }
  THOpArgs a = {{0}};
  put(&a, 0, value);
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == self, .check_cast = true, .name = name };
  return at_iter_run(&spec, 3, in, loops[dt], &a);
}
static const THLoopFn addcmul_loops[TH_NDTYPES] = { TH_INTEGRAL_ENTRIES(addcmul_loop), TH_FLOATING_ENTRIES(addcmul_loop),
                                                    TH_COMPLEX_ENTRIES(addcmul_loop) };
static const THLoopFn addcdiv_loops[TH_NDTYPES] = { TH_FLOATING_ENTRIES(addcdiv_loop), TH_COMPLEX_ENTRIES(addcdiv_loop) };
THTensor *at_addcmul(const THTensor *self, const THTensor *t1, const THTensor *t2, ATScalar v, THTensor *out) {
  return addc(self, t1, t2, v, out, addcmul_loops, "addcmul");
}
THTensor *at_addcdiv(const THTensor *self, const THTensor *t1, const THTensor *t2, ATScalar v, THTensor *out) {
  return addc(self, t1, t2, v, out, addcdiv_loops, "addcdiv");
}

static double dtype_max(THDtype t) {
  switch (t) {
    case TH_Half: return 65504.0;
    case TH_BFloat16: return 3.3895313892515355e38;
    case TH_Float: return FLT_MAX;
    default: return DBL_MAX;
  }
}

static const THLoopFn nan_to_num_loops[TH_NDTYPES] = TH_FLOATING_TABLE(nan_to_num_loop);
THTensor *at_nan_to_num(const THTensor *self, ATOptDouble nan, ATOptDouble posinf, ATOptDouble neginf, THTensor *out) {
  if (!THDtype_isFloating(self->dtype)) return out ? (at_copy_(out, self) < 0 ? NULL : THTensor_retain(out)) : at_clone(self, true);
  THOpArgs a = {{0}};
  a.d[0] = nan.has ? nan.v : 0.0;
  a.d[1] = posinf.has ? posinf.v : dtype_max(self->dtype);
  a.d[2] = neginf.has ? neginf.v : -dtype_max(self->dtype);
  ATIterSpec spec = { .out = out, .out_dtype = self->dtype, .common_dtype = self->dtype, .inplace = out == self, .check_cast = true, .name = "nan_to_num" };
  const THTensor *in[1] = { self };
  return at_iter_run(&spec, 1, in, nan_to_num_loops[self->dtype], &a);
}

static const THLoopFn isclose_loops[TH_NDTYPES] = { TH_BOOL_ENTRIES(isclose_loop), TH_INTEGRAL_ENTRIES(isclose_loop),
                                                    TH_FLOATING_ENTRIES(isclose_loop), TH_COMPLEX_ENTRIES(isclose_loop) };
THTensor *at_isclose(const THTensor *a, const THTensor *b, double rtol, double atol, bool equal_nan) {
  if (a->dtype != b->dtype) {
    THError_set(TH_ERR_RUNTIME, "%s did not match %s", THDtype_info[a->dtype].legacy, THDtype_info[b->dtype].legacy);
    return NULL;
  }
  if (rtol < 0) { THError_set(TH_ERR_RUNTIME, "rtol must be greater than or equal to zero, but got %g", rtol); return NULL; }
  if (atol < 0) { THError_set(TH_ERR_RUNTIME, "atol must be greater than or equal to zero, but got %g", atol); return NULL; }
  THOpArgs args = {{0}};
  args.d[0] = rtol; args.d[1] = atol; args.i[2] = equal_nan;
  /* integers compare through double so the tolerance applies */
  THDtype dt = THDtype_isFloating(a->dtype) || THDtype_isComplex(a->dtype) || a->dtype == TH_Bool ? a->dtype : TH_Double;
  ATIterSpec spec = { .out = NULL, .out_dtype = TH_Bool, .common_dtype = dt, .name = "isclose" };
  const THTensor *in[2] = { a, b };
  return at_iter_run(&spec, 2, in, isclose_loops[dt], &args);
}

static const THLoopFn logit_loops[TH_NDTYPES] = TH_FLOATING_TABLE(logit_loop);
THTensor *at_logit(const THTensor *self, ATOptDouble eps, THTensor *out) {
  THDtype dt = THDtype_isFloating(self->dtype) ? self->dtype : at_default_dtype();
  THOpArgs a = {{0}};
  a.d[0] = eps.has ? eps.v : 0;
  a.i[3] = eps.has && eps.v >= 0;
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == self, .check_cast = true, .name = "logit" };
  const THTensor *in[1] = { self };
  return at_iter_run(&spec, 1, in, logit_loops[dt], &a);
}

static const THLoopFn xlogy_loops[TH_NDTYPES] = TH_FLOATING_TABLE(xlogy_loop);
THTensor *at_xlogy(const THTensor *self, const THTensor *other, THTensor *out) {
  const THTensor *in[2] = { self, other };
  THDtype dt = at_result_type(2, in);
  if (THDtype_isComplex(dt)) {   /* torch's xlogy has no complex kernel */
    THError_set(TH_ERR_NOTIMPL, "\"xlogy_cpu\" not implemented for '%s'", THDtype_info[dt].legacy);
    return NULL;
  }
  if (!THDtype_isFloating(dt)) dt = at_default_dtype();
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == self, .check_cast = true, .name = "xlogy" };
  return at_iter_run(&spec, 2, in, xlogy_loops[dt], NULL);
}

static const THLoopFn roundd_loops[TH_NDTYPES] = TH_FLOATING_TABLE(round_decimals_loop);
THTensor *at_round_decimals(const THTensor *self, int64_t decimals, THTensor *out) {
  if (!THDtype_isFloating(self->dtype)) {
    if (decimals != 0) { THError_set(TH_ERR_NOTIMPL, "round_cpu not implemented for '%s' with decimals", THDtype_info[self->dtype].legacy); return NULL; }
    return at_round(self, out);
  }
  THOpArgs a = {{0}};
  bool neg = decimals < 0;
  a.d[0] = pow(10.0, (double)(neg ? -decimals : decimals));
  a.d[1] = neg ? 0 : 1;
  ATIterSpec spec = { .out = out, .out_dtype = self->dtype, .common_dtype = self->dtype, .inplace = out == self, .check_cast = true, .name = "round" };
  const THTensor *in[1] = { self };
  return at_iter_run(&spec, 1, in, roundd_loops[self->dtype], &a);
}

int at_equal(const THTensor *a, const THTensor *b) {
  if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t))) return 0;
  THTensor *e = at_eq(a, b, NULL);
  if (!e) return -1;
  THTensor *s = at_sum(e, NULL, false, TH_Int64, NULL);
  THTensor_free(e);
  if (!s) return -1;
  int64_t n = at_item_int(s);
  THTensor_free(s);
  return n == THTensor_numel(a);
}

/* trigamma (the derivative of digamma, for lgamma's second derivative):
 * reflection below 0, the recurrence psi1(x) = psi1(x + 1) + 1/x^2 up to
 * x >= 6, then the asymptotic series. */
static double trigamma1(double x) {
  if (x <= 0 && x == floor(x)) return INFINITY;
  if (x < 0) {
    double s = sin(M_PI * x);
    return M_PI * M_PI / (s * s) - trigamma1(1 - x);
  }
  double acc = 0;
  while (x < 6) { acc += 1 / (x * x); x += 1; }
  double r = 1 / (x * x);
  return acc + 1 / x + r / 2 + (1 / (x * x * x)) * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42 - r / 30)));
}

/* Below this, psi^(n)(x) reflects to 1 - x: th_zeta steps q up to 9
 * one at a time, so x = -1e15 + 0.5 would take 1e15 steps (PyTorch's
 * kernel does take them, and cannot be interrupted). */
#define POLYGAMMA_REFLECT_BELOW (-1e4)
#define POLYGAMMA_MAX_REFLECT 170   /* n! overflows double beyond */

/* d^n/dy^n cot(y) = Q_n(cot y), Q_0(c) = c, Q_{k+1}(c) = -(1 + c^2) Q_k'(c):
 * q[0..n+1] gets Q_n's coefficients (n <= POLYGAMMA_MAX_REFLECT). */
static void cot_derivative_coeffs(int n, double *q) {
  double t[POLYGAMMA_MAX_REFLECT + 3];
  memset(q, 0, (POLYGAMMA_MAX_REFLECT + 3) * sizeof(double));
  q[1] = 1;
  for (int k = 0; k < n; k++) {
    memset(t, 0, sizeof t);
    for (int j = 0; j <= k; j++) {   /* Q_k' has degree k: (j + 1) q[j + 1] c^j */
      double d = (j + 1) * q[j + 1];
      t[j] -= d;
      t[j + 2] -= d;
    }
    memcpy(q, t, sizeof t);
  }
}

/* psi^(n)(x) for n >= 1 as PyTorch computes it: n taken as a C int (so
 * n = 2**32 + 2 is psi^(2), and n = 2**62 gives -inf), trigamma for 1, else
 * (-1)^(n+1) exp(lgamma(n + 1)) zeta(n + 1, x): O(1) in n. Far below zero
 * the reflection psi^(n)(x) = -pi^(n+1) Q_n(cot(pi x)) + (-1)^n psi^(n)(1 - x)
 * keeps it O(1) in x too (qc: Q_n's coefficients, NULL when n is too large
 * for it, where the answer is an overflow PyTorch would spend |x| steps on:
 * NaN here). */
static double polygamma_n(int64_t n, double x, const double *qc, bool single) {
  int32_t n32 = (int32_t)(uint32_t)(uint64_t)n;
  if (n32 == 1) return trigamma1(x);
  if (x < POLYGAMMA_REFLECT_BELOW && x != floor(x) && n32 >= 2) {
    if (!qc) return NAN;
    /* cot(pi r) = tan(pi (1/2 - r)): exact at r = 1/2, where cos(pi r) is not */
    double r = x - floor(x), c = tan(M_PI * (0.5 - r)), poly = 0;
    for (int j = n32 + 1; j >= 0; j--) poly = poly * c + qc[j];
    return -pow(M_PI, n32 + 1) * poly + (n32 % 2 ? -1.0 : 1.0) * polygamma_n(n, 1 - x, qc, single);
  }
  double s = (double)(int32_t)((uint32_t)n32 + 1u);   /* n + 1 in C int arithmetic, as PyTorch */
  if (single)   /* float inputs: n! and zeta overflow and underflow in float, as in PyTorch's float kernel */
    return (double)((n32 % 2 ? 1.0f : -1.0f) * (float)exp(lgamma((double)n32 + 1.0)) * (float)th_zeta(s, x));
  return (n32 % 2 ? 1.0 : -1.0) * exp(lgamma((double)n32 + 1.0)) * th_zeta(s, x);
}

/* psi^(n) elementwise (n >= 1), computed in double; floating dtypes keep theirs */
THTensor *at_polygamma_n(int64_t n, const THTensor *self) {
  if (n < 1) { THError_set(TH_ERR_RUNTIME, "polygamma(n, x): this kernel takes n >= 1"); return NULL; }
  THDtype out_dt = THDtype_isFloating(self->dtype) ? self->dtype : at_default_dtype();
  THTensor *d = at_to_dtype(self, TH_Double, true), *c = d ? at_contiguous(d) : NULL, *r = NULL;
  THTensor_free(d);
  if (!c) return NULL;
  int32_t n32 = (int32_t)(uint32_t)(uint64_t)n;
  double qc[POLYGAMMA_MAX_REFLECT + 3];
  bool reflect = n32 >= 2 && n32 <= POLYGAMMA_MAX_REFLECT;
  if (reflect) cot_derivative_coeffs(n32, qc);
  double *v = (double *)THTensor_data(c);
  bool single = out_dt != TH_Double;
  for (int64_t i = 0, m = THTensor_numel(c); i < m; i++) v[i] = polygamma_n(n, v[i], reflect ? qc : NULL, single);
  r = at_to_dtype(c, out_dt, false);
  THTensor_free(c);
  return r;
}

THTensor *at_trigamma(const THTensor *self) { return at_polygamma_n(1, self); }
