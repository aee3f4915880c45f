"""torch._dynamo.config: the knobs programs set most often, with torch's
defaults. Nothing reads them (there is no dynamo); unknown names are refused
as torch refuses them, so a misspelt knob still fails loudly. The old
cache_size_limit names are torch's aliases of the recompile_limit ones, and
patch() changes knobs for a block or a function, as torch's."""
import sys as _sys

from ..utils._config_module import install_config_module

_DEFAULTS = {
    "suppress_errors": False, "verbose": False, "recompile_limit": 8, "accumulated_recompile_limit": 256,
    "optimize_ddp": True, "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True, "specialize_int": False,
    "dynamic_shapes": True, "inline_inbuilt_nn_modules": True, "force_parameter_static_shapes": True,
    "error_on_recompile": False, "guard_nn_modules": True, "allow_unspec_int_on_nn_module": False,
}
_ALIASES = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"}


install_config_module(_sys.modules[__name__], "torch._dynamo.config", _DEFAULTS, _ALIASES)
