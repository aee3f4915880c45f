"""torch.nn.modules.upsampling (import path kept for user code)."""
from cthtorch.nn.modules.layers import Upsample  # noqa: F401
from cthtorch.nn.modules.misc import UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
