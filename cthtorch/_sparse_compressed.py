"""Sparse CSR tensors (torch.sparse_csr layout), 2-D with scalar values: torch.sparse_csr_tensor,
Tensor.to_sparse_csr, crow_indices/col_indices/values, to_dense/to_sparse, and products with dense matrices.

A SparseCsrTensor is a SparseTensor (cthtorch/_sparse_tensor.py) whose COO entries are kept coalesced in
row-major order, which is exactly CSR's entry order: col_indices is the second index row, values the values,
and crow_indices the running count of entries per row. So the COO kernels compute the products, and the
C parser hands a CSR operand to the same dispatcher; ops that have no CSR meaning here (elementwise
arithmetic, reductions, indices()) raise instead of answering in the COO layout."""
import re
import warnings

import cthtorch
from cthtorch._sparse_tensor import SparseTensor, _named, _nie
from cthtorch._utils import _user_stacklevel

_beta_warned = []


def _warn_beta(layout):
    """torch's compressed-tensor constructor warns once per process, naming the first layout built; the CSC
    paths warn before the CSR tensor they go through"""
    if not _beta_warned:
        _beta_warned.append(True)
        warnings.warn("Sparse %s tensor support is in beta state. If you miss a functionality in the sparse tensor "
                      "support, please submit a feature request to https://github.com/pytorch/pytorch/issues."
                      % layout, stacklevel=_user_stacklevel())


class SparseCsrTensor(SparseTensor):
    __slots__ = ("_index_dtype",)

    def __init__(self, indices, values, size, index_dtype=(cthtorch.int64, cthtorch.int64)):
        super().__init__(indices, values, size, coalesced=True)
        self._index_dtype = index_dtype   # crow's and col's, int32 or int64 each, as given: torch keeps them
        _warn_beta("CSC" if isinstance(self, SparseCscTensor) else "CSR")

    def _like(self, values, indices=None, coalesced=None, size=None):
        if size is not None or coalesced is False:
            return super()._like(values, indices, coalesced, size)
        return SparseCsrTensor(self._i if indices is None else indices, values, self._shape, self._index_dtype)

    layout = property(lambda self: cthtorch.sparse_csr)
    is_sparse = False
    is_sparse_csr = True

    def crow_indices(self):
        counts = cthtorch.bincount(self._i[0], minlength=self._shape[0]) if self._i.shape[1] else \
            cthtorch.zeros(self._shape[0], dtype=cthtorch.int64)
        return cthtorch.cat([counts.new_zeros(1), counts.cumsum(0)]).to(self._index_dtype[0])

    def col_indices(self):
        return self._i[1].to(self._index_dtype[1])

    def values(self):
        return self._v

    def _need_coalesced(self, what):
        raise RuntimeError("%s expected sparse coordinate tensor layout but got SparseCsr" % what)

    def to_sparse(self, *args, layout=None, **kwargs):
        if layout == cthtorch.sparse_csr and not args and not kwargs:
            return self
        if layout not in (None, cthtorch.sparse_coo) or args or kwargs:
            raise NotImplementedError("cthtorch: only the sparse COO and CSR layouts are implemented")
        return SparseTensor(self._i, _named("ToSparseBackward1", self._v), self._shape, True)

    def to_sparse_coo(self):
        return self.to_sparse()

    def coalesce(self):
        self._need_coalesced("coalesce")

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if dim is not None:
            _nie("sum.dim_IntList")
        return self._v.sum(dtype=dtype)

    def mul(self, other):
        if not _is_scalar(other):
            _nie("mul.Tensor")
        return self._like(self._v * other)

    __mul__ = __rmul__ = mul

    def add(self, other, *, alpha=1):
        """CSR + CSR: summed as COO (entries merged, then coalesced into row-major order), back in CSR"""
        if type(other) is not SparseCsrTensor:
            _nie("add.Tensor")
        from cthtorch import _sparse_ops
        if self.shape != other.shape:
            raise RuntimeError("torch.add: Expected input tensors to have the same shape, but got tensor `self` with "
                               "shape %s and tensor `other` with shape %s" % (list(self.shape), list(other.shape)))
        return to_sparse_csr(_sparse_ops.add(self.to_sparse(), other.to_sparse(), alpha=alpha))

    __add__ = add

    def to_sparse_csr(self, dense_dim=None):
        return self

    def __repr__(self, *, tensor_contents=None):
        from cthtorch._tensor_str import _sparse_str
        return _sparse_str(self, (("crow_indices", self.crow_indices()), ("col_indices", self.col_indices()),
                                  ("values", self._v.detach())))

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._i, self._v.detach(), tuple(self._shape), self.requires_grad, self._index_dtype))

    def t(self):
        """the transpose in the other compressed layout (CSR <-> CSC), sharing the values' order"""
        i, v = _transposed_entries(self)
        cls = SparseCscTensor if type(self) is SparseCsrTensor else SparseCsrTensor
        return cls(i, _named("TBackward0", v), (self._shape[1], self._shape[0]), self._index_dtype)

    def transpose(self, dim0, dim1):
        if sorted((dim0 % 2, dim1 % 2)) != [0, 1]:
            _nie("transpose")
        return self.t()

    def to_sparse_csc(self):
        return to_sparse_csc(self)


def _column_major(s):
    """the permutation that puts s's (row-major) entries in column-major order; None when it is the identity"""
    if s._i.shape[1] < 2:
        return None
    key = s._i[1] * max(s._shape[0], 1) + s._i[0]
    order = cthtorch.argsort(key, stable=True)
    return order


def _transposed_entries(s):
    """s's indices and values for its transpose, in the transpose's row-major order"""
    order = _column_major(s)
    if order is None:
        return s._i.flip(0), s._v
    return s._i[:, order].flip(0), s._v[order]


class SparseCscTensor(SparseCsrTensor):
    """torch.sparse_csc: 2-D, scalar values. The entries are kept as CSR keeps them (row-major COO, so the COO
    kernels compute products and to_dense); ccol_indices/row_indices/values read them in column-major order."""
    __slots__ = ()
    layout = property(lambda self: cthtorch.sparse_csc)
    is_sparse_csr = False

    def _like(self, values, indices=None, coalesced=None, size=None):
        if size is not None or coalesced is False:
            return super()._like(values, indices, coalesced, size)
        return SparseCscTensor(self._i if indices is None else indices, values, self._shape, self._index_dtype)

    def _need_coalesced(self, what):
        raise RuntimeError("%s expected sparse coordinate tensor layout but got SparseCsc" % what)

    def crow_indices(self):
        raise RuntimeError("crow_indices expected sparse row compressed tensor layout but got SparseCsc")

    def col_indices(self):
        raise RuntimeError("col_indices expected sparse row compressed tensor layout but got SparseCsc")

    def ccol_indices(self):
        counts = cthtorch.bincount(self._i[1], minlength=self._shape[1]) if self._i.shape[1] else \
            cthtorch.zeros(self._shape[1], dtype=cthtorch.int64)
        return cthtorch.cat([counts.new_zeros(1), counts.cumsum(0)]).to(self._index_dtype[0])

    def row_indices(self):
        order = _column_major(self)
        return (self._i[0] if order is None else self._i[0][order]).to(self._index_dtype[1])

    def values(self):
        order = _column_major(self)
        return self._v if order is None else self._v[order]

    def to_sparse(self, *args, layout=None, **kwargs):
        if layout == cthtorch.sparse_csc and not args and not kwargs:
            return self
        if layout == cthtorch.sparse_csr and not args and not kwargs:
            return self.to_sparse_csr()
        if layout not in (None, cthtorch.sparse_coo) or args or kwargs:
            raise NotImplementedError("cthtorch: only the sparse COO, CSR and CSC layouts are implemented")
        return SparseTensor(self._i, _named("ToSparseBackward1", self._v), self._shape, True)

    def to_sparse_csr(self, dense_dim=None):
        return SparseCsrTensor(self._i, _named("ToSparseCsrBackward0", self._v), self._shape, self._index_dtype)

    def to_sparse_csc(self):
        return self

    def add(self, other, *, alpha=1):
        if type(other) is not SparseCscTensor:
            _nie("add.Tensor")
        return to_sparse_csc(self.to_sparse_csr().add(other.to_sparse_csr(), alpha=alpha))

    __add__ = add

    def __repr__(self, *, tensor_contents=None):
        from cthtorch._tensor_str import _sparse_str
        return _sparse_str(self, (("ccol_indices", self.ccol_indices()), ("row_indices", self.row_indices()),
                                  ("values", self.values().detach())))

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild_csc, (self._i, self._v.detach(), tuple(self._shape), self.requires_grad,
                               self._index_dtype))


def _rebuild_csc(indices, values, size, requires_grad, index_dtype=(cthtorch.int64, cthtorch.int64)):
    s = SparseCscTensor(indices, values, size, index_dtype)
    return s.requires_grad_() if requires_grad else s


def _no_csr_kernel(name):
    def f(self, *args, **kwargs):
        _nie(name)
    f.__name__ = name
    return f


def _is_scalar(x):
    return isinstance(x, (int, float, bool)) or (isinstance(x, cthtorch.Tensor) and not x.is_sparse
                                                 and not x.is_sparse_csr and x.dim() == 0)


def _on_values(name):
    """an op that maps 0 to 0, on the stored values: the pattern stays"""
    def f(self):
        return self._like(getattr(self._v, name)())
    f.__name__ = name
    return f


# the COO methods SparseTensor installs that would answer in the COO layout (or misread CSR)
def _unsupported_layout(name):
    def f(self, *args, **kwargs):
        raise RuntimeError("unsupported tensor layout: SparseCsr")   # torch's answer for these on CSR
    f.__name__ = name
    return f


for _n in ("sub", "__sub__", "__rsub__", "div", "__truediv__"):
    setattr(SparseCsrTensor, _n, _unsupported_layout(_n))
for _n in ("__radd__", "add_", "sub_", "mul_", "pow", "__pow__",
           "zero_", "zeros_like"):
    setattr(SparseCsrTensor, _n, _no_csr_kernel(_n))
for _n in ("neg", "abs", "relu", "sqrt", "tanh", "sin", "sign"):
    setattr(SparseCsrTensor, _n, _on_values(_n))
SparseCsrTensor.__neg__, SparseCsrTensor.__abs__ = SparseCsrTensor.neg, SparseCsrTensor.abs
del _n

# what the C dispatcher may run for a CSR operand (every other op raises torch's not-implemented error)
CSR_KERNELS = ("mm", "matmul", "addmm", "clone", "detach")


def _rebuild(indices, values, size, requires_grad, index_dtype=(cthtorch.int64, cthtorch.int64)):
    s = SparseCsrTensor(indices, values, size, index_dtype)
    return s.requires_grad_() if requires_grad else s


def _as_index(x, name):
    t = x if isinstance(x, cthtorch.Tensor) else cthtorch.tensor(x)
    if t.dtype not in (cthtorch.int32, cthtorch.int64):
        raise RuntimeError("%s must be an int32 or int64 type, but got: %s" % (name, str(t.dtype).replace("torch.", "")))
    return t.detach()


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    if device is not None and cthtorch.device(device).type != "cpu":
        cthtorch.empty(0, device=device)   # the dense error for an absent device
    crow, col = _as_index(crow_indices, "crow_indices"), _as_index(col_indices, "col_indices")
    index_dtype = (crow.dtype, col.dtype)
    crow, col = crow.to(cthtorch.int64), col.to(cthtorch.int64)
    vals = values if isinstance(values, cthtorch.Tensor) else cthtorch.tensor(values, dtype=dtype)
    if dtype is not None:
        vals = vals.to(dtype)
    if crow.dim() != 1 or col.dim() != 1 or vals.dim() != 1:
        raise NotImplementedError("cthtorch: only 2-D sparse CSR tensors with scalar values are implemented "
                                  "(crow_indices, col_indices and values 1-D)")
    if col.shape[0] != vals.shape[0]:
        raise RuntimeError("col_indices and values nnz must be equal, but got %d and %d"
                           % (col.shape[0], vals.shape[0]))
    if size is None:
        size = (crow.shape[0] - 1, int(col.max()) + 1 if col.numel() else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError("cthtorch: only 2-D sparse CSR tensors are implemented (size %s)" % (size,))
    from cthtorch._sparse_factory import _invariants_flag
    check = _invariants_flag(check_invariants)
    if crow.shape[0] != size[0] + 1:
        raise RuntimeError("crow_indices.size(-1) == nrows + 1 is not satisfied.")
    if crow.numel() and (int(crow[0]) != 0 or int(crow[-1]) != col.shape[0]):
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied." if int(crow[0]) != 0 else
                           "`crow_indices[..., -1] == nnz` is not satisfied.")
    counts = crow[1:] - crow[:-1]
    if counts.numel() and int(counts.min()) < 0:
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if check and col.numel():
        if int(col.min()) < 0 or int(col.max()) >= size[1]:
            raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
        same_row = cthtorch.repeat_interleave(cthtorch.arange(size[0]), counts)
        if col.numel() > 1 and bool(((col[1:] <= col[:-1]) & (same_row[1:] == same_row[:-1])).any()):
            raise RuntimeError("`col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = "
                               "1, ..., nrows are sorted and distinct along the last dimension values` is not "
                               "satisfied.")
    elif col.numel() and (int(col.min()) < 0 or int(col.max()) >= size[1]):
        # an out-of-range column is memory corruption in torch; here a clean error
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    if requires_grad and not vals.is_floating_point():
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    rows = cthtorch.repeat_interleave(cthtorch.arange(size[0]), counts)
    v = _named("SparseCompressedTensorBackward0", vals) if vals.requires_grad else vals.detach()
    s = SparseCsrTensor(cthtorch.stack([rows, col]), v, size, index_dtype)
    return s.requires_grad_() if requires_grad else s


def to_sparse_csr(self, dense_dim=None):
    """dense (or COO) 2-D -> CSR; the nonzero entries in row-major order."""
    if dense_dim is not None:
        raise NotImplementedError("cthtorch: sparse CSR tensors with dense dimensions are not implemented")
    if type(self) is SparseCsrTensor:
        return self
    if type(self) is SparseTensor:
        if self.dim() != 2 or self.dense_dim():
            raise NotImplementedError("cthtorch: only 2-D sparse CSR tensors with scalar values are implemented")
        c = self.coalesce()
        return SparseCsrTensor(c._i, c._v, c._shape)
    if self.dim() != 2:
        raise NotImplementedError("cthtorch: only 2-D sparse CSR tensors are implemented (input is %d-D)" % self.dim())
    idx = (self != 0).nonzero().t().contiguous()
    s = SparseCsrTensor(idx, _named("ToSparseCsrBackward0", self[tuple(idx)]), self.shape)
    if self.requires_grad and cthtorch.is_grad_enabled():
        s._dense_src = self   # torch.mm sends this tensor its dense gradient (_sparse_ops._SparseMm)
    return s


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """the CSR tensor of the transpose, built with the same checks (ccol for crow, row for col), transposed back"""
    if size is not None:
        size = tuple(size)
        if len(size) != 2:
            raise NotImplementedError("cthtorch: only 2-D sparse CSC tensors are implemented (size %s)" % (size,))
        size = (size[1], size[0])
    from cthtorch._sparse_factory import _invariants_flag
    check_invariants = _invariants_flag(check_invariants)
    _warn_beta("CSC")
    try:
        t = sparse_csr_tensor(ccol_indices, row_indices, values, size, dtype=dtype, device=device,
                              requires_grad=requires_grad, check_invariants=check_invariants)
    except RuntimeError as e:   # the CSR checks' words, in CSC's terms
        words = {"crow_indices": "ccol_indices", "col_indices": "row_indices", "nrows": "ncols", "ncols": "nrows"}
        msg = re.sub("|".join(words), lambda m: words[m.group(0)], str(e))
        raise RuntimeError(msg) from None
    i, v = _transposed_entries(t)
    s = SparseCscTensor(i, v, (t._shape[1], t._shape[0]), t._index_dtype)
    return s.requires_grad_() if requires_grad else s


def to_sparse_csc(self, dense_dim=None):
    """dense, COO or CSR 2-D -> CSC"""
    if dense_dim is not None:
        raise NotImplementedError("cthtorch: sparse CSC tensors with dense dimensions are not implemented")
    if type(self) is SparseCscTensor:
        return self
    _warn_beta("CSC")
    csr = to_sparse_csr(self)
    return SparseCscTensor(csr._i, _named("ToSparseCscBackward0", csr._v) if type(self) is SparseCsrTensor
                           else csr._v, csr._shape, csr._index_dtype)


def _strided_only(name, kind="row"):
    def f(self, *args, **kwargs):
        raise RuntimeError("%s expected sparse %s compressed tensor layout but got Strided" % (name, kind))
    f.__name__ = name
    return f


def register():
    from cthtorch import _ops
    o = __name__
    _ops.op("torch", "sparse_csr_tensor", sparse_csr_tensor, o)
    _ops.op("Tensor", "to_sparse_csr", to_sparse_csr, o)
    SparseTensor.to_sparse_csr = to_sparse_csr
    for name in ("crow_indices", "col_indices"):
        _ops.op("Tensor", name, _strided_only(name), o)
    _ops.op("torch", "sparse_csc_tensor", sparse_csc_tensor, o)
    _ops.op("Tensor", "to_sparse_csc", to_sparse_csc, o)
    SparseTensor.to_sparse_csc = to_sparse_csc
    for name in ("ccol_indices", "row_indices"):
        _ops.op("Tensor", name, _strided_only(name, "column"), o)
