"""torch.TypedStorage (the legacy Tensor.storage() view): a tensor's untyped
storage read as elements of its dtype. Kept for older code that calls
x.storage().data_ptr(), len(x.storage()), x.storage().tolist() and the like.
The per-dtype classes (FloatStorage, LongStorage, ...) are in _legacy_storage."""
import collections.abc
import warnings

import cthtorch
from cthtorch._C import UntypedStorage  # noqa: F401 - torch.storage.UntypedStorage

_warned = False


def _warn_typed_storage_removal(stacklevel=2):
    """torch's deprecation warning, given once per process as torch does."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=stacklevel + 1)


def _reset_warn_typed_storage_removal():
    global _warned
    _warned = False


class TypedStorage:
    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        dtype = dtype or cthtorch.get_default_dtype()
        if wrap_storage is None:
            if args and isinstance(args[0], collections.abc.Sequence):
                # torch builds a tensor from the (possibly nested) sequence and keeps its storage
                wrap_storage = cthtorch.tensor(args[0], dtype=dtype).untyped_storage()
            else:
                size = args[0] if args else 0
                wrap_storage = cthtorch.empty(size, dtype=dtype).untyped_storage()
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    @property
    def device(self):
        return cthtorch.device("cpu")

    def element_size(self):
        return self.dtype.itemsize

    def size(self):
        return self._untyped_storage.nbytes() // self.element_size()

    __len__ = size

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def __sizeof__(self):
        # the object plus the bytes it views, as torch counts it
        return super().__sizeof__() + self.nbytes()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        return self._untyped_storage

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def _as_tensor(self):
        from cthtorch import _C
        return _C._tensor_from_storage(self._untyped_storage, self.dtype, 0, (self.size(),), (1,))

    def tolist(self):
        return self._as_tensor().tolist()

    def _index(self, i):
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(i, int):
            raise RuntimeError("can't index a %s with %s" % (self.type(), type(i).__name__))
        n = self.size()
        if not -n <= i < n:
            raise IndexError("index %d out of range for storage of size %d" % (i, n))
        return i % n

    def __getitem__(self, i):
        return self._as_tensor()[self._index(i)].item()

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            self._as_tensor()[i] = v
        else:
            self._as_tensor()[self._index(i)] = v

    def fill_(self, value):
        self._as_tensor().fill_(value)
        return self

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        body = " " + "\n ".join(str(v) for v in self.tolist())
        return "%s\n[%s(dtype=%s, device=cpu) of size %d]" % (body, "torch.storage.TypedStorage", self.dtype,
                                                                 self.size())

    def type(self, dtype=None):
        return "torch." + cthtorch.Tensor.type(cthtorch.empty(0, dtype=self.dtype)).split(".")[-1].replace(
            "Tensor", "Storage")


    def __str__(self):
        return self.__repr__()

    # ---- copies and conversions
    def clone(self):
        return self._to(self.dtype)

    def copy_(self, source, non_blocking=None):
        src = source._as_tensor() if isinstance(source, TypedStorage) else source
        self._as_tensor().copy_(src)
        return self

    def _to(self, dtype):
        """A copy in dtype (a copy even when dtype is already the storage's, as in torch)."""
        t = self._as_tensor()
        t = t.clone() if dtype == self.dtype else t.to(dtype)
        return TypedStorage(wrap_storage=t.untyped_storage(), dtype=dtype, _internal=True)

    def cpu(self):
        """A new TypedStorage over the same memory (it is on the CPU already)."""
        return TypedStorage(wrap_storage=self._untyped_storage, dtype=self.dtype, _internal=True)

    def is_pinned(self, device="cuda"):
        return False


def _converter(name, dtype):
    def convert(self):
        return self._to(dtype)
    convert.__name__ = name
    convert.__doc__ = "A copy of the storage as %s." % dtype
    return convert


# storage.float(), .long(), ...: copies in another dtype, as Tensor.float() and friends
for _name, _dtype in (("float", cthtorch.float32), ("double", cthtorch.float64), ("half", cthtorch.float16),
                      ("bfloat16", cthtorch.bfloat16), ("long", cthtorch.int64), ("int", cthtorch.int32),
                      ("short", cthtorch.int16), ("char", cthtorch.int8), ("byte", cthtorch.uint8),
                      ("bool", cthtorch.bool)):
    setattr(TypedStorage, _name, _converter(_name, _dtype))


def _view_of_storage(dtype, storage, storage_offset=0, size=None, stride=None, type_name=None):
    """A tensor of dtype over storage's memory (Tensor.set_(storage, ...),
    torch.FloatTensor(storage)); a typed storage must hold dtype. type_name is
    how the error names the wanted type (torch: "double" for set_, "Double"
    for the legacy constructors)."""
    if isinstance(storage, TypedStorage):
        if storage.dtype != dtype:
            from cthtorch._utils import _dtype_name as dtype_name
            raise RuntimeError("Expected a Storage of type %s or an UntypedStorage, but got type %s for argument 1 "
                               "'storage'" % (type_name or dtype_name(dtype).lower(), dtype_name(storage.dtype)))
        storage = storage.untyped()
    if size is None:
        size = (storage.nbytes() // dtype.itemsize - storage_offset,)
    size = tuple(size)
    if stride is None:
        stride, step = [], 1
        for n in reversed(size):
            stride.insert(0, step)
            step *= max(n, 1)
    return cthtorch._C._tensor_from_storage(storage, dtype, storage_offset, size, tuple(stride))


def _storage(self):
    # the warning names the caller of Tensor.storage(), as torch's does (a notebook shows that line)
    _warn_typed_storage_removal(stacklevel=3)
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


def _load_from_bytes(b):
    """torch.storage._load_from_bytes: the storage inside a tensor or storage that torch's pickle.dumps wrote
    (torch.save's pre-zip format, in bytes)."""
    import io
    return cthtorch.load(io.BytesIO(b), weights_only=False)
