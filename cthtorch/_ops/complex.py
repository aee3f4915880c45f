"""Complex composites written in terms of declared ops: torch.complex, torch.polar,
and the complex paths of matmul-family ops (real GEMMs on the real and imaginary parts,
so autograd follows from the real ops and view_as_real/view_as_complex).
The elementwise math, the views and the DFT are C (src/ATen/ATComplex.c)."""
import cthtorch
from cthtorch import _ops
from cthtorch._utils import _cpp_dtype_name

_V = None


def _vf():
    global _V
    if _V is None:
        _V = cthtorch._C._VariableFunctions
    return _V


def _check_parts(name, real, imag):
    for what, t in (("real", real), ("imag", imag)):
        if not isinstance(t, cthtorch.Tensor):
            raise TypeError("%s(): argument '%s' (position %d) must be Tensor, not %s"
                            % (name, what, 1 if what == "real" else 2, type(t).__name__))
    if real.dtype != imag.dtype:
        raise RuntimeError("Expected object of scalar type %s but got scalar type %s for second argument"
                           % (real.dtype.__repr__()[6:].capitalize() if False else _legacy(real.dtype),
                              _legacy(imag.dtype)))
    if real.dtype not in (cthtorch.float32, cthtorch.float64):
        if real.dtype == cthtorch.float16:
            raise NotImplementedError("cthtorch: complex32 (from float16 parts) is not implemented")
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got %s and %s"
                           % (_legacy(real.dtype), _legacy(imag.dtype)))


def _legacy(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(
        repr(dt)[len("torch."):], repr(dt))


def _join(re, im, out):
    r = _vf().view_as_complex(cthtorch.stack([re, im], -1))
    if out is not None:
        out.resize_(r.shape)
        out.copy_(r)
        return out
    return r


def complex(real, imag, *, out=None):
    """real + i imag, broadcast; the parts are float32 or float64 (torch's rule)."""
    _check_parts("complex", real, imag)
    re, im = cthtorch.broadcast_tensors(real, imag)
    return _join(re, im, out)


def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle))."""
    _check_parts("polar", abs, angle)
    return _join(abs * cthtorch.cos(angle), abs * cthtorch.sin(angle), out)


def _parts(z):
    rv = _vf().view_as_real(z)
    return rv.select(-1, 0), rv.select(-1, 1)


def complex_matmul(fn, a, b):
    """fn(a, b) for complex a and/or b through four real products:
    (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)."""
    if a.is_complex() != b.is_complex() or a.dtype != b.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: %s != %s"
                           % (_cpp_dtype_name(a.dtype), _cpp_dtype_name(b.dtype)))
    ar, ai = _parts(a)
    br, bi = _parts(b)
    re = fn(ar, br) - fn(ai, bi)
    im = fn(ar, bi) + fn(ai, br)
    return _vf().view_as_complex(cthtorch.stack([re, im], -1))


_ops.op("torch", "complex", complex, __name__)
_ops.op("torch", "polar", polar, __name__)
