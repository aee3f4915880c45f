"""torch._foreach_*: one op over a list of tensors (EMA and polyak updates, hand-written
optimizer steps: `torch._foreach_lerp_(ema, params, 1 - decay)`). On the CPU torch runs
these as a loop of the per-tensor op (its "slow path"), so each is written here as that
loop over the declared ops: same values, dtypes, broadcasting and errors per tensor.
Out-of-place forms give a tuple; in-place forms give back the list they were passed,
after checking every argument, so a bad list changes nothing."""
import cthtorch

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")


def _label(x):
    if isinstance(x, cthtorch.Tensor):
        return "Tensor"
    return type(x).__name__


def _bad_args(name, args, expected):
    raise TypeError("%s() received an invalid combination of arguments - got (%s), but expected one of:\n%s"
                    % (name, ", ".join(_label(a) for a in args), "".join(" * (%s)\n" % e for e in expected)))


def _is_tensor_list(x):
    return isinstance(x, (list, tuple)) and all(isinstance(t, cthtorch.Tensor) for t in x)


def _is_number(x):
    return isinstance(x, (bool, int, float, complex)) or (
        type(x).__module__ == "numpy" and type(x).__name__ != "ndarray")


def _is_scalar_list(x):
    return isinstance(x, (list, tuple)) and all(_is_number(s) for s in x)


def _check_self(name, self, args, expected):
    if not _is_tensor_list(self):
        _bad_args(name, args, expected)
    if len(self) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")


def _check_lists(self, *others):
    for other in others:
        if len(other) != len(self):
            raise RuntimeError("Tensor lists must have the same number of tensors, got %d and %d"
                               % (len(self), len(other)))


def _check_scalars(self, scalars):
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")


def _check_scalar_tensor(t):
    if t.dim() != 0:
        raise RuntimeError("scalar tensor expected to be 0 dim but it has %d dimensions and %d elements."
                           % (t.dim(), t.numel()))


def _spread(self, value, name, args, expected, tensors=True):
    """value for each tensor of self: from a list of tensors (where the op has that form), a list of
    scalars, or one number"""
    if tensors and _is_tensor_list(value) and not _is_scalar_list(value):
        _check_lists(self, value)
        return list(value)
    if _is_scalar_list(value):
        _check_scalars(self, value)
        return list(value)
    if _is_number(value):
        return [value] * len(self)
    _bad_args(name, args, expected)


def _finish(self, results, inplace):
    return self if inplace else tuple(results)


def _unary(op):
    def out_of_place(self):
        _check_self("_foreach_" + op, self, (self,), ["tuple of Tensors self"])
        return tuple(getattr(t, op)() for t in self)

    def in_place(self):
        _check_self("_foreach_%s_" % op, self, (self,), ["tuple of Tensors self"])
        for t in self:
            getattr(t, op + "_")()
        return self
    return out_of_place, in_place


def _binary(op, tensor_overload, alpha):
    """add/sub (alpha on the list and tensor forms), mul/div (a 0-dim tensor form),
    clamp_min/clamp_max/maximum/minimum: a scalar, a list of scalars or a list of tensors."""
    scalar_op = {"maximum": "clamp_min", "minimum": "clamp_max"}.get(op, op)
    expected = ["tuple of Tensors self, Number scalar", "tuple of Tensors self, tuple of Scalars scalars",
                "tuple of Tensors self, tuple of Tensors other%s" % (", *, Number alpha = 1" if alpha else "")]
    if tensor_overload:
        expected.append("tuple of Tensors self, Tensor other%s" % (", *, Number alpha = 1" if alpha else ""))

    def make(inplace):
        name = "_foreach_%s%s" % (op, "_" if inplace else "")

        def fn(self, other, **kw):
            extra = {}
            if kw:
                if not alpha or set(kw) != {"alpha"}:
                    _bad_args(name, (self, other) + tuple(kw.values()), expected)
                extra = kw
            _check_self(name, self, (self, other), expected)
            suffix = "_" if inplace else ""
            if _is_tensor_list(other) and not _is_scalar_list(other):
                _check_lists(self, other)
                pairs = [(_tensor_op(t, op, inplace), o) for t, o in zip(self, other)]
            elif isinstance(other, cthtorch.Tensor) and tensor_overload:
                _check_scalar_tensor(other)
                pairs = [(getattr(t, op + suffix), other) for t in self]
            elif _is_scalar_list(other):
                if extra:
                    _bad_args(name, (self, other) + tuple(kw.values()), expected)
                _check_scalars(self, other)
                pairs = [(getattr(t, scalar_op + suffix), s) for t, s in zip(self, other)]
            elif _is_number(other) and not extra:
                pairs = [(getattr(t, scalar_op + suffix), other) for t in self]
            else:
                _bad_args(name, (self, other), expected)
            return _finish(self, [f(o, **extra) for f, o in pairs], inplace)
        fn.__name__ = name
        return fn
    return make(False), make(True)


def _tensor_op(t, op, inplace):
    if inplace and op in ("maximum", "minimum"):
        # torch has no Tensor.maximum_: the result is written back into t
        return lambda o: t.copy_(getattr(cthtorch, op)(t, o))
    return getattr(t, op + ("_" if inplace else ""))


def _pointwise3(op):
    """addcmul/addcdiv: value as one scalar, a list of scalars, or a 1-D tensor of them."""
    expected = ["tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, Tensor scalars",
                "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, tuple of Scalars scalars",
                "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, Number value = 1"]

    def make(inplace):
        name = "_foreach_%s%s" % (op, "_" if inplace else "")

        def fn(self, tensor1, tensor2, value=1, scalars=None):
            if scalars is not None:
                value = scalars
            args = (self, tensor1, tensor2, value)
            _check_self(name, self, args, expected)
            if not (_is_tensor_list(tensor1) and _is_tensor_list(tensor2)):
                _bad_args(name, args, expected)
            _check_lists(self, tensor1, tensor2)
            if isinstance(value, cthtorch.Tensor):
                if value.dim() != 1:
                    raise RuntimeError("Expected packed scalar Tensor to be of dimension 1. Got %d instead."
                                       % value.dim())
                if value.numel() != len(self):
                    raise RuntimeError("Expected length of scalars to match input of length %d but got %d instead."
                                       % (len(self), value.numel()))
                value = value.tolist()
            values = _spread(self, value, name, args, expected, tensors=False)
            f = op + ("_" if inplace else "")
            return _finish(self, [getattr(t, f)(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, values)],
                           inplace)
        fn.__name__ = name
        return fn
    return make(False), make(True)


def _lerp_impl(inplace):
    name = "_foreach_lerp" + ("_" if inplace else "")
    expected = ["tuple of Tensors self, tuple of Tensors tensors1, tuple of Tensors weights",
                "tuple of Tensors self, tuple of Tensors tensors1, Number weight",
                "tuple of Tensors self, tuple of Tensors tensors1, tuple of Scalars weight"]

    def fn(self, tensors1, weight):
        args = (self, tensors1, weight)
        _check_self(name, self, args, expected)
        if not _is_tensor_list(tensors1):
            _bad_args(name, args, expected)
        _check_lists(self, tensors1)
        weights = _spread(self, weight, name, args, expected)
        f = "lerp_" if inplace else "lerp"
        return _finish(self, [getattr(t, f)(e, w) for t, e, w in zip(self, tensors1, weights)], inplace)
    fn.__name__ = name
    return fn


def _pow_impl(inplace):
    name = "_foreach_pow" + ("_" if inplace else "")
    expected = ["tuple of Tensors self, tuple of Tensors exponent", "tuple of Tensors self, Number exponent",
                "tuple of Tensors self, tuple of Scalars exponent"]
    if not inplace:
        expected.append("Number self, tuple of Tensors exponent")

    def fn(self, exponent):
        args = (self, exponent)
        f = "pow_" if inplace else "pow"
        if not inplace and _is_number(self) and _is_tensor_list(exponent):
            if len(exponent) == 0:
                raise RuntimeError("Tensor list must have at least one tensor.")
            return tuple(cthtorch.pow(self, e) for e in exponent)
        _check_self(name, self, args, expected)
        exps = _spread(self, exponent, name, args, expected)
        return _finish(self, [getattr(t, f)(e) for t, e in zip(self, exps)], inplace)
    fn.__name__ = name
    return fn


def _foreach_norm(self, ord=2, dtype=None):
    _check_self("_foreach_norm", self, (self, ord), ["tuple of Tensors self, Number ord = 2, ScalarType dtype = None"])
    if ord == float("inf") and any(t.numel() == 0 for t in self):   # torch's own text (-inf: vector_norm's)
        raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the operation "
                           "does not have an identity")
    return tuple(cthtorch.linalg.vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    _check_self("_foreach_powsum", self, (self, ord),
                ["tuple of Tensors self, Number ord = 2, ScalarType dtype = None"])
    return tuple(t.abs().pow(ord).sum(dtype=dtype) for t in self)


def _foreach_max(self):
    _check_self("_foreach_max", self, (self,), ["tuple of Tensors self"])
    if any(t.numel() == 0 for t in self):
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero elements is "
                           "undefined.")
    return tuple(t.max() for t in self)


def _foreach_zero_(self):
    _check_self("_foreach_zero_", self, (self,), ["tuple of Tensors self"])
    for t in self:
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    expected = ["tuple of Tensors self, tuple of Tensors src, bool non_blocking = False"]
    _check_self("_foreach_copy_", self, (self, src), expected)
    if not _is_tensor_list(src):
        _bad_args("_foreach_copy_", (self, src), expected)
    _check_lists(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking=non_blocking)
    return self


def _foreach_clone(self, *, memory_format=None):
    _check_self("_foreach_clone", self, (self,), ["tuple of Tensors self, *, MemoryFormat memory_format = None"])
    kw = {} if memory_format is None else {"memory_format": memory_format}
    return tuple(t.clone(**kw) for t in self)


def _foreach_mm(self, mat2):
    expected = ["tuple of Tensors self, tuple of Tensors mat2"]
    _check_self("_foreach_mm", self, (self, mat2), expected)
    if not _is_tensor_list(mat2):
        _bad_args("_foreach_mm", (self, mat2), expected)
    _check_lists(self, mat2)
    return tuple(cthtorch.mm(a, b) for a, b in zip(self, mat2))


FUNCTIONS = {"_foreach_norm": _foreach_norm, "_foreach_powsum": _foreach_powsum, "_foreach_max": _foreach_max,
             "_foreach_zero_": _foreach_zero_, "_foreach_copy_": _foreach_copy_, "_foreach_clone": _foreach_clone,
             "_foreach_mm": _foreach_mm, "_foreach_lerp": _lerp_impl(False), "_foreach_lerp_": _lerp_impl(True),
             "_foreach_pow": _pow_impl(False), "_foreach_pow_": _pow_impl(True)}
for _op in _UNARY:
    FUNCTIONS["_foreach_" + _op], FUNCTIONS["_foreach_%s_" % _op] = _unary(_op)
for _op, _tensor_form, _alpha in (("add", True, True), ("sub", False, True), ("mul", True, False),
                                  ("div", True, False), ("clamp_min", False, False), ("clamp_max", False, False),
                                  ("maximum", False, False), ("minimum", False, False)):
    FUNCTIONS["_foreach_" + _op], FUNCTIONS["_foreach_%s_" % _op] = _binary(_op, _tensor_form, _alpha)
for _op in ("addcmul", "addcdiv"):
    FUNCTIONS["_foreach_" + _op], FUNCTIONS["_foreach_%s_" % _op] = _pointwise3(_op)
