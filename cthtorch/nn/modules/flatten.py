"""torch.nn.modules.flatten (import path kept for user code)."""
from cthtorch.nn.modules.layers import Flatten, Unflatten  # noqa: F401
