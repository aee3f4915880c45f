/* Type promotion as PyTorch does it. */
#include "ATen.h"

static THDtype default_dtype = TH_Float;

THDtype at_default_dtype(void) { return default_dtype; }
int at_set_default_dtype(THDtype t) {
  if (t != TH_Float && t != TH_Double && t != TH_Half && t != TH_BFloat16) {
    THError_set(TH_ERR_TYPE, "only floating-point types are supported as the default type");
    return -1;
  }
  default_dtype = t;
  return 0;
}

/* The promotion lattice: bool < integers < floats, with the usual
 * signed/unsigned and half/bfloat16 special cases. */
THDtype at_promote_types(THDtype a, THDtype b) {
  if (a == b) return a;
  if (a == TH_Undefined) return b;
  if (b == TH_Undefined) return a;
  if (a == TH_Bool) return b;
  if (b == TH_Bool) return a;
  if (THDtype_isComplex(a) || THDtype_isComplex(b))   /* complex of the promoted real parts */
    return THDtype_toComplex(at_promote_types(THDtype_toReal(a), THDtype_toReal(b)));
  bool fa = THDtype_isFloating(a), fb = THDtype_isFloating(b);
  if (fa && fb) {
    if ((a == TH_Half && b == TH_BFloat16) || (a == TH_BFloat16 && b == TH_Half)) return TH_Float;
    return THDtype_size(a) >= THDtype_size(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  /* both integral */
  if (a == TH_UInt8 || b == TH_UInt8) {
    THDtype o = a == TH_UInt8 ? b : a;
    return o == TH_Int8 ? TH_Int16 : o;
  }
  return THDtype_size(a) >= THDtype_size(b) ? a : b;
}

static int category(THDtype t) {
  return t == TH_Bool ? 0 : (THDtype_isComplex(t) ? 3 : (THDtype_isFloating(t) ? 2 : 1));
}

bool at_can_cast(THDtype from, THDtype to) {
  return category(from) <= category(to);
}

int at_check_cast(THDtype result, THDtype out) {
  if (at_can_cast(result, out)) return 0;
  THError_set(TH_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
              THDtype_info[result].legacy, THDtype_info[out].legacy);
  return -1;
}

THDtype at_scalar_dtype(ATScalar s) {
  return s.kind == AT_SCALAR_FLOAT ? default_dtype : (s.kind == AT_SCALAR_INT ? TH_Int64 : TH_Bool);
}

/* A weaker participant only raises the result when it is of a higher
 * category (bool < integral < floating) than the stronger one. */
static THDtype combine(THDtype higher, THDtype lower) {
  if (higher == TH_Undefined) return lower;
  if (lower == TH_Undefined) return higher;
  /* float32 tensor * 1j is complex64, float64 tensor * 1j complex128 */
  /* float32 tensor * 1j is complex64: a complex number raises a float to its complex twin */
  if (THDtype_isComplex(lower) && THDtype_isFloating(higher)) return THDtype_toComplex(higher);
  if (category(lower) > category(higher)) return at_promote_types(higher, lower);
  return higher;
}

THDtype at_result_type(int n, const THTensor *const *ts) {
  THDtype dim = TH_Undefined, zero = TH_Undefined, wrapped = TH_Undefined;
  for (int i = 0; i < n; i++) {
    const THTensor *t = ts[i];
    if (!t) continue;
    if (t->wrapped_number) {
      /* a Python float counts as the default dtype, an int as int64 */
      THDtype w = THDtype_isFloating(t->dtype) ? default_dtype
                  : (THDtype_isComplex(t->dtype) ? THDtype_toComplex(default_dtype) : t->dtype);
      wrapped = at_promote_types(wrapped, w);
    } else if (t->ndim == 0) {
      zero = at_promote_types(zero, t->dtype);
    } else {
      dim = at_promote_types(dim, t->dtype);
    }
  }
  return combine(dim, combine(zero, wrapped));
}
