"""Converting conv weights to a memory format (channels_last) in place."""
import cthtorch


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight_data.resize_(weight_data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    # only 4-d weights have a channels_last layout, hence Conv2d / ConvTranspose2d
    return _convert(module, memory_format, (cthtorch.nn.Conv2d, cthtorch.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, (cthtorch.nn.Conv3d, cthtorch.nn.ConvTranspose3d))
