"""torch._dynamo.config: the knobs programs set most often, with torch's
defaults. Nothing reads them (there is no dynamo); unknown names are refused
as torch refuses them, so a misspelt knob still fails loudly."""
import sys as _sys
import types as _types

_DEFAULTS = {
    "suppress_errors": False, "verbose": False, "cache_size_limit": 8, "recompile_limit": 8,
    "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256, "optimize_ddp": True,
    "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False, "automatic_dynamic_shapes": True,
    "assume_static_by_default": True, "specialize_int": False, "dynamic_shapes": True,
    "inline_inbuilt_nn_modules": True, "force_parameter_static_shapes": True, "error_on_recompile": False,
    "guard_nn_modules": False, "allow_unspec_int_on_nn_module": False, "cache_size_limit_warning": True,
}


class _Config(_types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("torch._dynamo.config.%s does not exist" % name)

    def __setattr__(self, name, value):
        if name not in _DEFAULTS and not name.startswith("_"):
            raise AttributeError("torch._dynamo.config.%s does not exist" % name)
        super().__setattr__(name, value)


_mod = _sys.modules[__name__]
for _k, _v in _DEFAULTS.items():
    setattr(_mod, _k, _v)
_mod.__class__ = _Config
