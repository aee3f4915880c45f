"""Eager-mode quantization flows (torch.ao.quantization.quantize): propagate_qconfig_, prepare / convert
(static), prepare_qat, quantize, quantize_qat and quantize_dynamic."""
import copy
import inspect
import warnings

import cthtorch
from cthtorch import nn
from cthtorch.ao.quantization.qconfig import default_dynamic_qconfig, float16_dynamic_qconfig
from cthtorch.ao.quantization.quantization_mappings import (
    get_default_dynamic_quant_module_mappings, get_default_qat_module_mappings,
    get_default_qconfig_propagation_list, get_default_static_quant_module_mappings,
    _get_special_act_post_process, _has_special_act_post_process)
from cthtorch.ao.quantization.stubs import DeQuantStub, QuantWrapper

__all__ = ["get_default_custom_config_dict", "propagate_qconfig_", "add_quant_dequant", "prepare", "quantize",
           "quantize_dynamic", "prepare_qat", "quantize_qat", "convert", "swap_module"]


def get_default_custom_config_dict():
    return {"float_to_observed_custom_module_class": {}, "observed_to_quantized_custom_module_class": {}}


def _propagate_qconfig_helper(module, qconfig_dict, qconfig_parent=None, prefix="", prepare_custom_config_dict=None):
    qconfig = qconfig_dict.get(type(module), qconfig_parent)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        module_prefix = prefix + "." + name if prefix else name
        _propagate_qconfig_helper(child, qconfig_dict, qconfig, module_prefix)


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Gives every submodule a .qconfig: its own, else its type's or name's in qconfig_dict, else its parent's."""
    _propagate_qconfig_helper(module, qconfig_dict or {})


def _observer_forward_hook(self, input, output):
    return self.activation_post_process(output)


def _is_fused(module):
    from cthtorch.ao.nn.intrinsic import _FusedModule
    return isinstance(module, _FusedModule)


def _insert_activation_post_process(m, special_act_post_process=None):
    if getattr(m, "qconfig", None) is not None and not isinstance(m, DeQuantStub):
        m.add_module("activation_post_process", m.qconfig.activation() if special_act_post_process is None
                     else special_act_post_process())
        m._forward_hooks_observer = m.register_forward_hook(_observer_forward_hook)


def _add_observer_(module, qconfig_propagation_list=None, non_leaf_module_list=None, device=None,
                   custom_module_class_mapping=None):
    from cthtorch.ao.nn.quantized import FloatFunctional, QFunctional
    if qconfig_propagation_list is None:
        qconfig_propagation_list = get_default_qconfig_propagation_list()
    for name, child in module.named_children():
        if type(child) is nn.Dropout:   # torch skips it: quantized Dropout needs no parameters
            continue
        if type(child) in (FloatFunctional, QFunctional):
            if getattr(child, "qconfig", None) is not None:
                child.activation_post_process = child.qconfig.activation()
        elif _is_fused(child):
            _insert_activation_post_process(child)
        elif non_leaf_module_list is not None and type(child) in non_leaf_module_list:
            _insert_activation_post_process(child)
        elif _has_special_act_post_process(child):   # sigmoid, tanh, ... in training: fixed parameters
            _insert_activation_post_process(child, _get_special_act_post_process(child))
        else:
            _add_observer_(child, qconfig_propagation_list, non_leaf_module_list, device, custom_module_class_mapping)
    if (not list(module.children()) and not isinstance(module, nn.Sequential)
            and type(module) in qconfig_propagation_list):
        _insert_activation_post_process(module)


def _remove_activation_post_process(module):
    if hasattr(module, "activation_post_process"):
        from cthtorch.ao.quantization.observer import ObserverBase
        from cthtorch.ao.quantization.fake_quantize import FakeQuantizeBase
        if isinstance(module.activation_post_process, (ObserverBase, FakeQuantizeBase)):
            delattr(module, "activation_post_process")
    handle = module.__dict__.pop("_forward_hooks_observer", None)
    if handle is not None:
        handle.remove()


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    _remove_activation_post_process(module)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attaches observers (from each module's qconfig) that record activations during calibration."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_dict=None)
    if not any(hasattr(m, "qconfig") and m.qconfig for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules",
                      stacklevel=2)
    _add_observer_(model, allow_list, observer_non_leaf_module_list)
    return model


def add_quant_dequant(module):
    """Wraps each leaf that has a qconfig in QuantWrapper."""
    if not list(module.children()) and hasattr(module, "qconfig") and module.qconfig:
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """prepare, run_fn(model, run_args) to calibrate, convert."""
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


def quantize_dynamic(model, qconfig_spec=None, dtype=cthtorch.qint8, mapping=None, inplace=False):
    """Swaps the listed module types (default: Linear and the RNNs) for dynamically quantized ones."""
    if qconfig_spec is None:
        if dtype == cthtorch.qint8:
            qconfig_spec = {nn.Linear: default_dynamic_qconfig, nn.LSTM: default_dynamic_qconfig,
                            nn.GRU: default_dynamic_qconfig, nn.LSTMCell: default_dynamic_qconfig,
                            nn.RNNCell: default_dynamic_qconfig, nn.GRUCell: default_dynamic_qconfig}
        elif dtype == cthtorch.float16:
            qconfig_spec = {nn.Linear: float16_dynamic_qconfig, nn.LSTM: float16_dynamic_qconfig,
                            nn.GRU: float16_dynamic_qconfig, nn.LSTMCell: float16_dynamic_qconfig,
                            nn.RNNCell: float16_dynamic_qconfig, nn.GRUCell: float16_dynamic_qconfig}
        else:
            raise ValueError("Don't know how to quantize with default settings for {}. Provide full qconfig "
                             "please".format(dtype))
    elif isinstance(qconfig_spec, set):
        if dtype == cthtorch.qint8:
            default_qconfig = default_dynamic_qconfig
        elif dtype == cthtorch.float16:
            default_qconfig = float16_dynamic_qconfig
        else:
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict(zip(qconfig_spec, [default_qconfig] * len(qconfig_spec)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def prepare_qat(model, mapping=None, inplace=False):
    """Swaps modules for their QAT versions (fake-quantized weights) and attaches fake-quantize observers."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_dict=None)
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


def quantize_qat(model, run_fn, run_args, inplace=False):
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Swaps each module that has a qconfig and a mapping entry for its quantized counterpart."""
    if is_reference:
        raise NotImplementedError("cthtorch has no reference quantized modules (convert(is_reference=True))")
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping, inplace=True, use_precomputed_fake_quant=use_precomputed_fake_quant)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def _convert(module, mapping=None, inplace=False, use_precomputed_fake_quant=False):
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    reassign = {}
    for name, mod in module.named_children():
        if not _is_fused(mod):
            _convert(mod, mapping, True, use_precomputed_fake_quant)
        reassign[name] = swap_module(mod, mapping, {}, use_precomputed_fake_quant)
    for key, value in reassign.items():
        module._modules[key] = value
    return module


def swap_module(mod, mapping, custom_module_class_mapping, use_precomputed_fake_quant=False):
    """mod's quantized counterpart from mapping (keeping its user hooks), or mod itself."""
    new_mod = mod
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        qmod = mapping[type(mod)]
        # a user's class in the mapping may have the older from_float(mod) (torch asks the signature)
        if "use_precomputed_fake_quant" in inspect.signature(qmod.from_float).parameters:
            new_mod = qmod.from_float(mod, use_precomputed_fake_quant=use_precomputed_fake_quant)
        else:
            new_mod = qmod.from_float(mod)
        observer_hook = mod.__dict__.get("_forward_hooks_observer")
        for hook_id, hook in mod._forward_pre_hooks.items():
            new_mod.register_forward_pre_hook(hook)
        for hook_id, hook in mod._forward_hooks.items():
            if observer_hook is None or hook_id != observer_hook.id:
                new_mod.register_forward_hook(hook)
    return new_mod
