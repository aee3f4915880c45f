/* torch.special's Bessel, Airy, zeta and polynomial ops (see ATSpecial.h);
 * kernels in src/TH/generic/THTensorSpecial.c. */
#include "ATSpecial.h"
#include "../TH/THKernelsSpecial.h"

/* float32 and float64 only: torch's CPU kernels have no reduced-precision or complex forms */
#define AT_SPECIAL_TABLE(N) { [TH_Float] = THFloatTensor_##N##_loop, [TH_Double] = THDoubleTensor_##N##_loop }

static THTensor *run(const char *kname, const THLoopFn *loops, int n_in, const THTensor *const *in, THTensor *out) {
  THDtype dt = at_result_type(n_in, in);
  if (!THDtype_isFloating(dt) && !THDtype_isComplex(dt)) dt = at_default_dtype();
  if (!loops[dt]) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", kname, THDtype_info[dt].legacy);
    return NULL;
  }
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == in[0], .check_cast = true,
                      .name = kname };
  return at_iter_run(&spec, n_in, in, loops[dt], NULL);
}

#define AT_SPECIAL_UNARY(OP, KERNEL)                                                     \
  static const THLoopFn OP##_loops[TH_NDTYPES] = AT_SPECIAL_TABLE(KERNEL);              \
  THTensor *at_special_##OP(const THTensor *self, THTensor *out) {                      \
    const THTensor *in[1] = { self };                                                   \
    return run(#OP, OP##_loops, 1, in, out);                                            \
  }
#define AT_SPECIAL_BINARY(OP, KERNEL)                                                    \
  static const THLoopFn OP##_loops[TH_NDTYPES] = AT_SPECIAL_TABLE(KERNEL);              \
  THTensor *at_special_##OP(const THTensor *self, const THTensor *other, THTensor *out) { \
    const THTensor *in[2] = { self, other };                                            \
    return run(#OP, OP##_loops, 2, in, out);                                            \
  }

AT_SPECIAL_UNARY(bessel_j0, bessel_j0)
AT_SPECIAL_UNARY(bessel_j1, bessel_j1)
AT_SPECIAL_UNARY(bessel_y0, bessel_y0)
AT_SPECIAL_UNARY(bessel_y1, bessel_y1)
AT_SPECIAL_UNARY(modified_bessel_i0, modified_bessel_i0)
AT_SPECIAL_UNARY(modified_bessel_i1, modified_bessel_i1)
AT_SPECIAL_UNARY(modified_bessel_k0, modified_bessel_k0)
AT_SPECIAL_UNARY(modified_bessel_k1, modified_bessel_k1)
AT_SPECIAL_UNARY(scaled_modified_bessel_k0, scaled_modified_bessel_k0)
AT_SPECIAL_UNARY(scaled_modified_bessel_k1, scaled_modified_bessel_k1)
AT_SPECIAL_UNARY(spherical_bessel_j0, spherical_bessel_j0)
AT_SPECIAL_UNARY(airy_ai, airy_ai)
AT_SPECIAL_BINARY(zeta, zeta)
AT_SPECIAL_BINARY(chebyshev_polynomial_t, chebyshev_t)
AT_SPECIAL_BINARY(chebyshev_polynomial_u, chebyshev_u)
AT_SPECIAL_BINARY(chebyshev_polynomial_v, chebyshev_v)
AT_SPECIAL_BINARY(chebyshev_polynomial_w, chebyshev_w)
AT_SPECIAL_BINARY(shifted_chebyshev_polynomial_t, shifted_chebyshev_t)
AT_SPECIAL_BINARY(shifted_chebyshev_polynomial_u, shifted_chebyshev_u)
AT_SPECIAL_BINARY(shifted_chebyshev_polynomial_v, shifted_chebyshev_v)
AT_SPECIAL_BINARY(shifted_chebyshev_polynomial_w, shifted_chebyshev_w)
AT_SPECIAL_BINARY(hermite_polynomial_h, hermite_h)
AT_SPECIAL_BINARY(hermite_polynomial_he, hermite_he)
AT_SPECIAL_BINARY(laguerre_polynomial_l, laguerre_l)
AT_SPECIAL_BINARY(legendre_polynomial_p, legendre_p)
