"""torch.sparse_coo_tensor, Tensor.to_sparse, and the wiring of sparse tensors
into cthtorch (operators, dense methods that name the layout, the C dispatcher)."""
import warnings

import cthtorch
from cthtorch import _C
from cthtorch import _sparse_ops as ops
from cthtorch._sparse_tensor import SparseTensor, _named, _nie
from cthtorch._utils import _int_list, _user_stacklevel

_INVARIANT_WARNING = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when operating on "
    "a sparse tensor which violates the invariants, but checks incur performance overhead. To silence this warning, "
    "explicitly opt in or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance. ")   # torch's trailing space
_state = {"check": None, "warned": False}   # torch.sparse.check_sparse_tensor_invariants' global flag


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    if values is None:   # sparse_coo_tensor(size): all zeros
        size = indices if size is None else size
        return _empty(_int_list("sparse_coo_tensor", "size", 1, size), dtype or cthtorch.get_default_dtype(),
                      requires_grad)
    if device is not None and cthtorch.device(device).type != "cpu":
        cthtorch.empty(0, device=device)   # the dense error for an absent device
    idx = indices if isinstance(indices, cthtorch.Tensor) else cthtorch.tensor(indices)
    idx = idx.detach().to(cthtorch.int64)
    if idx.dim() == 1:
        idx = idx.unsqueeze(1)
    vals = values if isinstance(values, cthtorch.Tensor) else cthtorch.tensor(values, dtype=dtype)
    if dtype is not None:
        vals = vals.to(dtype)
    if idx.dim() != 2:
        raise RuntimeError("indices must be sparse_dim x nnz, but got: %s" % list(idx.shape))
    nsp, ndense = idx.shape[0], vals.dim() - 1
    if size is None:
        size = (idx.max(1).values + 1).tolist() if idx.shape[1] else [0] * nsp
        size += list(vals.shape[1:])
    size = _int_list("sparse_coo_tensor", "size", 3, size)
    if len(size) != nsp + ndense:
        raise RuntimeError("'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = %d, sparse_dim = %d, "
                           "dense_dim = %d" % (len(size), nsp, ndense))
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError("indices and values must have same nnz, but got nnz from indices: %d, nnz from values: %d"
                           % (idx.shape[1], vals.shape[0]))
    check_invariants = _invariants_flag(check_invariants)
    if check_invariants and idx.shape[1]:
        _check_bounds(idx, size)
    if requires_grad and not vals.is_floating_point():
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    v = _named("SparseCooTensorWithDimsAndTensorsBackward0", vals) if vals.requires_grad else vals.detach()
    s = SparseTensor(idx, v, size, bool(is_coalesced) if is_coalesced is not None else idx.shape[1] < 2)
    return s.requires_grad_() if requires_grad else s


def _invariants_flag(check_invariants):
    """The constructor's check_invariants, else the global flag; unset both ways, torch's warning once per
    process (one flag for every sparse layout's constructor), at the user's line"""
    if check_invariants is None:
        check_invariants = _state["check"]
    if check_invariants is None and not _state["warned"]:
        _state["warned"] = True
        warnings.warn(_INVARIANT_WARNING, UserWarning, stacklevel=_user_stacklevel())
    return check_invariants


def _check_bounds(idx, size):
    lo, hi = idx.min(1).values.tolist(), idx.max(1).values.tolist()
    for d, (a, b) in enumerate(zip(lo, hi)):
        if a < 0:
            raise RuntimeError("found negative index %d for dim %d" % (a, d))
        if b >= size[d]:
            raise RuntimeError("size is inconsistent with indices: for dim %d, size is %d but found index %d"
                               % (d, size[d], b))


def _empty(size, dtype, requires_grad=False, sparse_dim=None):
    size = list(size)
    nsp = len(size) if sparse_dim is None else sparse_dim
    s = SparseTensor(cthtorch.zeros((nsp, 0), dtype=cthtorch.int64),
                     cthtorch.zeros([0] + size[nsp:], dtype=dtype), size, True)
    return s.requires_grad_() if requires_grad else s


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """dense -> sparse COO over the first sparse_dim dims (default all), or CSR."""
    if layout == cthtorch.sparse_csr and sparse_dim is None and blocksize is None:
        from cthtorch._sparse_compressed import to_sparse_csr
        return to_sparse_csr(self, dense_dim)
    if layout not in (None, cthtorch.sparse_coo) or blocksize is not None or dense_dim is not None:
        raise NotImplementedError("cthtorch: only the sparse COO layout is implemented (to_sparse(layout=%s))"
                                  % layout)
    nsp = self.dim() if sparse_dim is None else sparse_dim
    if not 0 < nsp <= self.dim():
        raise NotImplementedError("cthtorch: to_sparse of a 0-d tensor or with sparse_dim=0 is not implemented")
    mask = self != 0
    if nsp < self.dim():
        mask = mask.flatten(nsp).any(nsp)
    idx = mask.nonzero().t().contiguous()
    vals = _named("ToSparseBackward1", self[tuple(idx)])
    s = SparseTensor(idx, vals, self.shape, True)
    if self.requires_grad and cthtorch.is_grad_enabled():
        s._dense_src = self   # torch.mm sends this tensor its dense gradient (_sparse_ops._SparseMm)
    return s


def _no_layout(layout):
    def f(self, *args, **kwargs):
        raise NotImplementedError("cthtorch: the sparse %s layout is not implemented (only sparse COO, CSR and CSC: to_sparse(), to_sparse_csr(), to_sparse_csc())"
                                  % layout.upper())
    f.__name__ = "to_sparse_" + layout
    return f


def _strided_only(name):
    def f(self, *args, **kwargs):
        raise RuntimeError("%s expected sparse coordinate tensor layout but got Strided" % name)
    f.__name__ = name
    return f


def _nnz_dense(self):
    raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend. This could be "
                              "because the operator doesn't exist for this backend, or was omitted during the "
                              "selective/custom build process (if using custom build).")


def _install_sparse_methods():
    S, K = SparseTensor, ops._KERNELS
    S.mm = S.spmm = ops.mm
    S.matmul = S.__matmul__ = ops.matmul
    S.__rmatmul__ = lambda self, other: ops.matmul(other, self)
    S.sum = ops.sum
    S.add = S.__add__ = ops.add
    S.add_ = ops.add_
    S.sub_ = lambda self, other, *, alpha=1: ops.add_(self, other, alpha=-alpha)
    S.__radd__ = lambda self, other: ops.add(other, self)
    S.sub = S.__sub__ = ops.sub
    S.__rsub__ = lambda self, other: ops.sub(other, self)
    S.mul = S.__mul__ = S.__rmul__ = ops.mul
    S.div = S.__truediv__ = ops.div
    S.__rtruediv__ = lambda self, other: _nie("reciprocal")
    S.__eq__ = lambda self, other: _nie("eq.Tensor")
    S.zeros_like = ops.zeros_like
    for name in ("neg", "abs", "relu", "sqrt", "pow", "tanh", "sin", "sign", "index_select", "select", "unsqueeze"):
        setattr(S, name, K[name])
    S.__neg__, S.__abs__, S.__pow__ = K["neg"], K["abs"], K["pow"]


def register():
    """Registers the sparse factories and the strided side of the sparse
    Tensor methods (cthtorch/_ops); SparseTensor's own methods are its class's."""
    from cthtorch import _ops
    o = __name__
    _ops.op("torch", "sparse_coo_tensor", sparse_coo_tensor, o)
    _ops.op("torch", "spmm", ops.spmm, o)
    _ops.op("Tensor", "to_sparse", to_sparse, o)
    _ops.op("Tensor", "to_sparse_coo", lambda self: to_sparse(self), o, aten="to_sparse")
    for layout in ("bsr", "bsc"):
        _ops.op("Tensor", "to_sparse_" + layout, _no_layout(layout), o)
    for name in ("is_coalesced", "coalesce", "indices", "values", "_indices", "_values"):
        _ops.op("Tensor", name, _strided_only(name), o)
    _ops.op("Tensor", "_nnz", _nnz_dense, o)
    _ops.op("Tensor", "sparse_mask", ops.sparse_mask, o)
    _ops.op("Tensor", "sparse_dim", lambda self: 0, o)
    _ops.op("Tensor", "dense_dim", lambda self: self.dim(), o)
    _install_sparse_methods()
    from cthtorch import _sparse_compressed
    _sparse_compressed.register()
    from cthtorch import _python_layouts
    _C._set_sparse_dispatch(_python_layouts.PythonLayoutTensor, _python_layouts.dispatch)
