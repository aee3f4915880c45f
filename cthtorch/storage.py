"""torch.TypedStorage (the legacy Tensor.storage() view): a tensor's untyped
storage read as elements of its dtype. Kept for older code that calls
x.storage().data_ptr(), len(x.storage()), x.storage().tolist() and the like."""
import warnings

import cthtorch


class TypedStorage:
    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if wrap_storage is None:
            size = args[0] if args and isinstance(args[0], int) else 0
            dtype = dtype or cthtorch.get_default_dtype()
            wrap_storage = cthtorch.empty(size, dtype=dtype).untyped_storage()
        self._untyped_storage = wrap_storage
        self.dtype = dtype or cthtorch.get_default_dtype()

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

    def __getitem__(self, i):
        return self._as_tensor()[i].item() if isinstance(i, int) else self._as_tensor()[i]

    def __setitem__(self, i, v):
        self._as_tensor()[i] = v

    def fill_(self, value):
        self._as_tensor().fill_(value)
        return self

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        body = "\n".join(" " + str(v) for v in self.tolist())
        return "%s\n[%s(dtype=%s, device=cpu) of size %d]" % (body, "torch.storage.TypedStorage", self.dtype,
                                                                 self.size())

    def type(self, dtype=None):
        return "torch." + cthtorch.Tensor.type(cthtorch.empty(0, dtype=self.dtype)).split(".")[-1].replace(
            "Tensor", "Storage")


def _storage(self):
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=2)
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)
