"""torchvision.ops: the layers the model zoo is built from, and the reference scripts' helpers (_utils)."""
from cthtorch.vision.ops import _utils  # noqa: F401
from cthtorch.vision.ops.misc import (Conv2dNormActivation, Conv3dNormActivation, FrozenBatchNorm2d,  # noqa: F401
                                      MLP, Permute, SqueezeExcitation)
from cthtorch.vision.ops.stochastic_depth import StochasticDepth, stochastic_depth  # noqa: F401
