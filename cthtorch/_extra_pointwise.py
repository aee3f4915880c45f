"""Pointwise ops PyTorch has that cthtorch's C layer lacks, composed from
existing differentiable ops; integer-only or special functions (gcd, i0,
polygamma, frexp, nextafter) run in numpy/scipy with an autograd Function
where PyTorch defines a derivative."""
import math

import numpy as np

import cthtorch
from cthtorch import _C
from cthtorch.autograd.function import Function
from cthtorch._shape_ops import _np
from cthtorch._extra_reduce import _is_float, _dtype_name, _from_np


def _float_only(name, *ts):
    for t in ts:
        if isinstance(t, cthtorch.Tensor) and not _is_float(t):
            raise NotImplementedError('"%s_cpu" not implemented for \'%s\'' % (name, _dtype_name(t.dtype)))


def _logaddexp_base(name, a, b, exp, log):
    _float_only(name, a, b)
    # shift by the (detached, finite) max so exp cannot overflow; the gradient is
    # then exactly the two-way softmax, symmetric at ties
    m = cthtorch.maximum(a.detach(), b.detach())
    m = cthtorch.where(cthtorch.isinf(m), cthtorch.zeros_like(m), m)
    return m + log(exp(a - m) + exp(b - m))


def logaddexp(input, other):
    return _logaddexp_base("logaddexp", input, other, cthtorch.exp, cthtorch.log)


def logaddexp2(input, other):
    return _logaddexp_base("logaddexp2", input, other, cthtorch.exp2, cthtorch.log2)


class _NoDerivative(Function):
    """Carries a result whose backward PyTorch does not define: the output
    requires grad like PyTorch's, and backward raises its error."""
    @staticmethod
    def forward(ctx, result, name, *inputs):
        ctx.name = name
        return result

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::%s is not implemented" % ctx.name)


def heaviside(input, values):
    if isinstance(values, cthtorch.Tensor) and values.dtype != input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    with cthtorch.no_grad():
        pos = (input > 0).to(input.dtype)
        r = cthtorch.where(input == 0, values.to(input.dtype), pos)
    if cthtorch.is_grad_enabled() and (input.requires_grad or values.requires_grad):
        return _NoDerivative.apply(r, "heaviside", input, values)
    return r


def _int_binary(name, fn):
    def op(input, other):
        for t in (input, other):
            if isinstance(t, cthtorch.Tensor) and (_is_float(t) or t.dtype == cthtorch.bool):
                raise NotImplementedError('"%s_cpu" not implemented for \'%s\'' % (name, _dtype_name(t.dtype)))
        dt = cthtorch.result_type(input, other)
        a = _np(input) if isinstance(input, cthtorch.Tensor) else input
        b = _np(other) if isinstance(other, cthtorch.Tensor) else other
        return _from_np(np.asarray(fn(a, b)), dt)
    op.__name__ = name
    return op


gcd = _int_binary("gcd", np.gcd)
lcm = _int_binary("lcm", np.lcm)


def _floatify(x):
    return x if _is_float(x) else x.to(cthtorch.get_default_dtype())


def sinc(input):
    x = _floatify(input)
    zero = x == 0
    safe = cthtorch.where(zero, cthtorch.ones_like(x), x) * math.pi
    return cthtorch.where(zero, cthtorch.ones_like(x), cthtorch.sin(safe) / safe)


class _ScipyUnary(Function):
    """f(x) by scipy.special (a numpy callable); its derivative df is a cthtorch
    function of x built from differentiable ops, so double backward works."""
    @staticmethod
    def forward(ctx, x, f, df):
        ctx.df = df
        ctx.save_for_backward(x)
        return _from_np(np.asarray(f(_np(x).astype(np.float64))), x.dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.df(x), None, None


def _special():
    from scipy import special   # installed with scikit-learn (requirements.txt)
    return special


def i0(input):
    return _ScipyUnary.apply(_floatify(input), _special().i0, i1)


def i1(input):
    # I1'(x) = I0(x) - I1(x) / x, and 1/2 at 0
    def d_i1(t):
        safe = cthtorch.where(t == 0, cthtorch.ones_like(t), t)
        return cthtorch.where(t == 0, cthtorch.full_like(t, 0.5), i0(t) - i1(t) / safe)
    return _ScipyUnary.apply(_floatify(input), _special().i1, d_i1)


def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _floatify(input)
    # digamma, then psi^(n) by the Hurwitz zeta in C; each differentiates into the next order
    return cthtorch.digamma(x) if n == 0 else _C._VariableFunctions._polygamma_n(n, x)


def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floatify(input)
    # log Gamma_p(x) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2)
    shifted = x.unsqueeze(-1) - cthtorch.arange(p, dtype=x.dtype) / 2
    return cthtorch.lgamma(shifted).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def frexp(input):
    from cthtorch import return_types
    if not _is_float(input):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(_np(input))
    return return_types.frexp(_from_np(m, input.dtype), _from_np(e.astype(np.int32)))


def ldexp(input, other):
    return input * (cthtorch.exp2(other) if isinstance(other, cthtorch.Tensor) else 2.0 ** other)


def nextafter(input, other):
    if isinstance(other, cthtorch.Tensor) and other.dtype != input.dtype:
        raise RuntimeError("expected scalar type %s but found %s" % (_dtype_name(input.dtype),
                                                                      _dtype_name(other.dtype)))
    _float_only("nextafter", input)
    a, b = np.broadcast_arrays(_np(input), _np(other))
    return _from_np(np.nextafter(a, b), input.dtype)


def isneginf(input):
    return cthtorch.logical_and(cthtorch.isinf(input), input < 0)


def isposinf(input):
    return cthtorch.logical_and(cthtorch.isinf(input), input > 0)


def isreal(input):
    return cthtorch.ones(input.shape, dtype=cthtorch.bool)


FUNCTIONS = ("logaddexp", "logaddexp2", "heaviside", "gcd", "lcm", "sinc", "i0", "polygamma", "mvlgamma", "frexp",
             "ldexp", "nextafter", "isneginf", "isposinf", "isreal")
