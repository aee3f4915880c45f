"""Legacy typed constructors: cthtorch.FloatTensor(2, 3), isinstance(x, cthtorch.LongTensor)."""
import collections.abc
import operator

import cthtorch


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, cthtorch.Tensor) and obj.dtype == cls.dtype and not obj.is_sparse \
            and not obj.is_cuda   # a CUDA tensor is a torch.cuda.FloatTensor

    def __subclasscheck__(cls, sub):
        return sub is cls


def _from_storage(name, dt, storage):
    """A 1-D tensor over the storage's memory (no copy), as torch.FloatTensor(s) gives."""
    from cthtorch.storage import _view_of_storage
    return _view_of_storage(dt, storage, type_name=name[:-len("Tensor")])


def _options_text(dt):
    from cthtorch._utils import _cpp_dtype_name
    return ("TensorOptions(dtype=%s, device=cpu, layout=Strided, requires_grad=false (default), pinned_memory=false "
            "(default), memory_format=(nullopt))" % _cpp_dtype_name(dt))


def _is_data(x):
    """lists, tuples, ranges and arrays of one or more dims are data; ints and Sizes are sizes"""
    return (isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, cthtorch.Size))) or \
        (hasattr(x, "__array_interface__") and getattr(x, "ndim", 0) > 0)


def _make(name, dt):
    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and list(kwargs) == ["device"] and isinstance(args[0], (list, tuple)) and \
                not isinstance(args[0], cthtorch.Size):
            # a lone list or tuple is data with device= too (torch.Tensor's parser checks the device)
            cthtorch.Tensor(**kwargs)
            return cthtorch.tensor(args[0], dtype=dt)
        if len(args) == 1 and not kwargs:
            data = args[0]
            if isinstance(data, cthtorch.Tensor):
                if data.dtype != dt:   # torch converts nothing here: FloatTensor(long_tensor) is an error
                    raise TypeError("expected %s (got %s)" % (_options_text(dt), _options_text(data.dtype)))
                return data.view_as(data)   # torch's alias: the same data, gradients flow back to data
            if cthtorch.is_storage(data):
                return _from_storage(name, dt, data)
            if _is_data(data):
                return cthtorch.tensor(data, dtype=dt)
            if not isinstance(data, bool):
                try:
                    return cthtorch.empty(operator.index(data), dtype=dt)   # an int, numpy's too: a size
                except TypeError:
                    pass
            if isinstance(data, str):
                raise TypeError("new(): invalid data type 'str'")
            if not isinstance(data, cthtorch.Size):   # a float, a bool, None, a numpy float: torch's text
                t = type(data)
                raise TypeError("new(): data must be a sequence (got %s)"
                                % (t.__name__ if t.__module__ == "builtins" else t.__module__ + "." + t.__name__))
        # sizes (FloatTensor(2, 3), size=, device=), no arguments, and the refusals (a float, None, two lists):
        # torch.Tensor's own parser and texts; only the dtype differs
        made = cthtorch.Tensor(*args, **kwargs)
        if len(args) == 1 and _is_data(args[0]):   # data with device=: made from it in this dtype, as torch's
            return cthtorch.tensor(args[0], dtype=dt)
        return cthtorch.empty(made.shape, dtype=dt)
    return _LegacyMeta(name, (object,), {"__new__": __new__, "dtype": dt, "__module__": "cthtorch"})


# the legacy type names and their dtypes (torch.FloatTensor, and torch.sparse.FloatTensor)
LEGACY_TYPES = (("FloatTensor", cthtorch.float32), ("DoubleTensor", cthtorch.float64),
                ("HalfTensor", cthtorch.float16), ("BFloat16Tensor", cthtorch.bfloat16),
                ("LongTensor", cthtorch.int64), ("IntTensor", cthtorch.int32), ("ShortTensor", cthtorch.int16),
                ("CharTensor", cthtorch.int8), ("ByteTensor", cthtorch.uint8), ("BoolTensor", cthtorch.bool))
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_make(n, dt) for n, dt in LEGACY_TYPES)
