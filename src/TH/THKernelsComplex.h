/* Kernels of the complex dtypes (generic/THTensorComplex.c). */
#ifndef TH_KERNELS_COMPLEX_H
#define TH_KERNELS_COMPLEX_H
#include "THDispatch.h"

TH_DECLARE_COMPLEX(copy_loop) TH_DECLARE_COMPLEX(fill_loop)
TH_DECLARE_COMPLEX(add_loop) TH_DECLARE_COMPLEX(sub_loop) TH_DECLARE_COMPLEX(mul_loop)
TH_DECLARE_COMPLEX(div_loop) TH_DECLARE_COMPLEX(neg_loop) TH_DECLARE_COMPLEX(conj_loop)
TH_DECLARE_COMPLEX(exp_loop) TH_DECLARE_COMPLEX(log_loop) TH_DECLARE_COMPLEX(sqrt_loop)
TH_DECLARE_COMPLEX(sin_loop) TH_DECLARE_COMPLEX(cos_loop) TH_DECLARE_COMPLEX(tanh_loop)
TH_DECLARE_COMPLEX(reciprocal_loop) TH_DECLARE_COMPLEX(sgn_loop) TH_DECLARE_COMPLEX(pow_loop)
TH_DECLARE_COMPLEX(abs_loop) TH_DECLARE_COMPLEX(angle_loop)
TH_DECLARE_COMPLEX(tan_loop) TH_DECLARE_COMPLEX(sinh_loop) TH_DECLARE_COMPLEX(cosh_loop)
TH_DECLARE_COMPLEX(asin_loop) TH_DECLARE_COMPLEX(acos_loop) TH_DECLARE_COMPLEX(atan_loop)
TH_DECLARE_COMPLEX(asinh_loop) TH_DECLARE_COMPLEX(acosh_loop) TH_DECLARE_COMPLEX(atanh_loop)
TH_DECLARE_COMPLEX(log10_loop) TH_DECLARE_COMPLEX(log2_loop) TH_DECLARE_COMPLEX(log1p_loop)
TH_DECLARE_COMPLEX(expm1_loop) TH_DECLARE_COMPLEX(exp2_loop) TH_DECLARE_COMPLEX(rsqrt_loop)
TH_DECLARE_COMPLEX(sigmoid_loop)
TH_DECLARE_COMPLEX(isnan_loop) TH_DECLARE_COMPLEX(isinf_loop) TH_DECLARE_COMPLEX(isfinite_loop)
TH_DECLARE_COMPLEX(lerp_loop) TH_DECLARE_COMPLEX(addcmul_loop) TH_DECLARE_COMPLEX(addcdiv_loop)
TH_DECLARE_COMPLEX(where_loop) TH_DECLARE_COMPLEX(eq_loop) TH_DECLARE_COMPLEX(ne_loop) TH_DECLARE_COMPLEX(isclose_loop)

/* In-place DFT of `batch` contiguous rows of n values each:
 * x[k] <- sum_j x[j] exp(sign * 2 pi i j k / n) * scale. */
int THComplexFloatTensor_fft_rows(float _Complex *x, int64_t n, int64_t batch, int sign, double scale);
int THComplexDoubleTensor_fft_rows(double _Complex *x, int64_t n, int64_t batch, int sign, double scale);
#endif
