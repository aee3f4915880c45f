"""Nested tensors (torch.nested, the strided layout): a batch of tensors with the same number of dimensions whose
sizes may differ, such as sequences of different lengths.

A NestedTensor keeps its components as a tuple of ordinary tensors. Every op it supports runs the dense op on
each component, so values, dtypes and gradients are the dense ops' (a component built with requires_grad=True is a
leaf; as_nested_tensor keeps its inputs' history), and to_padded_tensor pads each component and stacks them.
Ops with no nested meaning here raise PyTorch's NotImplementedError for the NestedTensorCPU backend; the jagged
layout is not implemented."""
import numbers
import warnings

import cthtorch
from cthtorch._python_layouts import PythonLayoutTensor

_MISSING = object()


def _nie(name):
    raise NotImplementedError(
        "Could not run 'aten::%s' with arguments from the 'NestedTensorCPU' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build). (cthtorch's nested tensors implement pointwise ops, matmul/bmm/linear, softmax, "
        "transpose and to_padded_tensor; see cthtorch/_nested_tensor.py)" % name)


def _is_nested(x):
    return isinstance(x, NestedTensor)


_prototype_warned = False


class NestedTensor(PythonLayoutTensor):
    __slots__ = ("_ts", "__weakref__")

    def __init__(self, components):
        global _prototype_warned
        if not _prototype_warned:   # torch's NestedTensorImpl warns once per process (TORCH_WARN_ONCE)
            _prototype_warned = True
            warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change in the near "
                          "future. We recommend specifying layout=torch.jagged when constructing a nested tensor, "
                          "as this layout receives active development, has better operator coverage, and works "
                          "with torch.compile.", UserWarning, stacklevel=3)
        self._ts = tuple(components)

    # ---- what it is (the rest: PythonLayoutTensor) ----
    layout = property(lambda self: cthtorch.strided)
    is_nested = True
    dtype = property(lambda self: self._ts[0].dtype if self._ts else cthtorch.get_default_dtype())
    device = property(lambda self: cthtorch.device("cpu"))
    requires_grad = property(lambda self: any(t.requires_grad for t in self._ts))
    is_leaf = property(lambda self: all(t.is_leaf for t in self._ts))
    grad_fn = property(lambda self: None)   # the components carry the history; no single node stands for it
    data = property(lambda self: self.detach())

    @property
    def grad(self):
        grads = [t.grad for t in self._ts]
        if all(g is None for g in grads):
            return None
        return NestedTensor(g if g is not None else cthtorch.zeros_like(t) for g, t in zip(grads, self._ts))

    @property
    def shape(self):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an issue.")

    def dim(self):
        return self._ts[0].dim() + 1 if self._ts else 1

    ndimension = dim
    ndim = property(dim)

    def size(self, dim=None):
        if dim is None:
            self.shape   # raises, as torch does
        n = self.dim()
        if not -n <= dim < n:
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                             % (-n, n - 1, dim))
        dim %= n
        if dim == 0:
            return len(self._ts)
        sizes = {t.shape[dim - 1] for t in self._ts}
        if len(sizes) != 1:
            raise RuntimeError("Given dimension %d is irregular and does not have a size." % dim)
        return sizes.pop()

    def numel(self):
        return sum(t.numel() for t in self._ts)

    nelement = numel

    def element_size(self):
        return cthtorch.empty(0, dtype=self.dtype).element_size()

    def is_contiguous(self, memory_format=None):
        return True

    def is_complex(self):
        return self.dtype.is_complex

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def __len__(self):
        self.shape

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")

    __hash__ = object.__hash__

    # ---- taking it apart ----
    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("NestedTensor can only be unbound along dimension 0 got dimension %d instead." % dim)
        return self._ts

    def __getitem__(self, index):
        if isinstance(index, numbers.Integral) and not isinstance(index, bool):
            return self._ts[index]
        if isinstance(index, tuple) and index and isinstance(index[0], numbers.Integral):
            return self._ts[index[0]][index[1:]]
        _nie("slice.Tensor")

    def narrow(self, dim, start, length):
        if dim != 0:
            raise RuntimeError("narrow(): only dim=0 supported for nested tensors, but got: %d" % dim)
        return NestedTensor(self._ts[start:start + length])

    def to_padded_tensor(self, padding, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    # ---- per-component ops ----
    def _map(self, fn):
        return NestedTensor(fn(t) for t in self._ts)

    def detach(self):
        return self._map(lambda t: t.detach())

    def clone(self, *, memory_format=None):
        return self._map(lambda t: t.clone())

    def contiguous(self, memory_format=None):
        return self

    def requires_grad_(self, requires_grad=True):
        for t in self._ts:
            t.requires_grad_(requires_grad)
        return self

    def to(self, *args, **kwargs):
        return self._map(lambda t: t.to(*args, **kwargs))

    def type_as(self, other):
        return self.to(other.dtype)

    float = lambda self: self.to(cthtorch.float32)   # noqa: E731
    double = lambda self: self.to(cthtorch.float64)   # noqa: E731
    half = lambda self: self.to(cthtorch.float16)   # noqa: E731
    bfloat16 = lambda self: self.to(cthtorch.bfloat16)   # noqa: E731
    long = lambda self: self.to(cthtorch.int64)   # noqa: E731
    int = lambda self: self.to(cthtorch.int32)   # noqa: E731
    bool = lambda self: self.to(cthtorch.bool)   # noqa: E731
    cpu = lambda self: self   # noqa: E731

    def transpose(self, dim0, dim1):
        n = self.dim()
        d0, d1 = dim0 % n, dim1 % n
        if d0 == 0 or d1 == 0:
            raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
        return self._map(lambda t: t.transpose(d0 - 1, d1 - 1))

    def _inner_dim(self, dim, what):
        d = dim % self.dim()
        if d == 0:
            raise RuntimeError("Cannot apply %s across nested dimension 0" % what)
        return d - 1

    def softmax(self, dim, dtype=None):
        d = self._inner_dim(dim, "softmax")
        return self._map(lambda t: t.softmax(d, dtype=dtype))

    def log_softmax(self, dim, dtype=None):
        d = self._inner_dim(dim, "log_softmax")
        return self._map(lambda t: t.log_softmax(d, dtype=dtype))

    def _binary(self, other, name, fn):
        if _is_nested(other):
            if len(other._ts) != len(self._ts):
                raise RuntimeError("%s: Expected all nested tensors to have the same number of tensors, got %d "
                                   "and %d" % (name, len(self._ts), len(other._ts)))
            if any(a.shape != b.shape for a, b in zip(self._ts, other._ts)):
                raise RuntimeError("%s does not support broadcasting when given a NestedTensor" % name)
            return NestedTensor(fn(a, b) for a, b in zip(self._ts, other._ts))
        if isinstance(other, numbers.Number) or (isinstance(other, cthtorch.Tensor) and other.dim() == 0):
            return self._map(lambda t: fn(t, other))
        raise RuntimeError("Expected both self and other to be nested, but got a nested self and non-nested other")

    def matmul(self, other):
        if not _is_nested(other):
            raise RuntimeError("Expected both to be nested, but got a nested self and non-nested other")
        if len(other._ts) != len(self._ts):
            raise RuntimeError("matmul: Expected size for first two dimensions of batch2 tensor to be: [%d, ...] "
                               "but got: [%d, ...]." % (len(self._ts), len(other._ts)))
        return NestedTensor(cthtorch.matmul(a, b) for a, b in zip(self._ts, other._ts))

    bmm = __matmul__ = matmul

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if gradient is None or not _is_nested(gradient):
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        cthtorch.autograd.backward(list(self._ts), list(gradient._ts), retain_graph=retain_graph,
                                   create_graph=create_graph, inputs=inputs)

    def __repr__(self, *, tensor_contents=None):
        body = ",\n".join("  " + repr(t).replace("\n", "\n  ") for t in self._ts)
        tail = ""
        if self.requires_grad:
            tail = ", requires_grad=True" if self.is_leaf else ", grad_fn=<NestedTensorFromTensorListBackward0>"
        return "nested_tensor([\n%s\n]%s)" % (body, tail)

    __str__ = __repr__

    def __getattr__(self, name):
        import inspect   # here, not at import: inspect costs ~20 ms of `import cthtorch`
        attr = inspect.getattr_static(cthtorch.Tensor, name, _MISSING) if not name.startswith("__") else _MISSING
        if attr is _MISSING:
            raise AttributeError("'Tensor' object has no attribute '%s'" % name)
        if callable(attr) or isinstance(attr, (staticmethod, classmethod)):
            return lambda *args, **kwargs: _nie(name)
        _nie(name)


# pointwise ops: the method, torch.<name>, and F.<name> where it exists all run the dense op per component
_UNARY = ("abs", "neg", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "sign", "floor",
          "ceil", "round", "reciprocal", "square", "erf", "silu", "gelu", "logical_not", "isnan", "sgn", "trunc",
          "exp2", "expm1", "log1p", "log2", "frac", "tan", "atan", "asin", "acos", "sinh", "cosh", "hardswish",
          "hardsigmoid", "mish", "elu", "leaky_relu", "softplus", "dropout", "layer_norm", "clamp", "pow",
          "nan_to_num", "relu6", "hardtanh", "celu", "selu", "logit", "clamp_min", "clamp_max")
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "true_divide": "div", "eq": "eq", "ne": "ne",
           "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "maximum": "maximum", "minimum": "minimum",
           "remainder": "remainder", "logical_and": "logical_and", "logical_or": "logical_or", "where": None}


def _unary_method(name):
    def op(self, *args, **kwargs):
        fn = getattr(cthtorch, name, None) or getattr(cthtorch.nn.functional, name)
        return self._map(lambda t: fn(t, *args, **kwargs))
    op.__name__ = name
    return op


def _binary_method(name):
    def op(self, other, *args, **kwargs):
        fn = getattr(cthtorch, name)
        return self._binary(other, name, lambda a, b: fn(a, b, *args, **kwargs))
    op.__name__ = name
    return op


for _n in _UNARY:
    setattr(NestedTensor, _n, _unary_method(_n))
    setattr(NestedTensor, _n + "_", (lambda n: lambda self, *a, **k: _inplace(self, n, a, k))(_n))
for _n in _BINARY:
    if _BINARY[_n]:
        setattr(NestedTensor, _n, _binary_method(_n))
        setattr(NestedTensor, _n + "_", (lambda n: lambda self, *a, **k: _inplace(self, n, a, k))(_n))
for _dunder, _n, _swap in (("add", "add", False), ("sub", "sub", False), ("mul", "mul", False),
                           ("truediv", "div", False), ("radd", "add", True), ("rmul", "mul", True),
                           ("eq", "eq", False), ("ne", "ne", False), ("lt", "lt", False), ("le", "le", False),
                           ("gt", "gt", False), ("ge", "ge", False), ("pow", "pow", False)):
    def _op(self, other, n=_n):
        return getattr(self, n)(other)
    setattr(NestedTensor, "__%s__" % _dunder, _op)
NestedTensor.__neg__ = lambda self: self.neg()
NestedTensor.__abs__ = lambda self: self.abs()


def _inplace(self, name, args, kwargs):
    out = getattr(self, name)(*args, **kwargs)
    for t, r in zip(self._ts, out._ts):
        t.copy_(r)
    return self


def linear(input, weight, bias=None):
    return input._map(lambda t: cthtorch.nn.functional.linear(t, weight, bias))


def _kernel(name):
    """the per-component kernel for op `name` called as torch.<name>(nested, ...) or Tensor.<name>"""
    if name == "linear":
        return linear
    if name in ("matmul", "bmm", "softmax", "log_softmax", "transpose", "to_padded_tensor", "unbind", "detach",
                "clone", "contiguous", "to", "size", "dim", "numel", "narrow") or name in _UNARY or _BINARY.get(name):
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    if name == "_softmax":
        return lambda self, dim, half_to_float: self.softmax(dim)
    return None


def dispatch(name, self, args, kwargs):
    """A C op was called with a nested tensor among its arguments (see _python_layouts.dispatch)."""
    first = self if self is not None else (args[0] if args else None)
    rest = args if self is not None else args[1:]
    if not _is_nested(first):
        if name in _BINARY or name in ("matmul", "bmm"):
            raise RuntimeError("Expected both self and other to be nested, but got a non-nested self and nested "
                               "other")
        _nie(name)
    fn = _kernel(name)
    if fn is None:
        _nie(name)
    return fn(first, *rest, **kwargs)


# ---- torch.nested's constructors ----
def _check_components(ts, what):
    for i, t in enumerate(ts):
        if not isinstance(t, cthtorch.Tensor) or _is_nested(t) or t.layout != cthtorch.strided:
            raise TypeError("%s(): expected a list of strided Tensors, but element %d is %s"
                            % (what, i, type(t).__name__))
        if t.dim() != ts[0].dim():
            raise RuntimeError("All Tensors given to nested_tensor must have the same dimension. Found dimension "
                               "%d for Tensor at index %d and dimension %d for Tensor at index 0."
                               % (t.dim(), i, ts[0].dim()))


def _check_layout(layout):
    if layout is not None and layout != cthtorch.strided:
        if layout == cthtorch.jagged:
            raise NotImplementedError("cthtorch: nested tensors of layout torch.jagged are not implemented "
                                      "(torch.strided only)")
        raise RuntimeError("Specified layout is unsupported for nested tensors: %s" % (layout,))


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _check_layout(layout)
    if not isinstance(tensor_list, list):
        raise TypeError("Only lists (List[Tensor] and List[List...[Scalar]]) are accepted in nested_tensor")
    ts = [t if isinstance(t, cthtorch.Tensor) else cthtorch.tensor(t) for t in tensor_list]
    _check_components(ts, "nested_tensor")
    if ts:
        dtype = dtype or ts[0].dtype   # torch converts every component to the first one's dtype
    out = [t.detach().to(dtype=dtype, copy=True) for t in ts]
    for t in out:
        t.requires_grad_(requires_grad)
    return NestedTensor(out)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    _check_layout(layout)
    if isinstance(ts, cthtorch.Tensor) and not _is_nested(ts):
        if ts.dim() == 0:
            raise RuntimeError("as_nested_tensor(): Expected tensor argument to have dim > 1")
        ts = list(ts.unbind(0))
    elif _is_nested(ts):
        return ts.to(dtype=dtype) if dtype is not None else ts
    elif not isinstance(ts, (list, tuple)):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list / tuple of tensors ")
    ts = list(ts)
    _check_components(ts, "as_nested_tensor")
    dtype = dtype or (ts[0].dtype if ts else None)
    return NestedTensor(t.to(dtype=dtype, copy=True) for t in ts)   # a copy that keeps each input's history


def to_padded_tensor(input, padding, output_size=None, out=None):
    if not _is_nested(input):
        _nie_cpu("to_padded_tensor")
    ts = input._ts
    if not ts:
        return cthtorch.empty(0 if output_size is None else output_size, dtype=input.dtype)
    inner = ts[0].dim()
    size = [len(ts)] + [max(t.shape[d] for t in ts) for d in range(inner)]
    if output_size is not None:
        output_size = list(output_size)
        if len(output_size) != len(size):
            raise RuntimeError("Length of output_size does not match NestedTensor dims. Broadcasting is not "
                               "supported.")
        if any(o < s for o, s in zip(output_size, size)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. Truncation is not "
                               "supported.")
        size = output_size
    rows = []
    for t in ts:
        pads = []
        for d in reversed(range(inner)):
            pads += [0, size[d + 1] - t.shape[d]]
        rows.append(cthtorch.nn.functional.pad(t, pads, value=padding) if any(pads) else t)
    result = cthtorch.stack(rows)
    if size[0] > len(ts):
        result = cthtorch.cat([result, cthtorch.full([size[0] - len(ts)] + size[1:], padding, dtype=input.dtype)])
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def _nie_cpu(name):
    raise NotImplementedError(
        "Could not run 'aten::%s' with arguments from the 'CPU' backend. This could be because the operator "
        "doesn't exist for this backend, or was omitted during the selective/custom build process (if using "
        "custom build)." % name)
