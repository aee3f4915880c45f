"""torch.sparse: products and reductions of sparse COO tensors, softmax over
their stored entries, and the legacy typed constructors (torch.sparse.FloatTensor)."""
import functools
import math
import warnings

import cthtorch
torch = cthtorch   # as torch's modules have it: old code writes torch.sparse.torch.eye(n)
from cthtorch import _sparse_ops as _ops
from cthtorch._sparse_factory import sparse_coo_tensor as _coo, _empty, _state
from cthtorch._sparse_tensor import SparseTensor, _named, _linear, add_rows

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants", "spdiags"]


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
        # torch's legacy constructor checks only when the global flag is on, and never warns that it is unset
        return _coo(*args, device=device, check_invariants=bool(_state["check"]))
    return _LegacySparseMeta(name, (object,), {"__new__": __new__, "dtype": dt, "__module__": "torch.sparse"})


from cthtorch._legacy import LEGACY_TYPES  # noqa: E402

(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_legacy(n, dt) for n, dt in LEGACY_TYPES)


def spdiags(diagonals, offsets, shape, layout=None):
    """A 2-D sparse tensor with row d of diagonals along diagonal offsets[d] (0 the main one, > 0 above it):
    the entry in column j of that diagonal is diagonals[d, j], as in scipy.sparse.spdiags."""
    if layout is None:
        layout = cthtorch.sparse_coo
    if layout not in (cthtorch.sparse_coo, cthtorch.sparse_csr, cthtorch.sparse_csc):
        names = {cthtorch.strided: "Strided", cthtorch.sparse_bsr: "SparseBsr", cthtorch.sparse_bsc: "SparseBsc"}
        raise RuntimeError("Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got %s"
                           % names.get(layout, layout))
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    if offsets.dtype != cthtorch.int64:
        from cthtorch._utils import _dtype_name
        raise RuntimeError("Offset Tensor must have dtype Long but got %s" % _dtype_name(offsets.dtype))
    if diagonals.dim() == 1 and offsets.dim() == 0:
        diagonals, offsets = diagonals.unsqueeze(0), offsets.unsqueeze(0)
    if diagonals.dim() != 2:
        raise RuntimeError("Diagonals must be vector or matrix")
    if offsets.dim() != 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if diagonals.shape[0] != offsets.shape[0]:
        raise RuntimeError("Number of diagonals (%d) does not match the number of offsets (%d)"
                           % (diagonals.shape[0], offsets.shape[0]))
    offs = offsets.tolist()
    if len(set(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    rows_n, cols_n = int(shape[0]), int(shape[1])
    cols, picks, shifts = [], [], []
    for d, k in enumerate(offs):
        # column j holds row j - k; both inside the output, j inside the diagonal's row
        j = cthtorch.arange(max(0, k), max(max(0, k), min(cols_n, rows_n + k, diagonals.shape[1])))
        cols.append(j)
        picks.append(j + d * diagonals.shape[1])
        shifts.append(j - k)
    cols, rows = cthtorch.cat(cols), cthtorch.cat(shifts)
    values = diagonals.reshape(-1)[cthtorch.cat(picks)]
    out = _coo(cthtorch.stack([rows, cols]), values, (rows_n, cols_n), check_invariants=False)
    if layout == cthtorch.sparse_csr:
        return out.to_sparse_csr()
    if layout == cthtorch.sparse_csc:
        return out.to_sparse_csc()
    return out
