"""Padding layers (Zero/Constant/Reflection/Replication/Circular, 1d-3d): thin modules over F.pad."""
from cthtorch.nn import functional as F
from cthtorch.nn.modules.module import Module
from cthtorch.nn.modules.utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]

_sextuple = _ntuple(6, "_sextuple")
# per spatial rank: how a lone int expands, and the accepted input ranks (unbatched, batched)
_RANK = {1: (_pair, (2, 3)), 2: (_quadruple, (3, 4)), 3: (_sextuple, (4, 5))}


def _check_dim(input, nd):
    lo, hi = _RANK[nd][1]
    if input.dim() not in (lo, hi):
        raise ValueError("expected %dD or %dD input (got %dD input)" % (lo, hi, input.dim()))


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = "constant"
    _nd = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _RANK[self._nd][0](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return "%s" % (self.padding,)


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        _check_dim(input, self._nd)
        return F.pad(input, self.padding, "circular")


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return "padding=%s, value=%s" % (self.padding, self.value)


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return "%s" % (self.padding,)


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


def _make(bases, name, nd):
    cls = type(name, bases if isinstance(bases, tuple) else (bases,), {"_nd": nd, "__module__": __name__})
    cls.__qualname__ = name
    return cls


CircularPad1d, CircularPad2d, CircularPad3d = (_make(_CircularPadNd, "CircularPad%dd" % n, n) for n in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_make(_ConstantPadNd, "ConstantPad%dd" % n, n) for n in (1, 2, 3))
ZeroPad1d, ZeroPad2d, ZeroPad3d = (_make((_ZeroPadNd, const), "ZeroPad%dd" % n, n)
                                   for n, const in ((1, ConstantPad1d), (2, ConstantPad2d), (3, ConstantPad3d)))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_make(_ReflectionPadNd, "ReflectionPad%dd" % n, n)
                                                     for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_make(_ReplicationPadNd, "ReplicationPad%dd" % n, n)
                                                        for n in (1, 2, 3))
