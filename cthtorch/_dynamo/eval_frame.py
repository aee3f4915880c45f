"""torch._dynamo.eval_frame: what torch.compile hands back for a module.

There is no compiler here, so an OptimizedModule runs its module eagerly
(the results are the module's own, as a correct compile gives). It is still
torch's wrapper, because programs depend on its shape: the original module
is the child `_orig_mod` (state_dict keys gain the '_orig_mod.' prefix that
nanoGPT-style loaders strip), attributes read and written pass through to
it, and it pickles as the wrapper of that module."""
from cthtorch.nn.modules.module import Module

__all__ = ["OptimizedModule", "OptimizeContext"]


class OptimizeContext:
    """The compile settings an OptimizedModule keeps (dynamo_ctx); nothing is compiled with them."""

    def __init__(self, backend="inductor", *, mode=None, options=None, fullgraph=False, dynamic=None):
        self.backend, self.mode, self.options = backend, mode, options
        self.fullgraph, self.dynamic = fullgraph, dynamic

    def __call__(self, fn):
        return fn


class OptimizedModule(Module):
    """The module torch.compile returns: calls go to _orig_mod's __call__ (its hooks included)."""

    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "get_compiler_config",
                           "forward", "_forward", "__dict__", "named_children_walk", "_super_module_initialized"}

    def __init__(self, mod, dynamo_ctx=None):
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx if dynamo_ctx is not None else OptimizeContext()
        self._torchdynamo_orig_callable = mod.__call__
        self.forward = self.dynamo_ctx(mod.__call__)

    @property
    def training(self):
        return self._modules["_orig_mod"].training

    @training.setter
    def training(self, value):
        # Module.__init__ runs before _orig_mod exists; after that the flag is the wrapped module's
        if "_orig_mod" in self.__dict__.get("_modules", ()):
            self._modules["_orig_mod"].training = value

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules")
        if modules is None or "_orig_mod" not in modules:
            return super().__getattr__(name)
        if name == "_orig_mod":
            return modules["_orig_mod"]
        return getattr(modules["_orig_mod"], name)

    def __setattr__(self, name, value):
        if (hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes
                or "_orig_mod" not in self.__dict__.get("_modules", ())):
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __dir__(self):
        orig = self._orig_mod.__dir__()
        return orig + [a for a in super().__dir__() if a not in orig]

    def __len__(self):
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError("%s does not support len()" % type(self._orig_mod).__name__) from None

    def __reduce__(self):
        return (self.__class__, (self._orig_mod, self.dynamo_ctx))

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("forward", None)
        state.pop("_torchdynamo_orig_callable", None)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self._torchdynamo_orig_callable = self._orig_mod.__call__
        self.forward = self.dynamo_ctx(self._orig_mod.__call__)
