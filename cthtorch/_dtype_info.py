"""cthtorch.finfo / cthtorch.iinfo: numeric limits of the dtypes, as PyTorch reports them.

The tables are keyed on a dtype's string form ('torch.float32'), which cthtorch's
dtypes share with PyTorch's, so any dtype object with that spelling works.
The limits are exact binary constants (ldexp), not values read off a library,
so they are the same doubles PyTorch computes from std::numeric_limits.
"""
from math import ldexp as _ldexp

__all__ = ["finfo", "iinfo"]


class _UnimplementedDtype:
    """A dtype torch has and cthtorch does not compute in (complex, uint16..64, float8,
    quantized). Programs that name one import and can compare it; an op given one raises
    NotImplementedError (the argument parser knows this class), never falls back to a
    default dtype."""
    __slots__ = ("_name", "itemsize", "is_complex", "is_floating_point", "_signed")
    __module__ = "cthtorch"   # pickles by name, as cthtorch.complex64

    def __init__(self, name, itemsize, is_complex, is_floating_point, signed):
        self._name, self.itemsize = name, itemsize
        self.is_complex, self.is_floating_point, self._signed = is_complex, is_floating_point, signed

    @property
    def is_signed(self):
        if self._signed is None:
            raise RuntimeError("isSignedType not supported for quantized types")
        return self._signed

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name    # a module attribute, as torch's dtypes pickle

    def to_real(self):
        import cthtorch
        return {"complex32": cthtorch.float16, "complex64": cthtorch.float32,
                "complex128": cthtorch.float64}.get(self._name, self)


# name -> (itemsize, is_complex, is_floating_point, is_signed), as torch 2.13 reports them
_UNIMPLEMENTED_DTYPES = {
    "complex32": (4, True, False, True),   # complex64/complex128 are real dtypes (src/TH/THGeneral.h)
    "uint16": (2, False, False, False), "uint32": (4, False, False, False), "uint64": (8, False, False, False),
    "float8_e4m3fn": (1, False, True, True), "float8_e5m2": (1, False, True, True),
    "float8_e4m3fnuz": (1, False, True, True), "float8_e5m2fnuz": (1, False, True, True),
    "qint8": (1, False, False, None), "quint8": (1, False, False, None), "qint32": (4, False, False, None),
    "quint4x2": (1, False, False, None),   # None: torch raises on is_signed
}
# torch's other spellings of the same objects
_UNIMPLEMENTED_ALIASES = {"chalf": "complex32"}


def _unimplemented_dtypes():
    """{torch name: object}, aliases sharing their dtype's object."""
    objs = {n: _UnimplementedDtype(n, *row) for n, row in _UNIMPLEMENTED_DTYPES.items()}
    objs.update({a: objs[n] for a, n in _UNIMPLEMENTED_ALIASES.items()})
    return objs


def _float_row(bits, mant_bits, max_exp, digits10):
    # mant_bits: stored fraction bits; max_exp: exponent of the largest finite value
    # eps = 2^-mant_bits; max = (2 - eps) * 2^max_exp; tiny = 2^(1 - max_exp) (IEEE bias).
    eps = _ldexp(1.0, -mant_bits)
    largest = (2.0 - eps) * _ldexp(1.0, max_exp)
    tiny = _ldexp(1.0, 1 - max_exp)
    # PyTorch's resolution is pow(10, -digits10) evaluated in double
    return dict(bits=bits, eps=eps, max=largest, min=-largest, tiny=tiny,
                resolution=10.0 ** -float(digits10))


# name -> (limits, the dtype name finfo reports; complex types report their real part)
_FLOATS = {
    "float16": (_float_row(16, 10, 15, 3), "float16"),
    "bfloat16": (_float_row(16, 7, 127, 2), "bfloat16"),
    "float32": (_float_row(32, 23, 127, 6), "float32"),
    "float64": (_float_row(64, 52, 1023, 15), "float64"),
    "complex64": (_float_row(32, 23, 127, 6), "float32"),
    "complex128": (_float_row(64, 52, 1023, 15), "float64"),
}

_INTS = {
    "uint8": (8, False), "uint16": (16, False), "uint32": (32, False), "uint64": (64, False),
    "int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
}

# Python scalar types stand for dtypes where PyTorch's argument parser accepts them
_PY_TYPES = {float: "float64", int: "int64", bool: "bool"}


def _dtype_name(fname, arg):
    """'float32' for a dtype (or Python type) arg; TypeError in PyTorch's words otherwise."""
    if isinstance(arg, type) and arg in _PY_TYPES:
        return _PY_TYPES[arg]
    text = str(arg) if type(arg).__name__ == "dtype" or isinstance(arg, _UnimplementedDtype) else ""
    if not text.startswith("torch."):
        raise TypeError("%s(): argument 'type' (position 1) must be torch.dtype, not %s"
                        % (fname, type(arg).__name__))
    return text[len("torch."):]


def _g(value):
    # PyTorch prints these through a C++ ostream: %g with 6 significant digits
    return "%g" % float(value)


class _Info:
    __slots__ = ()
    _fields = ()

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._key == other._key

    __hash__ = None   # like torch.finfo: comparable, not hashable

    def __setattr__(self, name, value):
        if name in self._fields:
            raise AttributeError("attribute '%s' of 'torch.%s' objects is not writable"
                                 % (name, type(self).__name__))
        raise AttributeError("'torch.%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __str__(self):
        return self.__repr__()


class finfo(_Info):
    """Limits of a floating point dtype: finfo(type=<default dtype>)."""
    __slots__ = ("_key", "_row", "_dtype")
    _fields = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, *args, **kwargs):
        if len(args) + len(kwargs) > 1 or (kwargs and "type" not in kwargs):
            raise TypeError("finfo() received an invalid combination of arguments - got %s, but "
                            "expected one of:\n * (torch.dtype type)\n * ()\n" % _describe(args, kwargs))
        if args or kwargs:
            name = _dtype_name("finfo", args[0] if args else kwargs["type"])
        else:
            import cthtorch
            name = _dtype_name("finfo", cthtorch.get_default_dtype())
        if name not in _FLOATS:
            raise TypeError("torch.finfo() requires a floating point input type. "
                            "Use torch.iinfo to handle 'torch.finfo'")
        row, reported = _FLOATS[name]
        object.__setattr__(self, "_key", name)
        object.__setattr__(self, "_row", row)
        object.__setattr__(self, "_dtype", reported)

    bits = property(lambda self: self._row["bits"])
    eps = property(lambda self: self._row["eps"])
    max = property(lambda self: self._row["max"])
    min = property(lambda self: self._row["min"])
    tiny = property(lambda self: self._row["tiny"])
    smallest_normal = property(lambda self: self._row["tiny"])
    resolution = property(lambda self: self._row["resolution"])
    dtype = property(lambda self: self._dtype)

    def __repr__(self):
        return ("finfo(resolution=%s, min=%s, max=%s, eps=%s, smallest_normal=%s, tiny=%s, dtype=%s)"
                % (_g(self.resolution), _g(self.min), _g(self.max), _g(self.eps),
                   _g(self.smallest_normal), _g(self.tiny), self.dtype))


class iinfo(_Info):
    """Limits of an integer dtype: iinfo(type)."""
    __slots__ = ("_key", "_bits", "_min", "_max")
    _fields = ("bits", "max", "min", "dtype")

    def __init__(self, *args, **kwargs):
        # one signature, so PyTorch's parser words errors as Python's own would
        for key in kwargs:
            if key != "type":
                raise TypeError("iinfo() got an unexpected keyword argument '%s'" % key)
        if len(args) > 1:
            raise TypeError("iinfo() takes 1 positional argument but %d were given" % len(args))
        if args and kwargs:
            raise TypeError("iinfo() got multiple values for argument 'type'")
        if not args and not kwargs:
            raise TypeError('iinfo() missing 1 required positional arguments: "type"')
        name = _dtype_name("iinfo", args[0] if args else kwargs["type"])
        if name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if name not in _INTS:
            raise TypeError("torch.iinfo() requires an integer input type. "
                            "Use torch.finfo to handle 'torch.iinfo'")
        bits, signed = _INTS[name]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        for k, v in (("_key", name), ("_bits", bits), ("_min", lo), ("_max", hi)):
            object.__setattr__(self, k, v)

    bits = property(lambda self: self._bits)
    max = property(lambda self: self._max)
    min = property(lambda self: self._min)
    dtype = property(lambda self: self._key)

    def __repr__(self):
        return "iinfo(min=%s, max=%s, dtype=%s)" % (_g(self.min), _g(self.max), self.dtype)


def _describe(args, kwargs):
    # "(torch.dtype, int)" in finfo's invalid-combination message
    def tname(v):
        return "torch.dtype" if type(v).__name__ == "dtype" else type(v).__name__
    parts = [tname(a) for a in args] + ["%s=%s" % (k, tname(v)) for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


# the public home of both classes (pickle and help() look them up there)
finfo.__module__ = iinfo.__module__ = "cthtorch"
