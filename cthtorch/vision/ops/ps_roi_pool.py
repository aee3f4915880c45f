"""torchvision.ops.ps_roi_pool: position-sensitive RoI pooling (R-FCN): output channel c's bin (ph, pw) is the
mean of input channel (c * PH + ph) * PW + pw over the bin; the kernel is cthtorch._C._internal.ps_roi_pool
(src/ATen/ATRoi.c)."""
from cthtorch import nn
from cthtorch._C import _internal
from cthtorch.vision.ops._utils import roi_input


def ps_roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """input [N, C_out * PH * PW, H, W]; boxes as for roi_pool; the [K, C_out, PH, PW] pooled regions"""
    rois, output_size = roi_input(boxes, output_size)
    return _internal.ps_roi_pool(input, rois, spatial_scale, output_size[0], output_size[1])


class PSRoIPool(nn.Module):
    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
