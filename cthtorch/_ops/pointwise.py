"""Pointwise ops PyTorch has that are composites of declared ops (polygamma,
mvlgamma, isneginf, isposinf, isreal; isin is in C: src/ATen/ATSort.c). The elementwise ones (gcd, lcm,
heaviside, nextafter, ldexp, logaddexp(2), sinc, i0, i1, frexp) are C ops
declared in src/ATen/declarations/binary.yaml and unary.yaml."""
import math

import cthtorch
from cthtorch import _C
from cthtorch._ops.reduce import _is_float


def _floatify(x):
    return x if _is_float(x) else x.to(cthtorch.get_default_dtype())


def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _floatify(input)
    # digamma, then psi^(n) by the Hurwitz zeta in C; each differentiates into the next order
    return cthtorch.digamma(x) if n == 0 else _C._internal._polygamma_n(n, x)


def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floatify(input)
    # log Gamma_p(x) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2)
    shifted = x.unsqueeze(-1) - cthtorch.arange(p, dtype=x.dtype, device=x.device) / 2
    return cthtorch.lgamma(shifted).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)




def isneginf(input):
    return cthtorch.logical_and(cthtorch.isinf(input), input < 0)


def isposinf(input):
    return cthtorch.logical_and(cthtorch.isinf(input), input > 0)


def isreal(input):
    return cthtorch.ones(input.shape, dtype=cthtorch.bool, device=input.device)


FUNCTIONS = ("polygamma", "mvlgamma", "isneginf", "isposinf", "isreal")
