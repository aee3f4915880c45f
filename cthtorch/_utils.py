"""Small helpers the Python side shares (one copy each): dimension wrapping
with PyTorch's message, the legacy dtype names PyTorch's messages use
("Float", "Long"), and int / int-list arguments checked with torch's parser
texts, and the stack level of the user's frame for warnings. The tuple helpers (_pair, _single, ...) live where torch
has them, in cthtorch.nn.modules.utils."""
import operator
import os
import sys
import warnings

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

_LEGACY_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool", "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                 "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def _user_stacklevel():
    """warnings.warn's stacklevel, from the function calling this one, of the innermost frame outside
    cthtorch: a warning torch raises in C++ is attributed to the user's line calling the op, however many
    package frames lie between (and is not filtered as library code's)."""
    f, level = sys._getframe(1), 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR + os.sep):
        f, level = f.f_back, level + 1
    return level


def _dtype_name(dtype):
    """PyTorch's legacy name of a dtype: 'Float' for torch.float32."""
    name = str(dtype).replace("torch.", "")
    return _LEGACY_NAMES.get(name, name)   # the rarer ones (float8 kinds) as their dtype name


_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _cpp_dtype_name(dtype):
    """C++'s name of a dtype ('long int' for torch.int64), as some of torch's messages print it."""
    name = str(dtype).replace("torch.", "")
    return _CPP_NAMES.get(name, name)


def _wrap_dim(dim, ndim):
    """dim in [-ndim, ndim) -> [0, ndim); a 0-d tensor takes dims -1 and 0."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-n, n - 1, dim))
    return dim + n if dim < 0 else dim


# ---- int arguments of Python composites, checked as torch's argument parser checks them
# (a composite's errors then name it and its argument, not the op it calls inside)

def _index(v):
    """v as a Python int when it is int-like (int, bool, numpy int, one-element
    integer tensor), else None."""
    if isinstance(v, int):
        return int(v)
    try:
        return operator.index(v)
    except (TypeError, ValueError, RuntimeError):
        return None


def _tensor_arg(fname, argname, value, pos):
    """A Tensor parameter of a Python-written op: anything else is the parser's TypeError (positions as the
    method form counts them: self is not one)"""
    import cthtorch
    if not isinstance(value, cthtorch.Tensor):
        raise TypeError("%s(): argument '%s' (position %d) must be Tensor, not %s"
                        % (fname, argname, pos, type(value).__name__))


def _int_arg(fname, argname, pos, value):
    """A lone `int` parameter: bools and non-ints are refused; beyond int64 is
    torch's ValueError."""
    v = None if isinstance(value, bool) else _index(value)
    if v is None:
        raise TypeError("%s(): argument '%s' (position %d) must be int, not %s"
                        % (fname, argname, pos, type(value).__name__))
    if not -2**63 <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _int_list(fname, argname, pos, value, varargs=False):
    """An `int[]` parameter: a sequence of ints; with varargs, the tuple of
    positional arguments (f(2, 3), f((2, 3)) or f(2)). The first item is
    checked when torch picks the overload, the rest when it unpacks them:
    each gets torch's text."""
    def not_int(v):
        return isinstance(v, bool) or _index(v) is None
    items = None
    if varargs:
        if not value:
            raise TypeError('%s() missing 1 required positional arguments: "%s"' % (fname, argname))
        if len(value) > 1 and not_int(value[0]):
            raise TypeError("%s() takes 1 positional argument but %d were given" % (fname, len(value)))
        if len(value) > 1 or not not_int(value[0]):
            items = value
        else:
            value = value[0]
    if items is None:
        if not isinstance(value, (list, tuple)):
            raise TypeError("%s(): argument '%s' (position %d) must be tuple of ints, not %s"
                            % (fname, argname, pos, type(value).__name__))
        if value and not_int(value[0]):
            raise TypeError("%s(): argument '%s' (position %d) must be tuple of ints, but found element of type "
                            "%s at pos 0" % (fname, argname, pos, type(value[0]).__name__))
        items = value
    out = []
    for i, item in enumerate(items):
        v = _index(item)
        if v is None or not -2**63 <= v < 2**63:
            why = "Overflow when unpacking long long" if v is not None else \
                "type must be tuple of ints,but got %s" % type(item).__name__
            raise TypeError("%s(): argument '%s' failed to unpack the object at pos %d with error \"%s\""
                            % (fname, argname, i + 1, why))
        out.append(v)
    return out


# ---- the reconstruction functions pickles made by torch name (torch._utils._rebuild_tensor_v2, ...): a tensor
# pickled with pickle.dumps, and old checkpoints, call them by these names (the code is in serialization)

def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    from cthtorch import serialization
    return serialization._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                                            metadata)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from cthtorch import serialization
    return serialization._rebuild_parameter(data, requires_grad, backward_hooks)


def _flatten_dense_tensors(tensors):
    """The tensors' elements one after another in a single contiguous 1-D buffer (fp16 master weights, bucketed
    all-reduce); a lone tensor comes back as a flat view of itself when it is contiguous, as torch's."""
    import cthtorch
    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    return cthtorch.cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of `flat` shaped as each of `tensors` in turn (the inverse of _flatten_dense_tensors)."""
    out, offset = [], 0
    for t in tensors:
        out.append(flat.narrow(0, offset, t.numel()).view_as(t))
        offset += t.numel()
    return tuple(out)


_warned = set()


def _warn_once(key, message):
    """torch's TORCH_WARN_ONCE: the first call in a process warns (a training loop calling the op every step
    sees it once), attributed to the user's line as torch's C++ warning is"""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=_user_stacklevel())
