"""torchvision.ops._utils: parameter grouping used by the reference training scripts."""
from cthtorch import nn


def split_normalization_params(model, norm_classes=None):
    """Two lists, (normalization layers' parameters, all others), so that the norm group can get its own
    weight decay. A module with children contributes only its own direct parameters to the second list."""
    if not norm_classes:
        norm_classes = [nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm,
                        nn.modules.instancenorm._InstanceNorm, nn.LocalResponseNorm]
    for t in norm_classes:
        if not issubclass(t, nn.Module):
            raise ValueError("Class %s is not a subclass of nn.Module." % t)
    classes = tuple(norm_classes)
    norm_params, other_params = [], []
    for module in model.modules():
        if next(module.children(), None):
            other_params.extend(p for p in module.parameters(recurse=False) if p.requires_grad)
        elif isinstance(module, classes):
            norm_params.extend(p for p in module.parameters() if p.requires_grad)
        else:
            other_params.extend(p for p in module.parameters() if p.requires_grad)
    return norm_params, other_params
