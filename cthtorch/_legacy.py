"""Legacy typed constructors: cthtorch.FloatTensor(2, 3), isinstance(x, cthtorch.LongTensor)."""
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


def _make(name, dt):
    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], cthtorch.Size):
            data = args[0]
            if isinstance(data, cthtorch.Tensor):
                return data.to(dt)
            if cthtorch.is_storage(data):
                return _from_storage(name, dt, data)
            return cthtorch.tensor(data, dtype=dt)
        return cthtorch.empty(*args, dtype=dt) if args else cthtorch.empty(0, dtype=dt)
    return _LegacyMeta(name, (object,), {"__new__": __new__, "dtype": dt, "__module__": "cthtorch"})


# the legacy type names and their dtypes (torch.FloatTensor, and torch.sparse.FloatTensor)
LEGACY_TYPES = (("FloatTensor", cthtorch.float32), ("DoubleTensor", cthtorch.float64),
                ("HalfTensor", cthtorch.float16), ("BFloat16Tensor", cthtorch.bfloat16),
                ("LongTensor", cthtorch.int64), ("IntTensor", cthtorch.int32), ("ShortTensor", cthtorch.int16),
                ("CharTensor", cthtorch.int8), ("ByteTensor", cthtorch.uint8), ("BoolTensor", cthtorch.bool))
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_make(n, dt) for n, dt in LEGACY_TYPES)
