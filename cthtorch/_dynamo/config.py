"""torch._dynamo.config: the knobs programs set most often, with torch's
defaults. Nothing reads them (there is no dynamo); unknown names are refused
as torch refuses them, so a misspelt knob still fails loudly. The old
cache_size_limit names are torch's aliases of the recompile_limit ones, and
patch() changes knobs for a block or a function, as torch's."""
import contextlib
import sys as _sys
import types as _types

_DEFAULTS = {
    "suppress_errors": False, "verbose": False, "recompile_limit": 8, "accumulated_recompile_limit": 256,
    "optimize_ddp": True, "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True, "specialize_int": False,
    "dynamic_shapes": True, "inline_inbuilt_nn_modules": True, "force_parameter_static_shapes": True,
    "error_on_recompile": False, "guard_nn_modules": True, "allow_unspec_int_on_nn_module": False,
}
_ALIASES = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"}


class _Config(_types.ModuleType):
    def __getattr__(self, name):
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("torch._dynamo.config.%s does not exist" % name)

    def __setattr__(self, name, value):
        name = _ALIASES.get(name, name)
        if name not in _DEFAULTS and not name.startswith("_"):
            raise AttributeError("torch._dynamo.config.%s does not exist" % name)
        super().__setattr__(name, value)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """patch("name", value), patch({"name": value}) or patch(name=value): a context manager and decorator
        that sets the knobs for its extent and puts the old values back."""
        if arg1 is not None and kwargs:
            raise AssertionError("cannot pass both positional and keyword arguments to patch")
        if arg2 is not None:
            if not isinstance(arg1, str):
                raise AssertionError("first argument must be a string when passing 2 positional args to patch")
            changes = {arg1: arg2}
        elif arg1 is not None:
            if not isinstance(arg1, dict):
                raise AssertionError("first argument must be a dict when passing a single positional arg to patch")
            changes = dict(arg1)
        else:
            changes = kwargs
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config, changes):
        self.config, self.changes, self.saved = config, changes, []

    def __enter__(self):
        # an unknown name fails here, before anything changes, as in torch
        self.saved.append({k: getattr(self.config, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(self.config, k, v)

    def __exit__(self, *exc):
        for k, v in self.saved.pop().items():
            setattr(self.config, k, v)
        return False


_mod = _sys.modules[__name__]
for _k, _v in _DEFAULTS.items():
    setattr(_mod, _k, _v)
_mod.__class__ = _Config
