"""The legacy per-dtype storage classes (torch.FloatStorage, LongStorage, ...,
and torch.Storage, FloatStorage's old name). As in torch, calling one builds
a plain TypedStorage of its dtype, and isinstance(s, FloatStorage) asks
whether a TypedStorage holds float32."""
import collections.abc

import cthtorch
from cthtorch.storage import TypedStorage, _warn_typed_storage_removal


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):
        return type(instance) is TypedStorage and instance.dtype == cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    dtype = None

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if cls is _LegacyStorage:
            raise RuntimeError("Only child classes of _LegacyStorage can be instantiated")
        usage = ("%s.__new__ received an invalid combination of arguments. Expected one of:\n * no arguments\n"
                 " * (int size)\n * (Sequence data)\n * (*, UntypedStorage wrap_storage)" % cls)
        for name, value in (("device", device), ("dtype", dtype)):
            if value is not None:
                raise RuntimeError(usage + "\nKeyword argument '%s' cannot be specified" % name)
        if wrap_storage is None:
            if len(args) > 1:
                raise RuntimeError(usage + "\nToo many positional arguments")
            if args and (isinstance(args[0], bool) or not isinstance(args[0], (int, collections.abc.Sequence))):
                raise TypeError(usage + "\nArgument type not recognized: %s" % type(args[0]))
            return TypedStorage(*args, dtype=cls.dtype, _internal=True)
        if args:
            raise RuntimeError(usage + "\nNo positional arguments should be given when using 'wrap_storage'")
        if not isinstance(wrap_storage, cthtorch.UntypedStorage):
            raise TypeError(usage + "\nArgument 'wrap_storage' must be UntypedStorage, but got %s"
                            % type(wrap_storage))
        return TypedStorage(wrap_storage=wrap_storage, dtype=cls.dtype, _internal=True)

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0):
        """The elements of a bytes-like object, read in byte_order ('native',
        'little' or 'big'); count=-1 reads to the end."""
        import numpy as np
        order = {"native": "=", "little": "<", "big": ">"}.get(byte_order)
        if order is None:
            raise ValueError("Expected byte_order to be one of 'native', 'little' or 'big', but got %r" % byte_order)
        np_dtype = cthtorch.empty(0, dtype=cls.dtype).numpy().dtype.newbyteorder(order)
        data = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset).astype(np_dtype.newbyteorder("="))
        return TypedStorage(wrap_storage=cthtorch.from_numpy(data.copy()).untyped_storage(), dtype=cls.dtype,
                            _internal=True)


def _make(name, dtype):
    return _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "cthtorch"})


FloatStorage = _make("FloatStorage", cthtorch.float32)
DoubleStorage = _make("DoubleStorage", cthtorch.float64)
HalfStorage = _make("HalfStorage", cthtorch.float16)
BFloat16Storage = _make("BFloat16Storage", cthtorch.bfloat16)
LongStorage = _make("LongStorage", cthtorch.int64)
IntStorage = _make("IntStorage", cthtorch.int32)
ShortStorage = _make("ShortStorage", cthtorch.int16)
CharStorage = _make("CharStorage", cthtorch.int8)
ByteStorage = _make("ByteStorage", cthtorch.uint8)
BoolStorage = _make("BoolStorage", cthtorch.bool)
ComplexFloatStorage = _make("ComplexFloatStorage", cthtorch.complex64)
ComplexDoubleStorage = _make("ComplexDoubleStorage", cthtorch.complex128)
Storage = FloatStorage

NAMES = ("Storage", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage",
         "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage")
