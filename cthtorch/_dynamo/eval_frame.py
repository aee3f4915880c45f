"""torch._dynamo.eval_frame.OptimizedModule: what torch.compile(module) returns. There is no compiler here
(its forward runs the module eagerly), but the wrapper is torch's: the module is registered as `_orig_mod`,
so state_dict keys, named_parameters and repr carry that prefix as under torch (programs strip
'_orig_mod.' or reach model._orig_mod), and other attribute reads and writes go to the wrapped module."""
from collections.abc import Sized

import cthtorch
from cthtorch.nn import Module

__all__ = ["OptimizedModule"]


class _EagerContext:
    """dynamo_ctx: where torch's optimize context would compile a callable, this returns it unchanged."""

    def __call__(self, fn):
        def run_eagerly(*args, **kwargs):
            return fn(*args, **kwargs)
        return run_eagerly


class OptimizedModule(Module):
    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "forward", "_forward",
                           "__dict__", "_super_module_initialized"}

    def __init__(self, mod, dynamo_ctx=None):
        # first: attribute access on self reads _orig_mod, also during Module.__init__
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod          # registered as the one submodule
        self.dynamo_ctx = dynamo_ctx if dynamo_ctx is not None else _EagerContext()
        self._initialize()

    def _initialize(self):
        self.forward = self.dynamo_ctx(self._orig_mod.__call__)
        self._torchdynamo_orig_callable = self._orig_mod.forward

    def __len__(self):
        if isinstance(self._orig_mod, Sized):
            return len(self._orig_mod)
        raise TypeError("%s does not support len()" % type(self._orig_mod).__name__)

    def __reduce__(self):
        return (self.__class__, (self._orig_mod, self.dynamo_ctx))

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("forward", None)
        state.pop("__call__", None)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self._initialize()

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        # Module.__init__'s default is not the wrapped module's: it mirrors _orig_mod
        if self.__dict__.get("_super_module_initialized"):
            self._orig_mod.training = value

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)


def _wrap(model):
    return OptimizedModule(model) if isinstance(model, cthtorch.nn.Module) else model
