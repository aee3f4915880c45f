"""Which float module each quantization flow swaps for which quantized one (torch's
quantization_mappings). Tables are built on first use: the quantized modules import this package."""
from cthtorch import nn

__all__ = ["get_default_static_quant_module_mappings", "get_default_dynamic_quant_module_mappings",
           "get_default_qat_module_mappings", "get_default_qconfig_propagation_list",
           "no_observer_set", "get_quantized_operator"]


def get_default_static_quant_module_mappings():
    from cthtorch.ao.nn import quantized as nnq, intrinsic as nni, qat as nnqat
    from cthtorch.ao.nn.intrinsic import quantized as nniq, qat as nniqat
    from cthtorch.ao.quantization.stubs import QuantStub, DeQuantStub
    return {
        QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, nn.Linear: nnq.Linear, nn.Conv2d: nnq.Conv2d,
        nn.ReLU6: nnq.ReLU6, nn.Dropout: nnq.Dropout, nnq.FloatFunctional: nnq.QFunctional,
        nni.ConvReLU2d: nniq.ConvReLU2d, nni.LinearReLU: nniq.LinearReLU,
        nniqat.ConvBn2d: nnq.Conv2d, nniqat.ConvBnReLU2d: nniq.ConvReLU2d, nniqat.ConvReLU2d: nniq.ConvReLU2d,
        nniqat.LinearReLU: nniq.LinearReLU, nnqat.Linear: nnq.Linear, nnqat.Conv2d: nnq.Conv2d,
        nn.BatchNorm2d: nnq.BatchNorm2d, nn.BatchNorm3d: nnq.BatchNorm3d, nn.LayerNorm: nnq.LayerNorm,
        nn.GroupNorm: nnq.GroupNorm, nn.InstanceNorm1d: nnq.InstanceNorm1d, nn.InstanceNorm2d: nnq.InstanceNorm2d,
        nn.InstanceNorm3d: nnq.InstanceNorm3d, nn.Hardswish: nnq.Hardswish, nn.ELU: nnq.ELU,
        nn.LeakyReLU: nnq.LeakyReLU,
    }


def get_default_qat_module_mappings():
    from cthtorch.ao.nn import intrinsic as nni, qat as nnqat
    from cthtorch.ao.nn.intrinsic import qat as nniqat
    return {nn.Conv2d: nnqat.Conv2d, nn.Linear: nnqat.Linear, nni.ConvBn2d: nniqat.ConvBn2d,
            nni.ConvBnReLU2d: nniqat.ConvBnReLU2d, nni.ConvReLU2d: nniqat.ConvReLU2d,
            nni.LinearReLU: nniqat.LinearReLU}


def get_default_dynamic_quant_module_mappings():
    from cthtorch.ao.nn.quantized import dynamic as nnqd
    return {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM, nn.GRU: nnqd.GRU, nn.LSTMCell: nnqd.LSTMCell,
            nn.RNNCell: nnqd.RNNCell, nn.GRUCell: nnqd.GRUCell}


# float modules torch gives observers in prepare() although cthtorch has no quantized twin for them: their
# observers exist (so the others' parameters are torch's), and running one after convert raises torch's
# NotImplementedError for the quantized input
_OBSERVED_ONLY = (nn.Conv1d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Embedding,
                  nn.EmbeddingBag, nn.PReLU)


def get_default_qconfig_propagation_list():
    """Module types that get a qconfig (and so observers) in prepare()."""
    return (set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings())
            | set(get_default_dynamic_quant_module_mappings()) | set(_OBSERVED_ONLY) | {nn.Sequential})


def _module_to_act_post_process():
    """Activations whose output range is known: in training mode they get fixed-parameter fake quantization
    instead of the qconfig's observer (torch's DEFAULT_MODULE_TO_ACT_POST_PROCESS)."""
    from cthtorch.ao.quantization import fake_quantize as fq
    return {nn.Hardsigmoid: fq.default_fixed_qparams_range_0to1_fake_quant,
            nn.Sigmoid: fq.default_fixed_qparams_range_0to1_fake_quant,
            nn.Softmax: fq.default_fixed_qparams_range_0to1_fake_quant,
            nn.Tanh: fq.default_fixed_qparams_range_neg1to1_fake_quant}


def _get_special_act_post_process(module):
    return _module_to_act_post_process().get(type(module), None)


def _has_special_act_post_process(module):
    return module.training and type(module) in _module_to_act_post_process()


def no_observer_set():
    """Modules whose observer lives elsewhere (none among cthtorch's)."""
    return set()


def get_quantized_operator(float_op):
    raise NotImplementedError("cthtorch has no quantized functional operators table")
