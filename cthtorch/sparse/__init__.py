"""torch.sparse: products and reductions of sparse COO tensors, softmax over
their stored entries, and the legacy typed constructors (torch.sparse.FloatTensor)."""
import functools
import math
import warnings

import cthtorch
from cthtorch import _sparse_ops as _ops
from cthtorch._sparse_factory import sparse_coo_tensor as _coo, _empty, _state
from cthtorch._sparse_tensor import SparseTensor, _named, _linear, add_rows

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants"]


def mm(mat1, mat2, reduce=None):
    """sparse @ dense (or dense @ dense); a sparse mat1 gets a sparse gradient on its pattern."""
    if reduce is not None:
        raise NotImplementedError("cthtorch: torch.sparse.mm(reduce=...) is not implemented")
    return _ops.mm(mat1, mat2, _sparse_grad=True)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    return _ops.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    if not _ops.is_sparse(input):
        return input.sum(dtype=dtype) if dim is None else input.sum(dim, dtype=dtype)
    return _ops.sum(input, dim, dtype=dtype)


def _softmax(input, dim, dtype, log):
    s = input.coalesce()
    if dtype is not None:
        s = s.to(dtype)
    if s.dense_dim():
        raise NotImplementedError("cthtorch: softmax of a hybrid sparse tensor is not implemented")
    n = s.dim()
    if not -n <= dim < n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)" % (-n, n - 1, dim))
    others = [k for k in range(n) if k != dim % n]
    v = s._v
    # one group per line along dim; unstored entries count as -inf
    key = _linear(s._i[others], [s._shape[k] for k in others]) if others else s._i.new_zeros(s._nnz())
    _, inv = cthtorch.unique(key, return_inverse=True)
    groups = int(inv.max().item()) + 1 if s._nnz() else 0
    with cthtorch.no_grad():   # the shift only steadies exp; softmax does not depend on it
        top = v.new_full((groups,), -math.inf).scatter_reduce(0, inv, v, "amax")[inv]
    shifted = v - top
    den = add_rows(inv, shifted.exp(), groups)[inv]
    out = shifted - den.log() if log else shifted.exp() / den
    name = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    return SparseTensor(s._i, _named(name, out), s._shape, True)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, True)


class check_sparse_tensor_invariants:
    """Turns the index checks of torch.sparse_coo_tensor on (as a context
    manager, a decorator, or globally through enable()/disable())."""

    @staticmethod
    def is_enabled():
        return bool(_state["check"])

    @staticmethod
    def enable():
        _state["check"] = True

    @staticmethod
    def disable():
        _state["check"] = False

    def __init__(self, enable=True):
        self.state, self.saved_state = enable, None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context manager "
                               "instance for context nesting.")
        self.saved_state = _state["check"]
        _state["check"] = self.state

    def __exit__(self, *exc):
        _state["check"], self.saved_state = self.saved_state, None

    def __call__(self, mth):
        @functools.wraps(mth)
        def wrapped(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return mth(*args, **kwargs)
        return wrapped


# ---- legacy constructors: torch.sparse.FloatTensor(indices, values, size) ----

_warned_legacy = []


class _LegacySparseMeta(type):
    def __instancecheck__(cls, obj):
        return _ops.is_sparse(obj) and obj.dtype == cls.dtype


def _legacy(name, dt):
    def __new__(cls, *args, device=None):
        shape_only = all(isinstance(a, int) for a in args) or (len(args) == 1 and isinstance(args[0], cthtorch.Size))
        form = "shape, *, device=" if shape_only else "indices, values, shape, *, device="
        if form not in _warned_legacy:
            _warned_legacy.append(form)
            warnings.warn("torch.sparse.SparseTensor(%s) is deprecated.  Please use torch.sparse_coo_tensor(%s, "
                          "dtype=, device=)." % (form, form.split(", *")[0]), UserWarning, stacklevel=2)
        if shape_only:
            return _empty(args[0] if len(args) == 1 and not isinstance(args[0], int) else args, dt)
        return _coo(*args, device=device)
    return _LegacySparseMeta(name, (object,), {"__new__": __new__, "dtype": dt, "__module__": "torch.sparse"})


from cthtorch._legacy import LEGACY_TYPES  # noqa: E402

(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_legacy(n, dt) for n, dt in LEGACY_TYPES)
