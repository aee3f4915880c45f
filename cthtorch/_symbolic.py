"""torch.sym_* : PyTorch's shape-arithmetic helpers that also take SymInt/SymFloat under tracing. cthtorch has
no symbolic shapes, so they are the plain-number operations (with torch's int/float promotion)."""
import math

_NUMBER = (int, float)


def _check(*xs):
    for x in xs:
        if not isinstance(x, _NUMBER) and not type(x).__module__ == "numpy":
            raise AssertionError("expected (<class 'numpy.integer'>, <class 'numpy.floating'>, <class 'int'>, "
                                 "<class 'float'>), got %s" % _type_repr(x))


def _type_repr(x):
    import cthtorch
    return "<class 'torch.Tensor'>" if type(x) is cthtorch.Tensor else repr(type(x))


def sym_int(a):
    return a if isinstance(a, int) else int(math.trunc(a))


def sym_float(a):
    return float(a)


def sym_max(a, b):
    _check(a, b)
    r = max(a, b)
    return float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_min(a, b):
    _check(a, b)
    r = min(a, b)
    return float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_not(a):
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_ite(b, t, f):
    return t if b else f


def sym_sum(args):
    return sum(args)


__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum"]
