"""torch.special: the special functions under their scipy-style names, built
on the core ops (so they differentiate where the core op does)."""
import warnings

import cthtorch as _t
torch = _t   # as torch's modules have it: old code writes torch.sparse.torch.eye(n)
from cthtorch._utils import _dtype_name


def _into(r, out):
    """r written into out= as torch's out variants do: refused across devices or
    where r's dtype cannot be cast to out's; a non-empty out of another shape is
    resized with torch's warning. (These composites once ignored out= entirely.)"""
    if out is None:
        return r
    if out.device != r.device:
        raise RuntimeError("Attempting to copy from device %s to device %s, but cross-device copies are not allowed!"
                           % (r.device, out.device))
    if not _t.can_cast(r.dtype, out.dtype):
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dtype_name(r.dtype), _dtype_name(out.dtype)))
    if out.shape != r.shape:
        if out.numel():
            warnings.warn("An output with one or more elements was resized since it had shape %s, which does not "
                          "match the required output shape %s. This behavior is deprecated, and in a future PyTorch "
                          "release outputs will not be resized unless they have zero elements. You can explicitly "
                          "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
                          % (list(out.shape), list(r.shape)))
        out.resize_(r.shape)
    out.copy_(r)
    return out


def _unary(name):
    def f(input, *, out=None):
        return _into(getattr(_t, name)(input), out)
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
    return _into(_t.logit(input, eps), out)


def xlogy(input, other, *, out=None):
    return _into(_t.xlogy(input, other), out)


def xlog1py(input, other, *, out=None):
    other = _t.as_tensor(other, dtype=input.dtype) if not isinstance(other, _t.Tensor) else other
    return _into(_t.where(other == 0, _t.zeros_like(other * input), input * _t.log1p(other)), out)


def entr(input, *, out=None):
    if not (input.is_floating_point() or input.is_complex()):
        input = input.to(_t.get_default_dtype())        # integers and bools promote, as torch's
    return _into(_t.where(input > 0, -input * _t.log(input),
                          _t.where(input == 0, _t.zeros_like(input), _t.full_like(input, float("-inf")))), out)


def ndtr(input, *, out=None):
    return _into(0.5 * (1 + _t.erf(input / 2 ** 0.5)), out)


def ndtri(input, *, out=None):
    return _into(2 ** 0.5 * _t.erfinv(2 * input - 1), out)


def log_ndtr(input, *, out=None):
    return _into(_t.log(ndtr(input)), out)


def erfcx(input, *, out=None):
    return _into(_t.exp(input * input) * _t.erfc(input), out)


def polygamma(n, input, *, out=None):
    return _into(_t.polygamma(n, input), out)


def multigammaln(input, p, *, out=None):
    return _into(_t.mvlgamma(input, p), out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _into(_t.logsumexp(input, dim, keepdim), out)


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
