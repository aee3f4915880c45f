"""torch.__future__: switches for behaviour that will become the default. Module conversions (.to(),
.double(), ...) honour swap_module_params_on_conversion: the module's Parameter objects keep their identity
and take the converted contents through torch.utils.swap_tensors."""

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value):
    """Whether converting a module assigns new Parameters instead of changing the existing ones in place."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = bool(value)


def get_overwrite_module_params_on_conversion():
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value):
    """Whether converting a module (and load_state_dict) swaps the new contents into the existing Parameters
    with torch.utils.swap_tensors."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = bool(value)


def get_swap_module_params_on_conversion():
    return _swap_module_params_on_conversion
