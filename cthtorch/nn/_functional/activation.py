"""The in-place activation spellings of nn.functional (elu_, selu_, ...)."""
import cthtorch
from cthtorch import _C

_nn = _C._nn


def elu_(input, alpha=1.0):
    return _nn.elu_(input, alpha)


def selu_(input):
    return cthtorch.selu_(input)


def celu_(input, alpha=1.0):
    return cthtorch.celu_(input, alpha)


def leaky_relu_(input, negative_slope=0.01):
    return _nn.leaky_relu_(input, negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _nn.hardtanh_(input, min_val, max_val)


def threshold_(input, threshold, value):
    return cthtorch.threshold_(input, threshold, value)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    if not training:
        return _nn.leaky_relu_(input, (lower + upper) / 2)
    with cthtorch.no_grad():   # a random slope per negative element; the multiply is what autograd sees
        factor = cthtorch.where(input > 0, cthtorch.ones_like(input), cthtorch.empty_like(input).uniform_(lower, upper))
    return input.mul_(factor)
