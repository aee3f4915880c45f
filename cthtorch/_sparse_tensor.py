"""Sparse COO tensors: torch.sparse_coo layout, written on dense ops.

A SparseTensor holds three things, as PyTorch's SparseTensorImpl does:
  _i  int64 indices, sparse_dim x nnz (one column per stored entry);
  _v  values, nnz x *dense_dims (a plain dense cthtorch.Tensor);
  _shape the full size, sparse dims first.
Entries may repeat a position (an "uncoalesced" tensor means their sum);
coalesce() sorts and sums them. Every kernel is a handful of vectorised dense
ops on _i/_v (index_select, add_rows, unique), so autograd through the values
and through the dense operand of a product works without new C code.

It is not a _TensorBase: the C ops cannot read it, and ArgParser.c hands any
call that fails to parse because of one to cthtorch/_sparse_ops.py (PyTorch's
NotImplementedError when no sparse kernel exists there). `__class__` answers
cthtorch.Tensor, so isinstance(s, torch.Tensor) holds as in PyTorch.

Gradients: a sparse tensor made with requires_grad=True owns a leaf _v; its
.grad is a sparse tensor on its coalesced pattern, built from _v.grad (or the
dense gradient torch.mm gives a sparse leaf; see _sparse_ops._SparseMm).
"""
import types

import cthtorch
from cthtorch._python_layouts import PythonLayoutTensor
from cthtorch.autograd import Function

_MISSING = object()


class _Alias(Function):
    """Identity on the values; exists to give the node PyTorch's name."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g


_ALIASES = {}


def _named(name, values):
    """values, behind a pass-through grad_fn called `name` when autograd records."""
    if not (values.requires_grad and cthtorch.is_grad_enabled()):
        return values
    cls = _ALIASES.get(name)
    if cls is None:
        cls = _ALIASES[name] = name_node(type(name, (_Alias,), {}), name)
    return cls.apply(values)


def name_node(fn_cls, name):
    """Give the graph nodes of autograd.Function fn_cls PyTorch's name for them
    (grad_fn.name() and repr: <MmBackward0 object at ...>)."""
    node = fn_cls._backward_cls
    node.__name__ = node.__qualname__ = name
    node.__module__ = "builtins"
    node._native_node = True   # edges as torch's node has them: the differentiable inputs only
    return fn_cls


def add_rows(index, src, rows):
    """zeros(rows, *src.shape[1:]) with src[k] added into row index[k]: the
    scatter every sparse kernel ends in. Floating dtypes take one C pass
    (embedding's backward is exactly this sum, and differentiable); the rest
    take index_add."""
    shape = (rows,) + tuple(src.shape[1:])
    if index.numel() and not (0 <= int(index.min()) and int(index.max()) < rows):   # the C loop does not check
        raise RuntimeError("cthtorch: a sparse tensor's indices lie outside its size (%s); build it with "
                           "check_invariants=True to see where" % rows)
    if src.dtype in (cthtorch.float32, cthtorch.float64) and src.numel():
        flat = src.reshape(src.shape[0], -1)
        return cthtorch._C._internal.embedding_dense_backward(flat, index, [rows, flat.shape[1]], -1, False).view(shape)
    out = src.new_zeros(shape)
    return out.index_add(0, index, src) if src.shape[0] else out


def _nie(name):
    return cthtorch._C._sparse_kernel_missing(name)


class SparseTensor(PythonLayoutTensor):
    __slots__ = ("_i", "_v", "_shape", "_coalesced", "_dense_grad", "_grad_cache", "_dense_src", "__weakref__")

    def __init__(self, indices, values, size, coalesced=False):
        self._i, self._v, self._shape = indices, values, cthtorch.Size(size)
        self._coalesced = coalesced
        self._dense_grad = None    # torch.mm's dense gradient for a sparse leaf
        self._grad_cache = None    # (values grad, the sparse .grad built from it)
        self._dense_src = None     # the dense tensor to_sparse() read, when it requires grad

    def _like(self, values, indices=None, coalesced=None, size=None):
        return SparseTensor(self._i if indices is None else indices, values,
                            self._shape if size is None else size,
                            self._coalesced if coalesced is None else coalesced)

    # ---- what it is (the rest: PythonLayoutTensor) ----
    layout = property(lambda self: cthtorch.sparse_coo)
    is_sparse = True
    dtype = property(lambda self: self._v.dtype)
    device = property(lambda self: self._v.device)
    shape = property(lambda self: self._shape)
    ndim = property(lambda self: len(self._shape))
    data = property(lambda self: self.detach())

    def size(self, dim=None):
        return self._shape if dim is None else self._shape[dim]

    def dim(self):
        return len(self._shape)

    ndimension = dim

    def numel(self):
        return self._shape.numel()

    nelement = numel

    def element_size(self):
        return self._v.element_size()

    def is_floating_point(self):
        return self._v.is_floating_point()

    def is_complex(self):
        return False

    def is_signed(self):
        return self._v.is_signed()

    def sparse_dim(self):
        return self._i.shape[0]

    def dense_dim(self):
        return self._v.dim() - 1

    def _nnz(self):
        return self._v.shape[0]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._i

    def _values(self):   # as in PyTorch, outside autograd (values() is the differentiable one)
        return self._v.detach()

    def indices(self):
        self._need_coalesced("indices")
        return self._i

    def values(self):
        self._need_coalesced("values")
        return self._v

    def _need_coalesced(self, what):
        if not self._coalesced:
            raise RuntimeError("Cannot get %s on an uncoalesced tensor, please call .coalesce() first" % what)

    def stride(self, dim=None):
        return (0,) * self.dim() if dim is None else 0

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def item(self):
        if self.numel() != 1:
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar" % self.numel())
        return self.to_dense().item()

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")

    def __getitem__(self, index):
        if isinstance(index, int) and not isinstance(index, bool) and self.layout == cthtorch.sparse_coo:
            return self.select(0, index)   # s[i]: torch's select on a sparse tensor
        raise NotImplementedError("cthtorch: indexing a sparse tensor is not implemented (except s[i]); index "
                                  "s.to_dense() or use s.coalesce().indices()/.values()")

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents=None):
        from cthtorch._tensor_str import _sparse_str
        return _sparse_str(self)

    __str__ = __repr__

    def __getattr__(self, name):
        # what a dense Tensor has and this class does not: a method raises PyTorch's
        # NotImplementedError when called, a property when read; plain class values are shared
        import inspect   # here, not at import: inspect costs ~20 ms of `import cthtorch`
        attr = inspect.getattr_static(cthtorch.Tensor, name, _MISSING) if not name.startswith("__") else _MISSING
        if attr is _MISSING:
            raise AttributeError("'Tensor' object has no attribute '%s'" % name)
        if isinstance(attr, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
            _nie(name)
        if callable(attr) or isinstance(attr, (staticmethod, classmethod)):
            return lambda *args, **kwargs: _nie(name)
        return attr

    # the DLPack protocol exists on sparse tensors too, to refuse them with PyTorch's BufferError
    def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        from cthtorch.utils import dlpack
        return dlpack.dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        from cthtorch.utils import dlpack
        return dlpack.dlpack_device(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._i, self._v.detach(), tuple(self._shape), self._coalesced, self.requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            from cthtorch._tensor import DEEPCOPY_NON_LEAF
            raise RuntimeError(DEEPCOPY_NON_LEAF)
        new = self._like(self._v.detach().clone(), indices=self._i.clone())   # the same class and layout
        if self.requires_grad:
            new.requires_grad_()
        memo[id(self)] = new
        return new

    # ---- autograd ----
    requires_grad = property(lambda self: self._v.requires_grad)
    is_leaf = property(lambda self: self._v.is_leaf)
    grad_fn = property(lambda self: self._v.grad_fn)

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not self._v.is_floating_point():
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._v.requires_grad_(requires_grad)
        return self

    def detach(self):
        return self._like(self._v.detach())

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise NotImplementedError("cthtorch: backward() from a sparse tensor is not implemented; reduce it to a "
                                  "dense scalar first (e.g. torch.sparse.sum(s))")

    @property
    def grad(self):
        g = self._v.grad if self._v.is_leaf else None
        if g is not None:
            cache = self._grad_cache
            if cache is None or cache[0] is not g:
                cache = self._grad_cache = (g, self._on_pattern(g))
            g = cache[1]
        if self._dense_grad is None:
            return g
        return self._dense_grad if g is None else self._dense_grad + g.to_dense()

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise NotImplementedError("cthtorch: assigning .grad of a sparse tensor is not implemented "
                                      "(only `.grad = None`)")
        self._v.grad = None
        self._dense_grad = self._grad_cache = None

    def _on_pattern(self, per_entry):
        """A sparse tensor on this one's coalesced pattern from per-entry values
        that agree on repeated positions (a gradient sampled at each entry)."""
        if self._coalesced:
            return self._like(per_entry, coalesced=False)
        uniq, inv = cthtorch.unique(_linear(self._i, self._shape), sorted=True, return_inverse=True)
        vals = per_entry.new_zeros((uniq.shape[0],) + tuple(per_entry.shape[1:])).index_copy(0, inv, per_entry)
        return SparseTensor(_unravel(uniq, self._shape[:self.sparse_dim()]), vals, self._shape, False)

    # ---- conversions ----
    def to_dense(self, dtype=None, *, masked_grad=None):
        nsp = self.sparse_dim()
        out = add_rows(_linear(self._i, self._shape), self._v, self._shape[:nsp].numel())
        out = _named("ToDenseBackward0", out.view(self._shape))
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args, layout=None, **kwargs):
        if layout not in (None, cthtorch.sparse_coo) or args or kwargs:
            raise NotImplementedError("cthtorch: only the sparse COO layout is implemented")
        return self

    def coalesce(self):
        if self._coalesced:
            return self
        nsp = self.sparse_dim()
        if not (self._v.requires_grad and cthtorch.is_grad_enabled()):   # one C pass (src/ATen/ATSparse.c)
            r = cthtorch._C._sparse_coalesce(self._i, self._v.detach(), list(self._shape[:nsp]))
            if r is not None:
                return SparseTensor(r[0], r[1], self._shape, True)
        uniq, inv = cthtorch.unique(_linear(self._i, self._shape), sorted=True, return_inverse=True)
        vals = add_rows(inv, self._v, uniq.shape[0])
        return SparseTensor(_unravel(uniq, self._shape[:nsp]), _named("CoalesceBackward0", vals), self._shape, True)

    def to(self, *args, **kwargs):
        dtype, copy = None, kwargs.pop("copy", False)
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, cthtorch.dtype):
                dtype = a
            elif isinstance(a, cthtorch.Tensor):
                dtype = a.dtype
            elif a is not None and not isinstance(a, bool):
                if cthtorch.device(a).type != "cpu":
                    self._v.to(a)   # raises the dense error for an absent device
        if (dtype is None or dtype == self.dtype) and not copy:
            return self
        return self._like(self._v.to(dtype or self.dtype, copy=copy))

    def cpu(self, memory_format=None):
        return self

    def cuda(self, *args, **kwargs):
        self._v.cuda(*args, **kwargs)
        return self

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return "torch.sparse." + self._v.type().split(".")[-1]
        raise NotImplementedError("cthtorch: Tensor.type(dtype) on a sparse tensor is not implemented; use .to(dtype)")

    def zero_(self):
        """No entries left, as torch's sparse zero_ leaves it (optimizer.zero_grad(set_to_none=False))."""
        self._i = self._i.new_zeros((self.sparse_dim(), 0))
        self._v = self._v.new_zeros((0,) + tuple(self._v.shape[1:]))
        self._coalesced = True
        return self

    def mul_(self, other):
        if isinstance(other, cthtorch.Tensor) and (other.is_sparse or other.dim()):
            _nie("mul_")
        self._v = self._v.mul(other)   # values may be shared with another sparse tensor (a stolen gradient)
        return self

    def clone(self, *, memory_format=None):
        return self._like(self._v.clone(), indices=self._i.clone())

    def t(self):
        if self.dim() > 2 or self.dense_dim():
            raise RuntimeError("t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got %d sparse and "
                               "%d dense dimensions" % (self.sparse_dim(), self.dense_dim()))
        return self.transpose(0, 1) if self.dim() == 2 else self._like(_named("TBackward0", self._v))

    @property
    def T(self):
        return self.t() if self.dim() <= 2 else _nie("permute")

    mT = cthtorch.Tensor.mT   # dim() and transpose() are all it uses

    _version = property(lambda self: self._v._version)
    output_nr = property(lambda self: 0)
    real = property(lambda self: self)

    def transpose(self, dim0, dim1):
        n, nsp = self.dim(), self.sparse_dim()
        d0, d1 = dim0 % n if n else 0, dim1 % n if n else 0
        if d0 >= nsp or d1 >= nsp:
            raise NotImplementedError("cthtorch: transposing a dense dimension of a hybrid sparse tensor is not "
                                      "implemented")
        perm = list(range(nsp))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        size = list(self._shape)
        size[d0], size[d1] = size[d1], size[d0]
        name = "TBackward0" if self.dim() == 2 else "TransposeBackward0"
        return SparseTensor(self._i[perm], _named(name, self._v), size, self._coalesced and d0 == d1)


def _conversion(dtype_name):
    def convert(self, memory_format=None):
        return self.to(getattr(cthtorch, dtype_name))
    convert.__name__ = dtype_name
    return convert


for _n in ("float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool"):
    setattr(SparseTensor, _n, _conversion({"char": "int8", "byte": "uint8"}.get(_n, _n)))
del _n


def _linear(indices, shape):
    """Row-major linear positions of the index columns over the sparse dims."""
    nsp = indices.shape[0]
    if nsp == 1:
        return indices[0]
    strides, acc = [], 1
    for s in reversed(shape[:nsp]):
        strides.append(acc)
        acc *= s
    strides = cthtorch.tensor(strides[::-1], dtype=cthtorch.int64)
    return (indices * strides.unsqueeze(1)).sum(0)


def _unravel(linear, sparse_shape):
    rows, rest = [], linear
    for s in reversed(sparse_shape):
        rows.append(rest % s)
        rest = rest // s
    return cthtorch.stack(rows[::-1]) if rows else linear.new_zeros((0, linear.shape[0]))


def _rebuild(indices, values, size, coalesced, requires_grad):
    s = SparseTensor(indices, values, size, coalesced)
    return s.requires_grad_() if requires_grad else s
