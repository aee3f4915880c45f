"""cthtorch.amp: autocast (state only; see autocast_mode) and GradScaler."""
from cthtorch.amp.autocast_mode import autocast, custom_fwd, custom_bwd, is_autocast_available  # noqa: F401
from cthtorch.amp.grad_scaler import GradScaler  # noqa: F401
from cthtorch.amp import autocast_mode, grad_scaler  # noqa: F401
