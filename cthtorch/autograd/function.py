"""Custom differentiable functions: forward/backward static methods whose
backward node runs inside the C engine. The ctx is the backward node."""
import functools
import re

import cthtorch
from cthtorch import _C
from cthtorch.autograd import forward_ad as _forward_ad


def _modified_inplace_error(t, expected, output_nr, node):
    """torch's error for a saved tensor t changed in place since it was saved at version expected; node
    names what made it (output output_nr of node), None for a leaf"""
    which = "" if node is None else ", which is output %d of %s," % (output_nr, node)
    return RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                        "operation: [torch.%sTensor %s]%s is at version %d; expected version %d instead. Hint: "
                        "enable anomaly detection to find the operation that failed to compute its gradient, with "
                        "torch.autograd.set_detect_anomaly(True, check_nan=False)." % (
                            t.type().split(".")[-1].replace("Tensor", ""), list(t.shape), which, t._version,
                            expected))


class FunctionCtx:
    # no __dict__ of its own: ctx objects are _FunctionBase nodes, whose dict is in C
    __slots__ = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, cthtorch.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument %d is of type %s"
                                % (tensors.index(t), type(t).__name__))
        hooks = _C._saved_tensors_hooks_top()
        if hooks is not None and any(t is not None for t in tensors):
            pack, unpack = hooks
            # a packed entry: (None, (unpack_hook, what pack_hook returned))
            self.__dict__["_saved_store"] = tuple((None, 0) if t is None else (None, (unpack, pack(t)))
                                                  for t in tensors)
            return
        self.__dict__["_saved_store"] = tuple((t, t._version if t is not None else 0) for t in tensors)

    @property
    def saved_tensors(self):
        store = self.__dict__.get("_saved_store", ())
        if store is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed). Saved intermediate values of the graph "
                               "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                               "you need to backward through the graph a second time or if you need to access saved "
                               "tensors after calling backward.")
        out = []
        for t, v in store:
            if t is None and v:
                t = v[0](v[1])
                if not isinstance(t, cthtorch.Tensor):
                    raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                    "type %s" % type(t).__name__)
            elif t is not None and t._version != v:
                fn = t.grad_fn   # as torch: the node named without "Backward0"; none for a leaf
                raise _modified_inplace_error(t, v, t.output_nr,
                                              None if fn is None else re.sub(r"Backward\d*$", "", type(fn).__name__))
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def save_for_forward(self, *tensors):
        """Tensors for jvp; as in torch they are read back through ctx.saved_tensors."""
        for t in tensors:
            if t is not None and not isinstance(t, cthtorch.Tensor):
                raise RuntimeError("save_for_forward expects all arguments to be tensors; you should save "
                                   "non-tensors as attributes on ctx.")
        if "_saved_store" not in self.__dict__:
            self.__dict__["_saved_store"] = tuple((t, t._version if t is not None else 0) for t in tensors)

    def mark_dirty(self, *args):
        self._dirty = args

    def mark_non_differentiable(self, *args):
        self._non_differentiable = args

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)


class BackwardCFunction(_C._FunctionBase, FunctionCtx):
    _materialize_grads = True
    _native_node = False   # name_node's: the node stands for one of torch's (edges for its differentiable inputs)

    def _do_backward(self, grads):
        cls = self._forward_cls
        with cthtorch.enable_grad() if cthtorch.is_grad_enabled() else cthtorch.no_grad():
            r = cls.backward(self, *grads)
        # one gradient per forward argument: the C node keeps those of its edges (drop_skipped)
        return r if isinstance(r, tuple) else (r,)

    def apply(self, *args):
        return self._forward_cls.backward(self, *args)


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Subclass with @staticmethod forward(ctx, ...) and backward(ctx, *grads); call .apply(...)."""

    def __init__(self, *args, **kwargs):
        # torch's texts: pre-0.4 code instantiates its Function subclasses and calls them
        import warnings
        warnings.warn("%s should not be instantiated. Methods on autograd functions are all static, so you should "
                      "invoke them on the class itself. Instantiating an autograd function will raise an error in a "
                      "future version of PyTorch." % (self.__class__,), DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. "
                           "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls()
        T = cthtorch.Tensor
        ctx.needs_input_grad = needs = tuple([isinstance(a, T) and a.requires_grad for a in args])
        uses_setup = cls.setup_context is not Function.setup_context
        with cthtorch.no_grad():
            if uses_setup:
                outputs = cls.forward(*args, **kwargs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, outputs)
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        dirty = getattr(ctx, "_dirty", ())
        # an input returned unchanged becomes a new alias, so its history stays intact
        fixed = []
        for o in outs:
            if isinstance(o, cthtorch.Tensor) and any(o is a for a in args) and not any(o is d for d in dirty):
                with cthtorch.no_grad():
                    o = o.view_as(o)
            fixed.append(o)
        outs = tuple(fixed)
        if _forward_ad._is_active() and getattr(cls, "jvp", None) is not None and cls.backward is Function.backward \
                and cls.vjp is Function.vjp:
            # forward mode only: the tangents come from jvp (forward_ad's duals are otherwise differentiated
            # by reverse mode, which this Function cannot do)
            outs = _forward_ad._function_jvp(cls, ctx, args, outs if is_tuple else outs[0])
            return outs
        if True in needs and cthtorch.is_grad_enabled():
            # edges for the tensor arguments only, as torch's (see PyFunction.c's has_edge)
            _C._function_record(ctx, args, outs, getattr(ctx, "_non_differentiable", ()), dirty, ctx._native_node)
        return outs if is_tuple else outs[0]


class _DelayedError(Function):
    """Stands in for a backward that cannot itself be differentiated: its
    outputs carry the values, and differentiating them raises msg."""
    @staticmethod
    def forward(ctx, msg, n, *tensors):
        ctx.msg = msg
        return tuple(t.clone() for t in tensors[:n])   # the rest only link the node to the graph

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


def once_differentiable(fn):
    """backward runs without recording; under create_graph its results are
    tied to the incoming gradients by a node that raises PyTorch's error if a
    higher derivative is requested (never a silently zero one)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with cthtorch.no_grad():
            outputs = fn(ctx, *args)
        if not cthtorch.is_grad_enabled():
            return outputs
        # linked to the incoming gradients and (unlike torch) to the saved
        # tensors too, so a backward that depends on its inputs never looks constant
        try:
            saved = [t for t in ctx.saved_tensors if t is not None]
        except RuntimeError:
            saved = []
        grads = [a for a in list(args) + saved if isinstance(a, cthtorch.Tensor) and a.requires_grad]
        if not grads:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        idx = [i for i, o in enumerate(outs) if isinstance(o, cthtorch.Tensor) and o.is_floating_point()]
        wrapped = _DelayedError.apply("trying to differentiate twice a function that was marked with "
                                      "@once_differentiable", len(idx), *[outs[i] for i in idx], *grads)
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        outs = list(outs)
        for k, i in enumerate(idx):
            outs[i] = wrapped[k]
        return outs[0] if single else tuple(outs)
    return wrapper


def _recomputed_grads(fn, inputs, needs, grads):
    """The backward of a Function whose forward is a composite: fn(*inputs) run again under grad mode and
    differentiated, one gradient per input (None where needs is false). Under create_graph the saved inputs
    themselves are used, so the gradients stay on their graph."""
    create = cthtorch.is_grad_enabled()
    with cthtorch.enable_grad():
        xs = [x if create else x.detach().requires_grad_(n) for x, n in zip(inputs, needs)]
        outs = fn(*xs)
        pairs = [(o, g) for o, g in zip(outs if isinstance(outs, tuple) else (outs,), grads) if g is not None]
        got = iter(cthtorch.autograd.grad([o for o, _ in pairs], [x for x, n in zip(xs, needs) if n],
                                          [g for _, g in pairs], create_graph=create, allow_unused=True))
    return tuple(next(got) if n else None for n in needs)


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
