"""torch.cpu.amp: the deprecated CPU spellings of autocast and GradScaler,
forwarding to cthtorch.amp with torch's FutureWarnings."""
from cthtorch.amp._device_amp import cpu_GradScaler as GradScaler  # noqa: F401
from cthtorch.amp._device_amp import cpu_autocast as autocast  # noqa: F401
