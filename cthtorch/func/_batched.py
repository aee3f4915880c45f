"""BatchedTensor and its batching rules: what makes vmap run func once on the whole batch.

A BatchedTensor stands for one sample of a vmapped value. It holds the physical
tensor with the mapped dimension moved to the front (``_value``) and the vmap
level that owns that dimension; its logical shape (what func sees) is
``_value.shape[1:]``. Nested vmaps nest wrappers: the ``_value`` of a level-2
BatchedTensor may itself be a level-1 BatchedTensor, so a rule only ever deals
with one batch dimension, that of the highest level among the arguments, and
calls the op again on the unwrapped values (which dispatches the lower levels).

BatchedTensor is not a cthtorch.Tensor: every op that receives one hands the
call to ``BatchedTensor.__torch_function__`` (the protocol torch.fx's Proxy
uses), which looks the op up by name in _RULES. Ops without a rule run once
per sample on ``_value[i]`` and the results are stacked (torch's slow
fallback), so every op works and the common ones are one batched call: one GEMM
for the whole batch, as torch's batching rules give.
"""
import functools
import threading

import cthtorch

__all__ = ["BatchedTensor", "NeedsLoop", "batch_size", "max_level", "physical"]

_state = threading.local()


class NeedsLoop(RuntimeError):
    """Raised where batching cannot express the computation (a transform over batched values
    it cannot lift, a Python value read from a batched tensor); the enclosing vmap then runs func
    once per sample. Any other error is func's own and propagates from the batched run."""


def next_level():
    _state.level = getattr(_state, "level", 0) + 1
    return _state.level


def release_level(level):
    _state.level = level - 1


class BatchedTensor:
    __slots__ = ("_value", "_level")

    def __init__(self, value, level):
        self._value = value
        self._level = level

    # ---- metadata (logical) ----
    @property
    def shape(self):
        return cthtorch.Size(tuple(self._value.shape)[1:])

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self.shape[_norm_dim(dim, self.dim())]

    def dim(self):
        return self._value.dim() - 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    dtype = property(lambda self: self._value.dtype)
    device = property(lambda self: self._value.device)
    layout = property(lambda self: self._value.layout)
    is_cuda = property(lambda self: False)
    is_sparse = property(lambda self: False)
    is_quantized = property(lambda self: False)
    is_meta = property(lambda self: False)
    requires_grad = property(lambda self: self._value.requires_grad)
    grad_fn = property(lambda self: self._value.grad_fn)
    is_leaf = property(lambda self: self._value.is_leaf)

    def is_floating_point(self):
        return self._value.is_floating_point()

    def is_complex(self):
        return self._value.is_complex()

    def element_size(self):
        return self._value.element_size()

    def get_device(self):
        return -1

    @property
    def T(self):
        return self.permute(*reversed(range(self.dim())))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def item(self):
        raise NeedsLoop("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a "
                           "bug report.")

    def tolist(self):
        raise NeedsLoop("vmap: It looks like you're calling .tolist() on a Tensor; vmap does not support "
                           "data-dependent Python values")

    def __bool__(self):
        raise NeedsLoop("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                        "flow. We don't support that yet, please file an issue at "
                        "https://github.com/pytorch/pytorch/issues .")

    def __repr__(self):
        return "BatchedTensor(lvl=%d, bdim=0, value=\n%r\n)" % (self._level, self._value)

    def __getattr__(self, name):
        attr = getattr(cthtorch.Tensor, name, None)
        if attr is None or not callable(attr):
            raise AttributeError("'BatchedTensor' object has no attribute '%s'" % name)
        return functools.partial(_dispatch_method, attr, self)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


def _dispatch_method(attr, self, *args, **kwargs):
    return _dispatch(attr, (self,) + args, kwargs)


def _make_operator(name):
    attr = getattr(cthtorch.Tensor, name)

    def op(self, *args):
        return _dispatch(attr, (self,) + args, {})
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__neg__", "__pos__", "__abs__", "__invert__", "__and__", "__rand__", "__or__",
              "__ror__", "__xor__", "__rxor__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
              "__getitem__", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"):
    if hasattr(cthtorch.Tensor, _name):
        setattr(BatchedTensor, _name, _make_operator(_name))
BatchedTensor.__hash__ = object.__hash__


# ---------------------------------------------------------------- helpers

def physical(x, level, batch_size):
    """x's value with level's batch dimension in front: unwrapped, or expanded when x does not vary."""
    if isinstance(x, BatchedTensor):
        if x._level == level:
            return x._value
        if x._level > level:
            # a transform lifting an inner level met a value of a later vmap: the levels would interleave
            raise NeedsLoop("vmap: a transform over level %d met a value batched at level %d" % (level, x._level))
    return x.unsqueeze(0).expand((batch_size,) + tuple(x.shape))


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _leaves(o)
    else:
        yield obj


def max_level(*trees):
    lv = 0
    for t in trees:
        for x in _leaves(t):
            if isinstance(x, BatchedTensor) and x._level > lv:
                lv = x._level
    return lv


def batch_size(level, *trees):
    """the size of level's batch dimension, read off the first BatchedTensor of that level in trees"""
    for x in _leaves(trees):
        if isinstance(x, BatchedTensor) and x._level == level:
            return x._value.shape[0]
    raise AssertionError("no BatchedTensor at level %d" % level)


def _norm_dim(d, rank):
    r = max(rank, 1)
    if not -r <= d < r:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)" % (-r, r - 1, d))
    return d % r


def _is_b(x, level):
    return isinstance(x, BatchedTensor) and x._level == level


def _tensorish(x):
    return isinstance(x, (cthtorch.Tensor, BatchedTensor))


def _wrap_out(out, level):
    if isinstance(out, (cthtorch.Tensor, BatchedTensor)):
        return BatchedTensor(out, level)
    if isinstance(out, tuple):
        return _same_tuple_type(out, [_wrap_out(o, level) for o in out])
    if isinstance(out, list):
        return [_wrap_out(o, level) for o in out]
    return out


def _same_tuple_type(like, items):
    """items as a tuple of like's type (namedtuples such as torch.return_types.max keep their fields)"""
    if hasattr(like, "_fields"):
        return type(like)(*items)
    if type(like) is not tuple and isinstance(like, tuple):
        return type(like)(items)
    return tuple(items)


def _call(func, *args, **kwargs):
    """func on (partly) unwrapped arguments: values of a lower vmap level dispatch again (a Tensor method
    descriptor would not accept them as self)."""
    if max_level(args, kwargs):
        return _dispatch(func, args, kwargs)
    return func(*args, **kwargs)


def _dispatch(func, args, kwargs):
    level = max_level(args, kwargs)
    name = getattr(func, "__name__", "")
    rule = _RULES.get(name)
    if rule is not None:
        res = rule(func, level, args, kwargs)
        if res is not NotImplemented:
            return res
    return _loop_rule(func, level, args, kwargs)


# how many ops ran once per sample (tests check that a rule, not this fallback, answered an op)
per_op_loops = 0


def _loop_rule(func, level, args, kwargs):
    """The op once per sample (torch's slow fallback)."""
    global per_op_loops
    per_op_loops += 1
    B = batch_size(level, args, kwargs)
    name = getattr(func, "__name__", "")
    inplace = name.endswith("_") and not name.startswith("__") or name in ("__setitem__", "__iadd__", "__isub__",
                                                                           "__imul__", "__itruediv__")
    if inplace and args and not _is_b(args[0], level):
        raise RuntimeError(_inplace_message(name, level, args, kwargs))

    def pick(x, i):
        if _is_b(x, level):
            return x._value[i]
        if isinstance(x, list):
            return [pick(o, i) for o in x]
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(pick(o, i) for o in x)
        return x

    outs = [_call(func, *[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kwargs.items()}) for i in range(B)]
    if inplace:
        return args[0]
    if B == 0:
        raise NeedsLoop("vmap: no sample to run %s on" % name)
    return _stack_outs(outs, level, name)


# how torch's vmap names an in-place op writing a batched value into an unbatched self: its binary
# arithmetic rules say "inplace arithmetic", a few ops have rules naming themselves, the rest go through the
# boxed fallback ("aten::name ... at level n"); add_ and atan2_ reach the kernel's own broadcast check
_INPLACE_ARITHMETIC = {"sub_", "mul_", "div_", "true_divide_", "copy_", "masked_fill_", "clamp_min_", "clamp_max_",
                       "logical_and_", "logical_or_", "logical_xor_", "__isub__", "__imul__", "__itruediv__",
                       "subtract_", "multiply_", "divide_"}
_INPLACE_OWN_NAME = {"index_put_", "fill_", "index_add_", "scatter_add_"}
_INPLACE_BROADCAST = {"add_", "__iadd__", "atan2_", "arctan2_"}


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _inplace_message(name, level, args, kwargs):
    if name in _INPLACE_BROADCAST:
        shapes = [tuple(x.shape) for x in _leaves((args, kwargs)) if _tensorish(x)]
        return "output with shape %s doesn't match the broadcast shape %s" % (
            _shape_str(args[0].shape), _shape_str((batch_size(level, args, kwargs),)
                                                  + tuple(cthtorch.broadcast_shapes(*shapes))))
    where = "in a vmap"
    if name == "__setitem__":
        idx = args[1] if isinstance(args[1], tuple) else (args[1],)
        shown = "index_put_" if any(_tensorish(e) or isinstance(e, list) for e in idx) else "inplace arithmetic"
    elif name in _INPLACE_ARITHMETIC:
        shown = "inplace arithmetic"
    elif name in _INPLACE_OWN_NAME:
        shown = name
    else:
        shown, where = "aten::" + name, "at level %d" % level
    return ("vmap: %s(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that "
            "has more elements than `self`. This happened due to `other` being vmapped over but `self` not being "
            "vmapped over %s. Please try to use out-of-place operators instead of %s. If said operator is being "
            "called inside the PyTorch framework, please file a bug report instead." % (shown, where, shown))


def _stack_outs(outs, level, name):
    first = outs[0]
    if _tensorish(first):
        if any(o.shape != first.shape for o in outs[1:]):
            # data-dependent shapes (nonzero, unique, a boolean mask): no batched value holds them
            raise NeedsLoop("vmap: %s gives the samples results of different shapes" % name)
        return BatchedTensor(cthtorch.stack(outs), level)
    if isinstance(first, (tuple, list)):
        items = [_stack_outs([o[k] for o in outs], level, name) for k in range(len(first))]
        return items if isinstance(first, list) else _same_tuple_type(first, items)
    if all(o == first for o in outs[1:]):
        return first
    raise NeedsLoop("vmap: %s returned a Python value that differs between samples (data-dependent); vmap "
                    "cannot batch that" % name)


# ---------------------------------------------------------------- rules

def _elementwise(func, level, args, kwargs):
    """Broadcasting ops: logical shapes align on the right, so batched arguments get size-1 dims after
    their batch dim up to the largest logical rank; unbatched ones broadcast as they are."""
    name = getattr(func, "__name__", "")
    inplace = name.endswith("_") and not name.startswith("__") or name in ("__iadd__", "__isub__", "__imul__",
                                                                           "__itruediv__")
    if inplace and not (args and _is_b(args[0], level)):
        return NotImplemented    # in-place into an unbatched self: the loop raises torch's error
    if name in ("to", "type_as", "type"):
        if not _is_b(args[0], level):
            return NotImplemented
        return BatchedTensor(_call(func, args[0]._value, *args[1:], **kwargs), level)
    ranks = [x.dim() for x in _leaves((args, kwargs)) if _tensorish(x)]
    top = max(ranks) if ranks else 0
    if inplace and args[0].dim() < top:
        return NotImplemented

    def phys(x):
        if _is_b(x, level):
            v = x._value
            pad = top - (v.dim() - 1)
            if pad > 0:
                v = v.reshape((v.shape[0],) + (1,) * pad + tuple(v.shape[1:]))
            return v
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields") and any(_is_b(o, level) for o in x):
            return type(x)(phys(o) for o in x)
        return x

    out = _call(func, *[phys(a) for a in args], **{k: phys(v) for k, v in kwargs.items()})
    if inplace:
        return args[0]
    return _wrap_out(out, level)


def _arg(args, kwargs, pos, name, default=None):
    if name in kwargs:
        return kwargs[name], True
    if len(args) > pos:
        return args[pos], True
    return default, False


def _set_arg(args, kwargs, pos, name, value):
    if name in kwargs or len(args) <= pos:
        kwargs = dict(kwargs)
        kwargs[name] = value
        return args, kwargs
    args = list(args)
    args[pos] = value
    return tuple(args), kwargs


def _only_self_batched(args, kwargs, level):
    return _is_b(args[0], level) and not any(_is_b(x, level) for x in _leaves((args[1:], kwargs)))


_VALUES_ONLY = ("max", "min", "median")


def _dim_op(pos=1, kw="dim", extra_rank=0, reduce_all="flatten", default=None):
    """Ops with one logical dim argument (or a list of them); reduce_all says what a missing dim means:
    'flatten' (reduce the flattened sample, one dim), 'keep' (use `default`, or leave the op to the loop)."""

    def rule(func, level, args, kwargs):
        d, given = _arg(args, kwargs, pos, kw)
        if _tensorish(d):
            return _elementwise(func, level, args, kwargs)     # max(a, b), min(a, b)
        if not _only_self_batched(args, kwargs, level) or isinstance(d, bool):
            return NotImplemented
        x = args[0]
        rank = x.dim() + extra_rank
        v = x._value
        if d is None and default is not None and reduce_all == "keep":
            d = default
        if d is None:
            if reduce_all != "flatten":
                return NotImplemented
            v = v.reshape(v.shape[0], -1)
            if func.__name__ in _VALUES_ONLY and not given:
                return BatchedTensor(_call(func, v, 1)[0], level)
            newd = 1
        elif isinstance(d, (list, tuple)):
            newd = tuple(_norm_dim(k, rank) + 1 for k in d)
            if len(d) == 0 and reduce_all == "flatten":
                v = v.reshape(v.shape[0], -1)
                newd = 1
        elif isinstance(d, int):
            newd = _norm_dim(d, rank) + 1
        else:
            return NotImplemented     # named dims
        a, k = _set_arg((v,) + tuple(args[1:]), kwargs, pos, kw, newd)
        return _wrap_out(_call(func, *a, **k), level)
    return rule


def _two_dims(p1, k1, p2, k2, defaults=None):
    def rule(func, level, args, kwargs):
        if not _only_self_batched(args, kwargs, level):
            return NotImplemented
        rank = args[0].dim()
        a, k = (args[0]._value,) + tuple(args[1:]), kwargs
        for j, (p, kn) in enumerate(((p1, k1), (p2, k2))):
            d, given = _arg(a, k, p, kn)
            if not given:
                if defaults is None:
                    return NotImplemented
                d = defaults[j]
            if isinstance(d, (list, tuple)):
                nd = type(d)(_norm_dim(x, rank) + 1 for x in d)
            else:
                nd = _norm_dim(d, rank) + 1
            a, k = _set_arg(a, k, p, kn, nd)
        return _wrap_out(_call(func, *a, **k), level)
    return rule


def _shape_args(args, start):
    rest = args[start:]
    if len(rest) == 1 and isinstance(rest[0], (tuple, list, cthtorch.Size)):
        return tuple(rest[0])
    return tuple(rest)


def _view_rule(func, level, args, kwargs):
    if kwargs or not _only_self_batched(args, kwargs, level):
        return NotImplemented
    shape = _shape_args(args, 1)
    if not all(isinstance(s, int) for s in shape):
        return NotImplemented     # view(dtype)
    v = args[0]._value
    new = (v.shape[0],) + shape
    name = func.__name__
    try:
        return BatchedTensor(v.view(new) if name == "view" else v.reshape(new), level)
    except RuntimeError:
        if name != "view":
            raise
        return BatchedTensor(v.reshape(new), level)


def _view_as_rule(func, level, args, kwargs):
    if len(args) != 2 or kwargs:
        return NotImplemented
    target = tuple(args[1].shape)
    if not _is_b(args[0], level):
        return NotImplemented
    fn = "view" if func.__name__ == "view_as" else "reshape" if func.__name__ == "reshape_as" else "expand"
    return getattr(args[0], fn)(target)


def _permute_rule(func, level, args, kwargs):
    if not _only_self_batched(args, kwargs, level):
        return NotImplemented
    dims = _shape_args(args, 1) if "dims" not in kwargs else tuple(kwargs["dims"])
    rank = args[0].dim()
    v = args[0]._value
    return BatchedTensor(v.permute((0,) + tuple(_norm_dim(d, rank) + 1 for d in dims)), level)


def _expand_rule(func, level, args, kwargs):
    if not _only_self_batched(args, kwargs, level):
        return NotImplemented
    sizes = _shape_args(args, 1) if "size" not in kwargs else tuple(kwargs["size"])
    v = args[0]._value
    rank = v.dim() - 1
    if len(sizes) < rank:
        return NotImplemented
    pad = len(sizes) - rank
    v = v.reshape((v.shape[0],) + (1,) * pad + tuple(v.shape[1:]))
    return BatchedTensor(v.expand((v.shape[0],) + tuple(sizes)), level)


def _unary_shape_rule(func, level, args, kwargs):
    """t(), flatten with default dims, squeeze() etc.: written on the logical tensor."""
    if not _only_self_batched(args, kwargs, level):
        return NotImplemented
    x = args[0]
    name = func.__name__
    v = x._value
    if name in ("t", "t_"):
        return BatchedTensor(v.transpose(1, 2) if x.dim() == 2 else v, level)
    if name == "squeeze":
        d, given = _arg(args, kwargs, 1, "dim")
        if not given:
            keep = [0] + [i + 1 for i, s in enumerate(x.shape) if s != 1]
            return BatchedTensor(v.reshape(tuple(v.shape[i] for i in keep)), level)
        if isinstance(d, (tuple, list)):
            return BatchedTensor(v.squeeze(tuple(_norm_dim(k, x.dim()) + 1 for k in d)), level)
        return BatchedTensor(v.squeeze(_norm_dim(d, x.dim()) + 1), level)
    if name == "flatten":
        s, _ = _arg(args, kwargs, 1, "start_dim", 0)
        e, _ = _arg(args, kwargs, 2, "end_dim", -1)
        if x.dim() == 0:
            return BatchedTensor(v.reshape(v.shape[0], 1), level)
        return BatchedTensor(v.flatten(_norm_dim(s, x.dim()) + 1, _norm_dim(e, x.dim()) + 1), level)
    return NotImplemented


def _getitem_rule(func, level, args, kwargs):
    x, idx = args[0], args[1]
    if not isinstance(idx, tuple):
        idx = (idx,)
    if not _is_b(x, level):
        return _batched_index_getitem(x, idx, level) if any(_is_b(e, level) for e in idx) else NotImplemented
    advanced = [i for i, e in enumerate(idx) if isinstance(e, (cthtorch.Tensor, BatchedTensor, list))]
    if any(_is_b(e, level) for e in idx):
        return _batched_index_getitem(x, idx, level)
    for e in idx:
        if isinstance(e, BatchedTensor) or (isinstance(e, cthtorch.Tensor) and e.dtype == cthtorch.bool):
            return NotImplemented
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        return NotImplemented     # separated advanced indices move to the front, past the batch dim
    if any(e is Ellipsis for e in idx) and advanced:
        return NotImplemented
    try:
        return BatchedTensor(x._value[(slice(None),) + idx], level)
    except IndexError:
        return NotImplemented     # the per-sample loop raises it naming the logical dim, as torch does


def _setitem_rule(func, level, args, kwargs):
    x, idx, val = args
    if not _is_b(x, level):
        return NotImplemented
    if not isinstance(idx, tuple):
        idx = (idx,)
    if any(isinstance(e, (BatchedTensor, list)) for e in idx):
        return NotImplemented     # indices that vary by sample: the loop
    advanced = [i for i, e in enumerate(idx) if isinstance(e, cthtorch.Tensor)]
    if advanced and (advanced != list(range(advanced[0], advanced[-1] + 1)) or any(e is Ellipsis for e in idx)):
        return NotImplemented     # separated advanced indices would move their dims to the front, past B
    target = x._value[(slice(None),) + idx]
    if _is_b(val, level):
        v = val._value
        pad = target.dim() - v.dim()
        if pad < 0:
            return NotImplemented
        val = v.reshape((v.shape[0],) + (1,) * pad + tuple(v.shape[1:]))
    x._value[(slice(None),) + idx] = val
    return None


def _cat_stack_rule(func, level, args, kwargs):
    tensors, _ = _arg(args, kwargs, 0, "tensors")
    d, _ = _arg(args, kwargs, 1, "dim", 0)
    if not isinstance(d, int) or not isinstance(tensors, (list, tuple)) or len(tensors) == 0:
        return NotImplemented
    B = batch_size(level, args, kwargs)
    name = func.__name__
    if name == "cat" or name == "concat" or name == "concatenate":
        ranks = [t.dim() for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
        rank = ranks[0] if ranks else 1
    else:
        rank = tensors[0].dim() + 1
    phys = [physical(t, level, B) for t in tensors]
    return BatchedTensor(_call(func, phys, _norm_dim(d, rank) + 1), level)


def _split_rule(func, level, args, kwargs):
    return _dim_op(2, "dim", reduce_all="keep")(func, level, args, kwargs) if len(args) > 2 or "dim" in kwargs \
        else _wrap_out(_call(func, args[0]._value, args[1], 1), level) if _only_self_batched(args, kwargs, level) \
        else NotImplemented


def _unbind_rule(func, level, args, kwargs):
    if not _only_self_batched(args, kwargs, level):
        return NotImplemented
    d, _ = _arg(args, kwargs, 1, "dim", 0)
    return tuple(BatchedTensor(t, level) for t in args[0]._value.unbind(_norm_dim(d, args[0].dim()) + 1))


# ---- matmul family ----

def _matmul_phys(a, b, level):
    """matmul of two logical operands, at least one batched at level; one batched matmul call."""
    ab, bb = _is_b(a, level), _is_b(b, level)
    ra, rb = a.dim(), b.dim()
    if ra == 0 or rb == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are %dD and %dD" % (ra, rb))
    if ab and not bb and rb <= 2:
        return a._value.matmul(b)     # [B, ..., n, k] @ [k, m] or [k]: one GEMM over every leading row
    if bb and not ab and rb == 1 and ra <= 2:
        return b._value.matmul(a if ra == 1 else a.mT)
    # general: both at least 2-D logically, equal logical ranks, batch dims aligned
    B = a._value.shape[0] if ab else b._value.shape[0]
    pa = a._value if ab else a.unsqueeze(0).expand((B,) + tuple(a.shape))
    pb = b._value if bb else b.unsqueeze(0).expand((B,) + tuple(b.shape))
    sq_a = ra == 1
    sq_b = rb == 1
    if sq_a:
        pa = pa.unsqueeze(1)
    if sq_b:
        pb = pb.unsqueeze(-1)
    top = max(pa.dim(), pb.dim())
    pa = pa.reshape((B,) + (1,) * (top - pa.dim()) + tuple(pa.shape[1:]))
    pb = pb.reshape((B,) + (1,) * (top - pb.dim()) + tuple(pb.shape[1:]))
    out = pa.matmul(pb)
    if sq_b:
        out = out.squeeze(-1)
    if sq_a:
        out = out.squeeze(-1 if sq_b else -2)
    return out


def _matmul_rule(func, level, args, kwargs):
    if kwargs or len(args) != 2:
        return NotImplemented
    a, b = args
    name = func.__name__
    if name == "__rmatmul__":
        a, b = b, a
    if not (_tensorish(a) and _tensorish(b)):
        return NotImplemented
    if name in ("mm", "bmm") and (a.dim() != (2 if name == "mm" else 3) or b.dim() != a.dim()):
        return NotImplemented
    if name == "mv" and (a.dim() != 2 or b.dim() != 1):
        return NotImplemented
    if name in ("dot", "inner", "vdot") and (a.dim() != 1 or b.dim() != 1):
        return NotImplemented
    return BatchedTensor(_matmul_phys(a, b, level), level)


def _linear_rule(func, level, args, kwargs):
    x, _ = _arg(args, kwargs, 0, "input")
    w, _ = _arg(args, kwargs, 1, "weight")
    bias, _ = _arg(args, kwargs, 2, "bias")
    if _is_b(x, level) and not _is_b(w, level) and not _is_b(bias, level):
        return BatchedTensor(_call(func, x._value, w, bias), level)
    out = cthtorch.matmul(x, w.transpose(-2, -1) if w.dim() == 2 else w)
    return out + bias if bias is not None else out


def _addmm_rule(func, level, args, kwargs):
    if kwargs or len(args) != 3:
        return NotImplemented
    inp, m1, m2 = args
    return cthtorch.matmul(m1, m2) + inp


# ---- convolution and N-C-spatial ops: the batch folds into N ----

def _fold_rule(nspatial_of):
    """ops taking (N, C, *spatial) or (C, *spatial) as the first argument, nothing else batched"""

    def rule(func, level, args, kwargs):
        if not _only_self_batched(args, kwargs, level):
            return NotImplemented
        x = args[0]
        v = x._value
        full = nspatial_of(func.__name__, x) + 2
        if x.dim() == full:
            B, N = v.shape[0], v.shape[1]
            out = _call(func, v.reshape((B * N,) + tuple(v.shape[2:])), *args[1:], **kwargs)
            unfold = (lambda o: o.reshape((B, N) + tuple(o.shape[1:])))
        elif x.dim() == full - 1:
            out = _call(func, v, *args[1:], **kwargs)
            unfold = (lambda o: o)
        else:
            return NotImplemented
        if isinstance(out, tuple):
            return tuple(BatchedTensor(unfold(o), level) for o in out)
        return BatchedTensor(unfold(out), level)
    return rule


def _spatial(name, x):
    if name in ("interpolate", "upsample"):
        return x.dim() - 2     # always (N, C, *spatial): the rank says how many spatial dims
    for k in ("1d", "2d", "3d"):
        if k in name:
            return int(k[0])
    return 2


def _conv_rule(func, level, args, kwargs):
    x, _ = _arg(args, kwargs, 0, "input")
    w, _ = _arg(args, kwargs, 1, "weight")
    bias, _ = _arg(args, kwargs, 2, "bias")
    rest = dict(kwargs)
    for k in ("input", "weight", "bias"):
        rest.pop(k, None)
    extra = tuple(args[3:])
    groups = rest.pop("groups", None)
    names = ("stride", "padding", "dilation", "groups")
    if groups is None and len(extra) >= 4:
        groups = extra[3]
        extra = extra[:3]
    groups = 1 if groups is None else groups
    nsp = w.dim() - 2
    if not _is_b(w, level) and not _is_b(bias, level):
        folded = _fold_rule(lambda n, x: nsp)
        return folded(lambda inp: _call(func, inp, w, bias, *extra, **rest, groups=groups), level, (x,), {})
    if isinstance(rest.get("padding", extra[1] if len(extra) > 1 else 0), str):
        return NotImplemented
    B = batch_size(level, args, kwargs)
    unbatched_in = x.dim() == nsp + 1
    px = physical(x, level, B)                           # [B, N, C, *sp] or [B, C, *sp]
    if unbatched_in:
        px = px.unsqueeze(1)
    N = px.shape[1]
    pin = px.transpose(0, 1).reshape((N, B * px.shape[2]) + tuple(px.shape[3:]))
    pw = physical(w, level, B)                           # [B, O, C/g, *k]
    O = pw.shape[1]
    pw = pw.reshape((B * O,) + tuple(pw.shape[2:]))
    pb = None if bias is None else physical(bias, level, B).reshape(B * O)
    out = func(pin, pw, pb, *extra, **rest, groups=groups * B)   # [N, B*O, *sp']
    out = out.reshape((N, B, O) + tuple(out.shape[2:])).transpose(0, 1)
    if unbatched_in:
        out = out.squeeze(1)
    return BatchedTensor(out, level)


# ---- losses: per-sample unreduced loss, then the reduction over the logical dims ----

def _reduction_of(args, kwargs, pos):
    red, _ = _arg(args, kwargs, pos, "reduction", "mean")
    if kwargs.get("size_average") is not None or kwargs.get("reduce") is not None:
        return None
    return red


def _nll_like_rule(func, level, args, kwargs):
    name = func.__name__
    x, _ = _arg(args, kwargs, 0, "input")
    t, _ = _arg(args, kwargs, 1, "target")
    weight, _ = _arg(args, kwargs, 2, "weight")
    ignore, _ = _arg(args, kwargs, 4, "ignore_index", -100)
    red = _reduction_of(args, kwargs, 6)
    smoothing, _ = _arg(args, kwargs, 7, "label_smoothing", 0.0)
    if red is None or _is_b(weight, level) or smoothing != 0.0 or len(args) > 3 or t.is_floating_point():
        return NotImplemented
    B = batch_size(level, args, kwargs)
    px, pt = physical(x, level, B), physical(t, level, B)
    if x.dim() >= 2:
        N = px.shape[1]
        px = px.reshape((B * N,) + tuple(px.shape[2:]))
        pt = pt.reshape((B * N,) + tuple(pt.shape[2:]))
    loss = _call(func, px, pt, weight=weight, ignore_index=ignore, reduction="none")
    loss = loss.reshape(B, -1)
    if red == "none":
        return BatchedTensor(loss.reshape((B,) + tuple(t.shape)), level)
    total = loss.sum(1)
    if red == "sum":
        return BatchedTensor(total, level)
    valid = (pt != ignore).reshape(B, -1)
    if weight is None:
        denom = valid.sum(1).to(total.dtype)
    else:
        denom = (weight[cthtorch.where(pt != ignore, pt, 0)].reshape(B, -1) * valid).sum(1)
    return BatchedTensor(total / denom, level)


def _pointwise_loss_rule(func, level, args, kwargs):
    if len(args) != 2:    # reduction and the rest by keyword only (their positions differ between these losses)
        return NotImplemented
    red = _reduction_of(args, kwargs, 2)
    x, t = args
    if red is None or not (_tensorish(x) and _tensorish(t)):
        return NotImplemented
    if x.shape != t.shape:
        return NotImplemented    # the loop: the loss's size-mismatch warning names the logical sizes
    if not (_is_b(x, level) and _is_b(t, level)):
        # an unbatched operand goes in expanded: the loss then sees equal sizes, as each sample's call does
        B = batch_size(level, args, kwargs)
        args = tuple(BatchedTensor(physical(a, level, B), level) for a in args)
    k = dict(kwargs)
    k["reduction"] = "none"
    k.pop("size_average", None)
    k.pop("reduce", None)
    loss = _elementwise(func, level, args, k)
    if red == "none":
        return loss
    v = loss._value.reshape(loss._value.shape[0], -1)
    return BatchedTensor(v.sum(1) if red == "sum" else v.mean(1), level)


# ---------------------------------------------------------------- the table

_RULES = {}

_ELEMENTWISE = """
abs absolute acos arccos acosh asin arcsin asinh atan arctan atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp
exp2 expm1 fix floor frac lgamma log log10 log1p log2 logit i0 isnan isinf isfinite isneginf isposinf nan_to_num neg
negative reciprocal round rsqrt sigmoid sign sgn signbit sin sinc sinh sqrt square tan tanh trunc relu relu6 gelu silu
mish elu selu celu leaky_relu hardtanh hardsigmoid hardswish softplus softsign tanhshrink hardshrink softshrink
logsigmoid threshold glu_ conj positive angle real imag
add sub subtract mul multiply div divide true_divide floor_divide pow float_power remainder fmod atan2 arctan2 hypot
maximum minimum fmax fmin eq ne lt le gt ge greater less greater_equal less_equal not_equal equal_ logical_and
logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not copysign xlogy lerp addcmul
addcdiv where clamp clip clamp_min clamp_max masked_fill heaviside nextafter ldexp
to type type_as float double half bfloat16 int long short bool byte char cpu cuda clone contiguous detach
requires_grad_ detach_ zero_ fill_ copy_ add_ sub_ mul_ div_ pow_ clamp_ relu_ sigmoid_ tanh_ exp_ log_ neg_
masked_fill_ abs_ sqrt_ sin_ cos_ lerp_ addcmul_ addcdiv_ zeros_like ones_like full_like empty_like tril triu
__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ __mod__
__rmod__ __pow__ __rpow__ __neg__ __pos__ __abs__ __invert__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__
__lt__ __le__ __gt__ __ge__ __eq__ __ne__ __iadd__ __isub__ __imul__ __itruediv__ rsub
"""
for _n in _ELEMENTWISE.split():
    _RULES[_n] = _elementwise

for _n in ("sum", "mean", "nansum", "nanmean", "amax", "amin", "logsumexp", "std", "var", "all", "any", "prod",
           "argmax", "argmin", "max", "min", "median", "count_nonzero"):
    _RULES[_n] = _dim_op(1, "dim")
_RULES["norm"] = _dim_op(2, "dim")
for _n in ("softmax", "log_softmax", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort",
           "flip", "narrow", "select", "index_select", "normalize", "unflatten", "chunk", "tensor_split",
           "renorm"):
    _RULES[_n] = _dim_op(1, "dim", reduce_all="keep")
_RULES["flip"] = _dim_op(1, "dims", reduce_all="keep")
_RULES["renorm"] = _dim_op(2, "dim", reduce_all="keep")
_RULES["normalize"] = _dim_op(2, "dim", reduce_all="keep", default=1)
_RULES["topk"] = _RULES["kthvalue"] = _dim_op(2, "dim", reduce_all="keep", default=-1)
_RULES["chunk"] = _RULES["tensor_split"] = _dim_op(2, "dim", reduce_all="keep", default=0)
_RULES["sort"] = _RULES["argsort"] = _dim_op(1, "dim", reduce_all="keep", default=-1)
_RULES["unsqueeze"] = _dim_op(1, "dim", extra_rank=1, reduce_all="keep")
_RULES["split"] = _split_rule
_RULES["unbind"] = _unbind_rule
_RULES["transpose"] = _RULES["swapaxes"] = _RULES["swapdims"] = _two_dims(1, "dim0", 2, "dim1")
_RULES["movedim"] = _RULES["moveaxis"] = _two_dims(1, "source", 2, "destination")
_RULES["diagonal"] = _two_dims(2, "dim1", 3, "dim2", (0, 1))
_RULES["view"] = _RULES["reshape"] = _view_rule
_RULES["view_as"] = _RULES["reshape_as"] = _RULES["expand_as"] = _view_as_rule
_RULES["permute"] = _permute_rule
_RULES["expand"] = _expand_rule
for _n in ("t", "squeeze", "flatten"):
    _RULES[_n] = _unary_shape_rule
_RULES["__getitem__"] = _getitem_rule
_RULES["__setitem__"] = _setitem_rule
for _n in ("cat", "concat", "concatenate", "stack"):
    _RULES[_n] = _cat_stack_rule
for _n in ("matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "mv", "dot", "inner"):
    _RULES[_n] = _matmul_rule
_RULES["linear"] = _linear_rule
_RULES["addmm"] = _addmm_rule
for _n in ("conv1d", "conv2d", "conv3d"):
    _RULES[_n] = _conv_rule
for _n in ("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool2d_with_indices", "pixel_shuffle",
           "pixel_unshuffle", "interpolate", "upsample"):
    _RULES[_n] = _fold_rule(_spatial)
for _n in ("nll_loss", "cross_entropy"):
    _RULES[_n] = _nll_like_rule
for _n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
    _RULES[_n] = _pointwise_loss_rule


# ---- gathers and scatters with batched indices: one call on the physical tensors ----

def _pad_to(v, rank):
    """a physical [B, *logical] tensor with size-1 dims after B up to logical rank `rank`"""
    pad = rank - (v.dim() - 1)
    return v.reshape((v.shape[0],) + (1,) * pad + tuple(v.shape[1:])) if pad > 0 else v


def _gather_rule(func, level, args, kwargs):
    if kwargs or len(args) != 3:
        return NotImplemented
    x, d, idx = args
    if not isinstance(d, int) or not _tensorish(idx) or x.dim() == 0 or x.dim() != idx.dim():
        return NotImplemented
    B = batch_size(level, args, kwargs)
    return BatchedTensor(_call(func, physical(x, level, B), _norm_dim(d, x.dim()) + 1, physical(idx, level, B)),
                         level)


def _scatter_rule(func, level, args, kwargs):
    """scatter/scatter_add (and their in-place forms into a batched self) with any of self, index, src batched"""
    if len(args) < 4 or any(k != "reduce" for k in kwargs):
        return NotImplemented
    x, d, idx, src = args[:4]
    inplace = func.__name__.endswith("_")
    if inplace and not _is_b(x, level):
        return NotImplemented     # the loop raises torch's in-place error
    if not isinstance(d, int) or not _tensorish(idx) or x.dim() == 0 or x.dim() != idx.dim():
        return NotImplemented
    B = batch_size(level, args, kwargs)
    psrc = physical(src, level, B) if _tensorish(src) else src
    out = _call(func, physical(x, level, B), _norm_dim(d, x.dim()) + 1, physical(idx, level, B), psrc,
                *args[4:], **kwargs)
    return args[0] if inplace else BatchedTensor(out, level)


def _take_along_dim_rule(func, level, args, kwargs):
    x, _ = _arg(args, kwargs, 0, "input")
    idx, _ = _arg(args, kwargs, 1, "indices")
    d, _ = _arg(args, kwargs, 2, "dim")
    if not _tensorish(idx) or not (d is None or isinstance(d, int)) or len(args) > 3:
        return NotImplemented
    B = batch_size(level, args, kwargs)
    px, pi = physical(x, level, B), physical(idx, level, B)
    if d is None:
        return BatchedTensor(cthtorch.take_along_dim(px.reshape(B, -1), pi.reshape(B, -1), 1), level)
    if x.dim() != idx.dim():
        return NotImplemented
    return BatchedTensor(cthtorch.take_along_dim(px, pi, _norm_dim(d, x.dim()) + 1), level)


def _select_rows(px, dim, lin, n):
    """px[b].index_select(dim, lin[b]) for every b, lin: [B, *ishape] in [0, n): one index_select over the
    flattened batch; the ishape dims take dim's place"""
    B = px.shape[0]
    moved = px.movedim(dim + 1, 1)                                   # [B, n, *rest]
    rest = tuple(moved.shape[2:])
    ishape = tuple(lin.shape[1:])
    offsets = lin + (cthtorch.arange(B) * n).reshape((B,) + (1,) * len(ishape))
    out = moved.reshape((B * n,) + rest).index_select(0, offsets.reshape(-1))
    out = out.reshape((B,) + ishape + rest)
    k = len(ishape)
    return out.movedim(tuple(range(1, 1 + k)), tuple(range(1 + dim, 1 + dim + k)))


def _index_select_rule(func, level, args, kwargs):
    x, _ = _arg(args, kwargs, 0, "input")
    d, _ = _arg(args, kwargs, 1, "dim")
    idx, _ = _arg(args, kwargs, 2, "index")
    if not _is_b(idx, level):
        return _DIM_INDEX_SELECT(func, level, args, kwargs)
    if not isinstance(d, int) or x.dim() == 0 or idx.dim() > 1 or idx.dtype not in (cthtorch.int64, cthtorch.int32):
        return NotImplemented
    d = _norm_dim(d, x.dim())
    n = x.shape[d]
    pi = idx._value.reshape(idx._value.shape[0], -1).long()
    if bool(((pi < 0) | (pi >= n)).any()):
        return NotImplemented     # the per-sample loop raises torch's out-of-range message
    B = pi.shape[0]
    return BatchedTensor(_select_rows(physical(x, level, B), d, pi, n), level)


def _batched_index_getitem(x, idx, level):
    """x[...] whose advanced indices (consecutive integer tensors, some batched) sit among full slices:
    the indexed dims flatten into one and the raveled index picks rows of the flattened batch"""
    adv = [i for i, e in enumerate(idx) if _tensorish(e)]
    if not all(_tensorish(e) or (isinstance(e, slice) and e == slice(None)) for e in idx) \
            or adv != list(range(adv[0], adv[0] + len(adv))) or len(idx) > x.dim():
        return NotImplemented
    if any(idx[i].dtype not in (cthtorch.int64, cthtorch.int32) for i in adv):
        return NotImplemented     # boolean masks: data-dependent shapes (the loop)
    B = batch_size(level, x, idx)
    d0, k = adv[0], len(adv)
    sizes = tuple(x.shape)[d0:d0 + k]
    rank = max(idx[i].dim() for i in adv)
    pis = cthtorch.broadcast_tensors(*[_pad_to(physical(idx[i], level, B), rank).long() for i in adv])
    lin = None
    for p, n in zip(pis, sizes):
        if bool(((p < -n) | (p >= n)).any()):
            return NotImplemented     # the loop raises torch's out-of-bounds message
        p = cthtorch.where(p < 0, p + n, p)
        lin = p if lin is None else lin * n + p
    N = 1
    for n in sizes:
        N *= n
    px = physical(x, level, B)
    px = px.reshape((B,) + tuple(px.shape[1:1 + d0]) + (N,) + tuple(px.shape[1 + d0 + k:]))
    return BatchedTensor(_select_rows(px, d0, lin, N), level)


_DIM_INDEX_SELECT = _RULES["index_select"]
_RULES["index_select"] = _index_select_rule
for _n in ("gather",):
    _RULES[_n] = _gather_rule
for _n in ("scatter", "scatter_add", "scatter_", "scatter_add_"):
    _RULES[_n] = _scatter_rule
_RULES["take_along_dim"] = _take_along_dim_rule


def _index_put_rule(func, level, args, kwargs):
    """index_put_/index_put into a batched self with unbatched integer or mask indices: as setitem, or with
    accumulate through one index_put_ whose first index is the batch position"""
    x, _ = _arg(args, kwargs, 0, "input")
    indices, _ = _arg(args, kwargs, 1, "indices")
    val, _ = _arg(args, kwargs, 2, "values")
    acc, _ = _arg(args, kwargs, 3, "accumulate", False)
    if not _is_b(x, level) or not isinstance(indices, (tuple, list)) or len(args) > 4 \
            or not all(isinstance(e, cthtorch.Tensor) for e in indices):
        return NotImplemented
    inplace = func.__name__.endswith("_")
    target = x if inplace else BatchedTensor(x._value.clone(), level)
    if not acc:
        if _setitem_rule(func, level, (target, tuple(indices), val), {}) is NotImplemented:
            return NotImplemented
        return target
    if any(e.dtype == cthtorch.bool for e in indices):
        return NotImplemented
    B = target._value.shape[0]
    ix = cthtorch.broadcast_tensors(*indices)
    bidx = cthtorch.arange(B).reshape((B,) + (1,) * ix[0].dim())
    rest = target.dim() - len(indices)
    pv = _pad_to(val._value, ix[0].dim() + rest) if _is_b(val, level) else val
    target._value.index_put_((bidx,) + tuple(ix), pv, accumulate=True)
    return target


_RULES["index_put_"] = _RULES["index_put"] = _index_put_rule
