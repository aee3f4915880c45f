"""torch.ao.nn.intrinsic fused modules: Sequentials of modules that quantize as one (conv + bn + relu,
linear + relu), which fuse_modules builds and convert / prepare_qat swap as a unit."""
from cthtorch import nn

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d", "ConvBn2d", "ConvBn3d",
           "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "BNReLU2d", "BNReLU3d", "LinearBn1d"]


class _FusedModule(nn.Sequential):
    pass


def _fused(name, *kinds):
    """A fused module type taking modules of the given kinds, in order (torch's type assertion)."""
    def __init__(self, *mods):
        if len(mods) != len(kinds) or not all(type(m) is k for m, k in zip(mods, kinds)):
            raise AssertionError("Incorrect types for input modules{}".format("".join(
                "{}".format(type(m)) for m in mods)))
        _FusedModule.__init__(self, *mods)
    return type(name, (_FusedModule,), {"__init__": __init__, "__module__": __name__,
                                        "__doc__": "%s fused for quantization." % " + ".join(k.__name__ for k in kinds)})


ConvReLU1d = _fused("ConvReLU1d", nn.Conv1d, nn.ReLU)
ConvReLU2d = _fused("ConvReLU2d", nn.Conv2d, nn.ReLU)
ConvReLU3d = _fused("ConvReLU3d", nn.Conv3d, nn.ReLU)
LinearReLU = _fused("LinearReLU", nn.Linear, nn.ReLU)
ConvBn1d = _fused("ConvBn1d", nn.Conv1d, nn.BatchNorm1d)
ConvBn2d = _fused("ConvBn2d", nn.Conv2d, nn.BatchNorm2d)
ConvBn3d = _fused("ConvBn3d", nn.Conv3d, nn.BatchNorm3d)
ConvBnReLU1d = _fused("ConvBnReLU1d", nn.Conv1d, nn.BatchNorm1d, nn.ReLU)
ConvBnReLU2d = _fused("ConvBnReLU2d", nn.Conv2d, nn.BatchNorm2d, nn.ReLU)
ConvBnReLU3d = _fused("ConvBnReLU3d", nn.Conv3d, nn.BatchNorm3d, nn.ReLU)
BNReLU2d = _fused("BNReLU2d", nn.BatchNorm2d, nn.ReLU)
BNReLU3d = _fused("BNReLU3d", nn.BatchNorm3d, nn.ReLU)
LinearBn1d = _fused("LinearBn1d", nn.Linear, nn.BatchNorm1d)
