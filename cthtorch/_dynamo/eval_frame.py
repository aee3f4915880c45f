"""torch._dynamo.eval_frame.OptimizedModule: what torch.compile(module) returns. A Module that holds
the original as its submodule `_orig_mod`, so its state_dict keys read `_orig_mod.<name>` and its
repr nests the original, as torch's (programs strip that prefix before loading); attribute reads and
writes go through to the original. There is no compiler here: forward is the original's call."""
import cthtorch


class OptimizedModule(cthtorch.nn.Module):
    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "forward", "_forward", "__dict__", "_super_module_initialized"}

    def __init__(self, mod, dynamo_ctx=None):
        # first: attribute access on self reads _orig_mod, also from within Module.__init__
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod   # registers it as the submodule
        self.dynamo_ctx = dynamo_ctx
        self._initialize()

    def _initialize(self):
        self.forward = self._orig_mod.__call__

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
        # Module.__init__ sets it before the original is registered
        if "_orig_mod" in self.__dict__.get("_modules", {}):
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

    def __dir__(self):
        orig = self._orig_mod.__dir__()
        return orig + [a for a in super().__dir__() if a not in orig]
