"""torch.nn.modules.batchnorm (import path kept for user code)."""
from cthtorch.nn.modules.layers import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase  # noqa: F401
from cthtorch.nn.modules.normalization import SyncBatchNorm  # noqa: F401
from cthtorch.nn.modules.lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401
