"""torch.special: the special functions under their scipy-style names, built
on the core ops (so they differentiate where the core op does)."""
import cthtorch as _t


def _unary(name):
    def f(input, *, out=None):
        r = getattr(_t, name)(input)
        if out is not None:
            out.resize_(r.shape).copy_(r)
            return out
        return r
    f.__name__ = name
    return f


expit = _unary("sigmoid")
erf = _unary("erf")
erfc = _unary("erfc")
erfinv = _unary("erfinv")
expm1 = _unary("expm1")
exp2 = _unary("exp2")
log1p = _unary("log1p")
gammaln = _unary("lgamma")
digamma = psi = _unary("digamma")
i0 = _unary("i0")
sinc = _unary("sinc")
round = _unary("round")  # noqa: A001 (torch's name)


def logit(input, eps=None, *, out=None):
    return _t.logit(input, eps)


def xlogy(input, other, *, out=None):
    return _t.xlogy(input, other)


def xlog1py(input, other, *, out=None):
    other = _t.as_tensor(other, dtype=input.dtype) if not isinstance(other, _t.Tensor) else other
    return _t.where(other == 0, _t.zeros_like(other * input), input * _t.log1p(other))


def entr(input, *, out=None):
    return _t.where(input > 0, -input * _t.log(input), _t.where(input == 0, _t.zeros_like(input),
                                                                 _t.full_like(input, float("-inf"))))


def ndtr(input, *, out=None):
    return 0.5 * (1 + _t.erf(input / 2 ** 0.5))


def ndtri(input, *, out=None):
    return 2 ** 0.5 * _t.erfinv(2 * input - 1)


def log_ndtr(input, *, out=None):
    return _t.log(ndtr(input))


def erfcx(input, *, out=None):
    return _t.exp(input * input) * _t.erfc(input)


def polygamma(n, input, *, out=None):
    return _t.polygamma(n, input)


def multigammaln(input, p, *, out=None):
    return _t.mvlgamma(input, p)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _t.logsumexp(input, dim, keepdim)


def softmax(input, dim, *, dtype=None):
    return _t.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _t.log_softmax(input, dim, dtype=dtype)


i1 = _t._C._special.special_i1
i1e = _t._C._special.special_i1e
gammainc = _t._C._special.special_gammainc
gammaincc = _t._C._special.special_gammaincc
i0e = _t._C._special.special_i0e
# the Bessel, Airy, zeta and polynomial ops (src/ATen/declarations/special.yaml)
for _name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
              "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
              "spherical_bessel_j0", "airy_ai", "zeta", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
              "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
              "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
              "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
    globals()[_name] = getattr(_t._C._special, "special_" + _name)
del _name


from cthtorch import _ops as _ops_registry  # noqa: E402
_ops_registry.module_ops("special", globals(), "special_")
