"""torch.nn.modules.instancenorm (import path kept for user code)."""
from cthtorch.nn.modules.layers import InstanceNorm1d, InstanceNorm2d  # noqa: F401
from cthtorch.nn.modules.normalization import InstanceNorm3d  # noqa: F401
