/* Pointwise ops: each is a kernel table plus a rule for the result dtype;
 * at_iter_run does the rest. */
#include "ATen.h"
#include "../TH/THKernels.h"
#include "../TH/THLoops.h"

#include <string.h>

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
} OpDef;

static void scalar_arg(THOpArgs *a, int k, ATScalar s) {
  if (s.kind == AT_SCALAR_FLOAT) { a->d[k] = s.d; a->i[k] = (int64_t)s.d; }
  else { a->d[k] = (double)s.i; a->i[k] = s.i; }
}

static THDtype compute_dtype(const OpDef *op, THDtype promoted) {
  if (op->rule == R_FLOAT && !THDtype_isFloating(promoted)) return at_default_dtype();
  return promoted;
}

static THTensor *run_binary(const OpDef *op, const THTensor *a, const THTensor *b, THTensor *out,
                            const void *extra) {
  const THTensor *in[2] = { a, b };
  THDtype common = compute_dtype(op, at_result_type(2, in));
  if (op->rule == R_INTEGRAL && THDtype_isFloating(common)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", op->name, THDtype_info[common].legacy);
    return NULL;
  }
  THLoopFn fn = op->loops[common];
  if (!fn) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", op->name, THDtype_info[common].legacy);
    return NULL;
  }
  ATIterSpec spec = { .out = out, .out_dtype = op->rule == R_BOOL ? TH_Bool : common, .common_dtype = common, .inplace = out == a, .check_cast = true, .name = op->name };
  return at_iter_run(&spec, 2, in, fn, extra);
}

static const OpDef op_add = { "add", R_SAME, TH_ALL_TABLE(add_loop) };
static const OpDef op_sub = { "sub", R_SAME, TH_ALL_TABLE(sub_loop) };
static const OpDef op_mul = { "mul", R_SAME, TH_ALL_TABLE(mul_loop) };
static const OpDef op_div = { "div_true", R_FLOAT, TH_FLOATING_TABLE(div_loop) };
static const OpDef op_div_trunc = { "div_trunc", R_SAME, TH_ALL_TABLE(div_trunc_loop) };
static const OpDef op_div_floor = { "div_floor", R_SAME, TH_ALL_TABLE(div_floor_loop) };

static int check_alpha(const THTensor *a, const THTensor *b, ATScalar alpha) {
  const THTensor *in[2] = { a, b };
  THDtype common = at_result_type(2, in);
  if (alpha.kind == AT_SCALAR_FLOAT && !THDtype_isFloating(common)) {
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
BIN(pow, "pow", R_SAME, TH_NUMERIC_TABLE(pow_loop))
BIN(atan2, "atan2", R_FLOAT, TH_FLOATING_TABLE(atan2_loop))
BIN(hypot, "hypot", R_FLOAT, TH_FLOATING_TABLE(hypot_loop))
BIN(copysign, "copysign", R_FLOAT, TH_FLOATING_TABLE(copysign_loop))
BIN(maximum, "maximum", R_SAME, TH_ALL_TABLE(maximum_loop))
BIN(minimum, "minimum", R_SAME, TH_ALL_TABLE(minimum_loop))
BIN(fmax, "fmax", R_SAME, { TH_INTEGRAL_ENTRIES(maximum_loop), TH_BOOL_ENTRIES(maximum_loop), TH_FLOATING_ENTRIES(fmax_loop) })
BIN(fmin, "fmin", R_SAME, { TH_INTEGRAL_ENTRIES(minimum_loop), TH_BOOL_ENTRIES(minimum_loop), TH_FLOATING_ENTRIES(fmin_loop) })
BIN(bitwise_and, "bitwise_and", R_INTEGRAL, TH_INTEGRAL_BOOL_TABLE(bitwise_and_loop))
BIN(bitwise_or, "bitwise_or", R_INTEGRAL, TH_INTEGRAL_BOOL_TABLE(bitwise_or_loop))
BIN(bitwise_xor, "bitwise_xor", R_INTEGRAL, TH_INTEGRAL_BOOL_TABLE(bitwise_xor_loop))
BIN(bitwise_left_shift, "lshift", R_INTEGRAL, { TH_INTEGRAL_ENTRIES(lshift_loop) })
BIN(bitwise_right_shift, "rshift", R_INTEGRAL, { TH_INTEGRAL_ENTRIES(rshift_loop) })
BIN(floor_divide, "div_floor", R_SAME, TH_NUMERIC_TABLE(div_floor_loop))
BIN(eq, "eq", R_BOOL, TH_ALL_TABLE(eq_loop))
BIN(ne, "ne", R_BOOL, TH_ALL_TABLE(ne_loop))
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
    THTensor *r = out ? THTensor_retain(out) : THTensor_new(TH_Bool, a->ndim, a->sizes);
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
UN(abs, U_SAME, false, { TH_INTEGRAL_ENTRIES(abs_loop), TH_FLOATING_ENTRIES(abs_loop) })
UN(sign, U_SAME, false, TH_ALL_TABLE(sign_loop))
UN(relu, U_SAME, false, TH_NUMERIC_TABLE(relu_loop))
UN(isnan, U_PREDICATE, false, TH_FLOATING_TABLE(isnan_loop))
UN(isinf, U_PREDICATE, false, TH_FLOATING_TABLE(isinf_loop))
UN(isfinite, U_PREDICATE, true, TH_FLOATING_TABLE(isfinite_loop))
UN(signbit, U_PREDICATE, false, TH_FLOATING_TABLE(signbit_loop))
UN(bitwise_not, U_SAME, false, TH_INTEGRAL_BOOL_TABLE(bitwise_not_loop))
UN(logical_not, U_PREDICATE, false, TH_ALL_TABLE(logical_not_loop))

static const UnaryDef un_neg = { "neg", U_SAME, false, TH_NUMERIC_TABLE(neg_loop) };
THTensor *at_neg(const THTensor *a, THTensor *out) {
  if (a->dtype == TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    return NULL;
  }
  return run_unary(&un_neg, a, out);
}

static const THLoopFn where_loops[TH_NDTYPES] = TH_ALL_TABLE(where_loop);
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
  ATIterSpec spec = { .out = out, .out_dtype = common, .common_dtype = common, .check_cast = true, .name = "where", .in_dtypes = dts };
  return at_iter_run(&spec, 3, in, where_loops[common], NULL);
}
