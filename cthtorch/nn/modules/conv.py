"""torch.nn.modules.conv: the convolution modules (import path kept for user code)."""
from cthtorch.nn.modules.layers import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, _ConvNd  # noqa: F401
from cthtorch.nn.modules.conv3d import Conv3d, ConvTranspose3d  # noqa: F401
from cthtorch.nn.modules.lazy import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,  # noqa: F401
                                      LazyConvTranspose2d, LazyConvTranspose3d)
