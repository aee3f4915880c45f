"""fuse_modules / fuse_modules_qat (torch.ao.quantization.fuse_modules): replace runs of modules (conv, bn,
relu; linear, relu) by one fused module, leaving nn.Identity in the other places."""
import copy

from cthtorch import nn
from cthtorch.ao.quantization.fuser_method_mappings import get_fuser_method

__all__ = ["fuse_known_modules", "fuse_modules", "fuse_modules_qat"]


def _get_module(model, submodule_key):
    for token in submodule_key.split("."):
        model = getattr(model, token)
    return model


def _set_module(model, submodule_key, module):
    tokens = submodule_key.split(".")
    for token in tokens[:-1]:
        model = getattr(model, token)
    setattr(model, tokens[-1], module)


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """[fused, Identity, ...] for a list of modules; the first's pre-hooks and the last's hooks move over."""
    types = tuple(type(m) for m in mod_list)
    fuser_method = get_fuser_method(types, additional_fuser_method_mapping)
    new_mod = [None] * len(mod_list)
    fused = fuser_method(is_qat, *mod_list)
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    new_mod[0] = fused
    for i in range(1, len(mod_list)):
        identity = nn.Identity()
        identity.training = mod_list[0].training
        new_mod[i] = identity
    return new_mod


def _fuse_modules_helper(model, modules_to_fuse, is_qat, fuser_func=fuse_known_modules,
                         fuse_custom_config_dict=None):
    additional = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    mod_list = [_get_module(model, item) for item in modules_to_fuse]
    new_mod_list = fuser_func(mod_list, is_qat, additional)
    for i, item in enumerate(modules_to_fuse):
        _set_module(model, item, new_mod_list[i])


def _fuse_modules(model, modules_to_fuse, is_qat, inplace=False, fuser_func=fuse_known_modules,
                  fuse_custom_config_dict=None):
    if not inplace:
        model = copy.deepcopy(model)
    if all(isinstance(m, str) for m in modules_to_fuse):
        _fuse_modules_helper(model, modules_to_fuse, is_qat, fuser_func, fuse_custom_config_dict)
    else:
        for module_list in modules_to_fuse:
            _fuse_modules_helper(model, module_list, is_qat, fuser_func, fuse_custom_config_dict)
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules, fuse_custom_config_dict=None):
    """Fuses each list of submodule names (or the one list) for post-training quantization (eval mode)."""
    return _fuse_modules(model, modules_to_fuse, is_qat=False, inplace=inplace, fuser_func=fuser_func,
                         fuse_custom_config_dict=fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """fuse_modules for quantization-aware training: conv + bn stay a trainable ConvBn module."""
    return _fuse_modules(model, modules_to_fuse, is_qat=True, inplace=inplace, fuser_func=fuser_func,
                         fuse_custom_config_dict=fuse_custom_config_dict)
