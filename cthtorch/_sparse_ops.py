"""Sparse COO kernels: products, sums, arithmetic, gradient accumulation, and
the dispatcher that the C argument parser calls when a sparse tensor reaches a
dense op (ArgParser.h).

Every kernel works on the (indices, values) pair with dense ops, one
vectorised pass per call and no Python loop over the entries; the sum of two
sparse tensors and coalesce() run in C (_C._sparse_add/_sparse_coalesce,
src/ATen/ATSparse.c) when no gradient is recorded through them.
"""
import cthtorch
from cthtorch.autograd import Function
from cthtorch._utils import _dtype_name
from cthtorch._sparse_tensor import SparseTensor, _named, _nie, add_rows, name_node
from cthtorch._sparse_compressed import SparseCsrTensor, CSR_KERNELS

_dense_mm = cthtorch.mm


def is_sparse(x):
    return isinstance(x, SparseTensor)   # a CSR tensor too (_sparse_compressed.py), for the products it allows


# ---------------------------------------------------------------- S @ D

class _SparseMm(Function):
    """out = S @ D for a 2-D sparse S and a dense 2-D D: gather the rows of D
    named by S's columns, scale them by S's values, add them into the rows
    named by S's rows (add_rows).

    Input 0 is what receives S's gradient, by `mode`:
      "values": S's values; the gradient sampled at each entry (sparse.mm,
                and any S built from other tensors: PyTorch masks it too);
      "leaf":   S's values, S a leaf: torch.mm's full dense gradient G @ D^T
                goes to S.grad (SparseTensor._dense_grad);
      "dense":  the dense tensor S came from by to_sparse(): it gets G @ D^T."""

    @staticmethod
    def forward(ctx, src, dense, s, mode):
        rows, cols = s._i[0], s._i[1]
        values = s._v.detach()
        out = add_rows(rows, values.unsqueeze(1) * dense.index_select(0, cols), s._shape[0])
        ctx.save_for_backward(values, dense)
        ctx.s, ctx.mode = s, mode
        return out

    @staticmethod
    def backward(ctx, g):
        values, dense = ctx.saved_tensors
        s, mode = ctx.s, ctx.mode
        rows, cols = s._i[0], s._i[1]
        gsrc = gd = None
        if ctx.needs_input_grad[1]:
            gd = add_rows(cols, values.unsqueeze(1) * g.index_select(0, rows), dense.shape[0])
        if ctx.needs_input_grad[0]:
            if mode == "values":
                gsrc = (g.index_select(0, rows) * dense.index_select(0, cols)).sum(1)
            else:
                gsrc = _dense_mm(g, dense.t())
                if mode == "leaf":
                    s._dense_grad = gsrc if s._dense_grad is None else s._dense_grad + gsrc
                    gsrc = None
        return gsrc, gd, None, None


class _Mm(_SparseMm):
    pass


class _SparseAddmm(_SparseMm):
    pass


name_node(_Mm, "MmBackward0")
name_node(_SparseAddmm, "SparseAddmmBackward0")


def _spmm(s, d, dense_grad):
    """sparse 2-D @ dense 2-D with PyTorch's checks. dense_grad: torch.mm's
    rule (a dense gradient for S) rather than torch.sparse.mm's (S's pattern)."""
    if s.sparse_dim() != 2 or s.dense_dim():
        raise RuntimeError("cthtorch: sparse @ dense needs a 2-D sparse matrix (2 sparse, 0 dense dims), got "
                           "%d sparse and %d dense dims" % (s.sparse_dim(), s.dense_dim()))
    if d.dim() != 2:
        raise IndexError("Dimension out of range (expected to be in range of [-%d, %d], but got 1)"
                         % (max(d.dim(), 1), max(d.dim(), 1) - 1))
    if s.dtype != d.dtype:
        raise RuntimeError("expected scalar type %s but found %s" % (_dtype_name(s.dtype), _dtype_name(d.dtype)))
    if d.shape[0] != s._shape[1]:
        raise RuntimeError("addmm: Argument #3 (dense): Expected dim 0 size %d, got %d" % (s._shape[1], d.shape[0]))
    if not dense_grad:
        return _SparseAddmm.apply(s._v, d, s, "values")
    if s._dense_src is not None:
        return _Mm.apply(s._dense_src, d, s, "dense")
    return _Mm.apply(s._v, d, s, "leaf" if s.is_leaf else "values")


def _sparse_sparse_mm(a, b):
    """S1 @ S2 -> a coalesced sparse result on the structural product pattern
    (every (i, j) with some a[i, k] and b[k, j] stored, zeros included, as
    PyTorch keeps them): join a's columns with b's rows, multiply, coalesce."""
    if a.requires_grad or b.requires_grad:
        raise NotImplementedError("cthtorch: gradients of sparse @ sparse are not implemented; use "
                                  "torch.sparse.mm(a, b.to_dense()) for a dense result with gradients")
    for t in (a, b):
        if t.sparse_dim() != 2 or t.dense_dim():
            raise RuntimeError("cthtorch: sparse @ sparse needs 2-D sparse matrices")
    if a.dtype != b.dtype:
        raise RuntimeError("mat1 dtype %s does not match mat2 dtype %s" % (_dtype_name(a.dtype), _dtype_name(b.dtype)))
    if not a.is_floating_point():
        raise NotImplementedError('"sparse_matmul" not implemented for \'%s\'' % _dtype_name(a.dtype))
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (m, k, k2, n))
    a, b = a.coalesce(), b.coalesce()          # b's entries now grouped by row
    per_row = cthtorch.bincount(b._i[0], minlength=k)
    first = per_row.cumsum(0) - per_row        # where b's row r starts
    pairs = per_row[a._i[1]]                   # how many b entries each a entry meets
    ea = cthtorch.repeat_interleave(cthtorch.arange(a._nnz()), pairs)
    offset = cthtorch.arange(ea.shape[0]) - cthtorch.repeat_interleave(pairs.cumsum(0) - pairs, pairs)
    eb = first[a._i[1]][ea] + offset
    idx = cthtorch.stack([a._i[0][ea], b._i[1][eb]])
    r = SparseTensor(idx, a._v[ea] * b._v[eb], (m, n)).coalesce()
    return SparseTensor(r._i, r._v, (m, n), True)


def mm(input, mat2, *, out=None, _sparse_grad=False):
    a, b = input, mat2
    if out is not None:
        raise NotImplementedError("cthtorch: out= with a sparse operand is not implemented")
    if is_sparse(a) and is_sparse(b):
        if a.layout == cthtorch.sparse_csr and b.layout == cthtorch.sparse_csr:   # CSR @ CSR is CSR
            from cthtorch._sparse_compressed import to_sparse_csr
            return to_sparse_csr(_sparse_sparse_mm(a.to_sparse(), b.to_sparse()))
        if a.layout != b.layout:
            _nie("mm")
        return _sparse_sparse_mm(a, b)
    if is_sparse(a):
        return _spmm(a, b, not _sparse_grad)
    if is_sparse(b):   # D @ S = (S^T @ D^T)^T
        if a.dim() != 2:
            raise RuntimeError("self must be a matrix")
        return _spmm(SparseTensor.transpose(b, 0, 1), a.t(), False).t()
    return _dense_mm(a, b)


def spmm(input, mat2):
    return mm(input, mat2)


def matmul(input, other, *, out=None):
    a, b = input, other
    if is_sparse(a) and not is_sparse(b) and b.dim() == 1:
        return mm(a, b.unsqueeze(1), out=out).squeeze(1)
    if is_sparse(a) and not is_sparse(b) and b.dim() > 2:
        raise RuntimeError("expand is unsupported for Sparse tensors")
    return mm(a, b, out=out)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    prod = mm(mat1, mat2, out=out, _sparse_grad=True)
    if is_sparse(input):
        input = input.to_dense()
    return cthtorch.add(input * beta if beta != 1 else input, prod, alpha=alpha) if beta else prod * alpha


# ---------------------------------------------------------------- sums

def _dims(dim, n):
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                             % (-n, n - 1, d))
        d %= n
        if d in out:
            raise RuntimeError("dim %d appears multiple times in the list of dims" % d)
        out.append(d)
    return out


def sum(s, dim=None, keepdim=False, *, dtype=None, _sparse_name=False):
    """Tensor.sum / torch.sparse.sum: all dims -> a dense scalar; some sparse
    dims -> a coalesced sparse tensor over the rest."""
    v = s._v if dtype is None else s._v.to(dtype)
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return v.sum()
    dims, nsp = _dims(dim, s.dim()), s.sparse_dim()
    dense_dims = [d - nsp + 1 for d in dims if d >= nsp]
    if dense_dims:
        v = v.sum(dense_dims, keepdim=keepdim)
    keep = [d for d in range(nsp) if d not in dims]
    if not keep and not keepdim:   # every sparse dim reduced: a dense result
        return _named("SparseSumBackward0", v.sum(0))
    size = [1 if d in dims else n for d, n in enumerate(s._shape)] if keepdim else \
        [n for d, n in enumerate(s._shape) if d not in dims]
    idx = s._i.clone()
    if keepdim:
        idx[[d for d in range(nsp) if d in dims]] = 0
    else:
        idx = idx[keep]
    r = SparseTensor(idx, v, size).coalesce()
    return SparseTensor(r._i, _named("SparseSumBackward0", r._v), size, not keepdim)


# ---------------------------------------------------------------- arithmetic

def _is_scalar(x):
    return isinstance(x, (int, float, bool)) or (isinstance(x, cthtorch.Tensor) and not is_sparse(x) and x.dim() == 0)


def mul(input, other, *, out=None):
    a, b = input, other
    if is_sparse(b) and not is_sparse(a):
        a, b = b, a
    if is_sparse(b):
        return _mul_sparse(a, b)
    if _is_scalar(b):
        return a._like(a._v * b)
    dense = b.expand(a._shape) if tuple(b.shape) != tuple(a._shape) else b
    return a._like(a._v * dense[tuple(a._i)])


def _mul_sparse(x, y):
    """sparse * sparse as torch's intersection kernel: one operand (x if coalesced, else y if coalesced, else x
    coalesced) is looked up at each entry of the other, the source, whose pattern the result keeps: every entry,
    0 where the lookup has none, when the source is uncoalesced; only the matches, coalesced, when it is."""
    if x._shape != y._shape or x.sparse_dim() != y.sparse_dim():
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                           "number of sparse dimensions, and shape of sparse dimensions")
    if not x._nnz() or not y._nnz():   # torch's short cut: an empty, coalesced product
        values = (x._v[:0] * y._v[:0])
        return SparseTensor(x._i[:, :0], values, x._shape, True)
    if x._coalesced:
        lookup, source = x, y
    elif y._coalesced:
        lookup, source = y, x
    else:
        lookup, source = x.coalesce(), y
    nsp = x.sparse_dim()
    strides = [1] * nsp
    for d in range(nsp - 2, -1, -1):
        strides[d] = strides[d + 1] * x._shape[d + 1]
    weights = cthtorch.tensor(strides, dtype=cthtorch.int64).unsqueeze(1)
    keys, wanted = (lookup._i * weights).sum(0), (source._i * weights).sum(0)   # row-major linear positions
    n = keys.shape[0]
    pos = cthtorch.searchsorted(keys, wanted).clamp(max=max(n - 1, 0))
    match = keys[pos] == wanted if n else cthtorch.zeros(wanted.shape, dtype=cthtorch.bool)
    found = lookup._v[pos] if n else cthtorch.zeros_like(source._v)
    mask = match.reshape((-1,) + (1,) * (source._v.dim() - 1))
    values = source._v * cthtorch.where(mask, found, cthtorch.zeros((), dtype=found.dtype))
    if not source._coalesced:
        return SparseTensor(source._i, values, x._shape)
    return SparseTensor(source._i[:, match], values[match], x._shape, True)


def div(input, other, *, rounding_mode=None, out=None):
    a, b = input, other
    if is_sparse(b) or not _is_scalar(b):
        shape = list(b.shape) if isinstance(b, cthtorch.Tensor) else []
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor (got shape %s for "
                           "divisor)" % shape)
    return a._like(cthtorch.div(a._v, b, rounding_mode=rounding_mode))


def _check_dense_sparse(a, b):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError("add: expected 'self' and 'other' to have same size, but self has size %s while other "
                           "has size %s (FYI: dense-sparse addition does not currently support broadcasting)"
                           % (list(a.shape), list(b.shape)))


def _merge(a, b, alpha):
    """(indices, values) of a + alpha * b by the C merge walk (torch's entry
    order), or None where autograd records through the values or the dtype
    has no kernel."""
    if cthtorch.is_grad_enabled() and (a._v.requires_grad or b._v.requires_grad):
        return None
    dt = cthtorch.promote_types(a.dtype, b.dtype)
    return cthtorch._C._sparse_add(a._i, a._v.detach().to(dt), b._i, b._v.detach().to(dt), alpha)


def _check_sparse_sparse(a, b):
    if a._shape != b._shape:
        raise RuntimeError("add: expected sizes of 'self' and 'other' to match, but %s != %s"
                           % (list(a._shape), list(b._shape)))
    if a.sparse_dim() != b.sparse_dim():
        raise NotImplementedError("cthtorch: adding sparse tensors of different sparse_dim is not implemented")


def add(input, other, *, alpha=1, out=None):
    a, b = input, other
    if out is not None:
        raise NotImplementedError("cthtorch: out= with a sparse operand is not implemented")
    if not is_sparse(a):   # dense + sparse -> dense
        _check_dense_sparse(a, b)
        return cthtorch.add(a, b.to_dense(), alpha=alpha)
    if not is_sparse(b):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    _check_sparse_sparse(a, b)
    merged = _merge(a, b, alpha)
    if merged is not None:
        return SparseTensor(merged[0], merged[1], a._shape, a._coalesced and b._coalesced)
    bv = b._v if alpha == 1 else b._v * alpha
    both = SparseTensor(cthtorch.cat([a._i, b._i], 1), cthtorch.cat([a._v, bv]), a._shape)
    r = both.coalesce() if both._nnz() else both
    return SparseTensor(r._i, r._v, a._shape, a._coalesced and b._coalesced)


def sub(input, other, *, alpha=1, out=None):
    return add(input, other, alpha=-alpha, out=out)


def add_(self, other, *, alpha=1):
    """In place: dense += sparse adds each entry into its row (torch's
    add_dense_sparse: row += alpha * value, entry by entry); sparse += sparse
    takes the merged entries."""
    if not is_sparse(self):
        _check_dense_sparse(self, other)
        if other._nnz() and not (other._v.requires_grad and cthtorch.is_grad_enabled()):
            vals = other._v.detach().to(self.dtype)
            # index_put_'s accumulating C loop (4x index_add_'s speed at embedding sizes)
            return self.index_put_(tuple(other._i), vals if alpha == 1 else vals * alpha, accumulate=True)
        return self.add_(other.to_dense(), alpha=alpha)
    if not is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    _check_sparse_sparse(self, other)
    r = add(self, other, alpha=alpha)
    self._i, self._v, self._coalesced = r._i, r._v.to(self.dtype), r._coalesced
    return self


def accumulate_grad(var, grad, new, grad_mode):
    """var.grad after gradient `new` arrives, when it or var.grad is sparse:
    torch's AccumulateGrad (called from C, src/python/Sparse.c). A first
    sparse gradient is kept as it is (torch steals it), a later one is added
    into .grad in place (sparse + sparse merges, dense += sparse scatters);
    a dense gradient onto a sparse .grad gives a dense .grad. Under
    create_graph every sum is out of place and recorded."""
    if grad is None:
        if not grad_mode:
            return SparseTensor(new._i, new._v.detach(), new._shape, new._coalesced)
        return new.clone()
    if is_sparse(grad) and not is_sparse(new):
        return new + grad.to_dense()
    if grad_mode:
        return grad + new
    return add_(grad, new)


def sparse_mask(self, mask):
    """dense.sparse_mask(s): a sparse tensor on s's entries with self's values there."""
    if not is_sparse(mask):
        raise RuntimeError("sparse_mask expects mask to be sparse")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size %s but mask has size %s"
                           % (list(self.shape), list(mask.shape)))
    return SparseTensor(mask._i, self[tuple(mask._i)], mask._shape, mask._coalesced)


def _into_dense(name):
    """dense.add_/sub_/mul_(sparse): in place, through the sparse operand's dense form."""
    def op(self, other, **kwargs):
        if is_sparse(self):
            return NotImplemented
        return getattr(self, name)(other.to_dense(), **kwargs)
    return op


def _unary(name, coalesces=True):
    def op(s, *args, **kwargs):
        base = s.coalesce() if coalesces else s
        return base._like(getattr(cthtorch, name)(base._v, *args, **kwargs))
    op.__name__ = name
    return op


# ---------------------------------------------------------------- the rest

def zeros_like(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
               memory_format=None):
    dt = dtype or s.dtype
    r = SparseTensor(s._i.new_zeros((s.sparse_dim(), 0)), cthtorch.zeros((0,) + tuple(s._v.shape[1:]), dtype=dt),
                     s._shape, True)
    return r.requires_grad_() if requires_grad else r


def cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    for k, t in enumerate(tensors):
        if not is_sparse(t):
            raise RuntimeError("Concatenating sparse tensors, but a dense tensor was found at position %d." % k)
    first = tensors[0]
    d = dim % first.dim()
    if d >= first.sparse_dim():
        raise NotImplementedError("cthtorch: concatenating hybrid sparse tensors along a dense dim is not implemented")
    idx, offset = [], 0
    for t in tensors:
        i = t._i.clone()
        i[d] += offset
        idx.append(i)
        offset += t._shape[d]
    size = list(first._shape)
    size[d] = offset
    return SparseTensor(cthtorch.cat(idx, 1), cthtorch.cat([t._v for t in tensors]), size)


def index_select(s, dim, index, *, out=None):
    """entries whose coordinate along a sparse dim is index[k], in k order then entry order (torch's), that
    coordinate renumbered k; along a dense dim the values' own index_select"""
    d = _dims(dim, s.dim())[0]
    if is_sparse(index) or index.dim() != 1 or index.dtype != cthtorch.int64:   # torch's kernel takes only these
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) long-tensor.")
    size = list(s._shape)
    size[d] = index.numel()
    if d >= s.sparse_dim():
        return SparseTensor(s._i, s._v.index_select(d - s.sparse_dim() + 1, index), size, s._coalesced)
    n = s._shape[d]
    bad = ((index < -n) | (index >= n)).nonzero()
    if bad.numel():   # the first one, as torch's loop meets it
        raise IndexError("index_select(): index contains %d that is out of range for tensor of size %s at "
                         "dimension %d" % (int(index[bad[0, 0]]), list(s._shape), d))
    index = cthtorch.where(index < 0, index + n, index)   # negative indices wrap, as torch's kernel does
    k, e = (index.reshape(-1, 1) == s._i[d].unsqueeze(0)).nonzero().unbind(1)
    idx = s._i[:, e].clone()
    idx[d] = k
    return SparseTensor(idx, s._v[e], size, k.numel() < 2)   # torch's flag: fewer than two entries are coalesced


def select(s, dim, i):
    """index_select of the one coordinate with that dim dropped (torch leaves the result uncoalesced)"""
    d = _dims(dim, s.dim())[0]
    n = s._shape[d]
    if not -n <= i < n:
        raise IndexError("select(): index %d out of range for tensor of size %s at dimension %d"
                         % (i, list(s._shape), d))
    r = index_select(s, d, cthtorch.tensor([i % n]))
    size = [x for j, x in enumerate(s._shape) if j != d]
    if d >= s.sparse_dim():
        return SparseTensor(r._i, r._v.squeeze(d - s.sparse_dim() + 1), size, s._coalesced)
    return SparseTensor(cthtorch.cat([r._i[:d], r._i[d + 1:]]), r._v, size, r._coalesced)


def unsqueeze(s, dim):
    """a size-1 sparse dim (coordinate 0) where it falls among the sparse dims, else a dense one"""
    d = _dims(dim, s.dim() + 1)[0]
    size = list(s._shape)
    size.insert(d, 1)
    if d > s.sparse_dim():
        return SparseTensor(s._i, s._v.unsqueeze(d - s.sparse_dim() + 1), size, s._coalesced)
    idx = cthtorch.cat([s._i[:d], s._i.new_zeros((1, s._i.shape[1])), s._i[d:]])
    return SparseTensor(idx, s._v, size, s._nnz() < 2)


def stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    return cat([unsqueeze(t, dim) if is_sparse(t) else t for t in tensors], dim)


_KERNELS = {
    "mm": mm, "matmul": matmul, "addmm": addmm, "add": add, "sub": sub, "mul": mul, "div": div, "sum": sum,
    "add_": add_, "sub_": lambda self, other, *, alpha=1: add_(self, other, alpha=-alpha),
    "mul_": _into_dense("mul_"),
    "div_": lambda self, other, **kwargs: div(self, other),
    "zeros_like": zeros_like, "cat": cat, "stack": stack, "index_select": index_select, "select": select,
    "unsqueeze": unsqueeze,
    "t": lambda s: s.t(), "transpose": lambda s, d0, d1: s.transpose(d0, d1),
    "clone": lambda s, **kw: s.clone(), "detach": lambda s: s.detach(),
    "neg": _unary("neg", False), "abs": _unary("abs"), "relu": _unary("relu"), "sqrt": _unary("sqrt"),
    "pow": _unary("pow"), "tanh": _unary("tanh"), "sin": _unary("sin"), "sign": _unary("sign"),
}


def dispatch(name, self, args, kwargs):
    """Called from C (ap_sparse_call) when a sparse tensor made `name` fail to parse."""
    fn = _KERNELS.get(name)
    if fn is None or (name not in CSR_KERNELS and any(isinstance(a, SparseCsrTensor) for a in
                                                      (self,) + tuple(args) + tuple(kwargs.values()))):
        return NotImplemented
    return fn(*args, **kwargs) if self is None else fn(self, *args, **kwargs)
