"""torch.nn.modules.linear (import path kept for user code)."""
from cthtorch.nn.modules.layers import Bilinear, Identity, Linear  # noqa: F401
from cthtorch.nn.modules.lazy import LazyLinear  # noqa: F401
