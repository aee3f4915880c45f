"""torchvision.ops.ps_roi_align: position-sensitive RoIAlign (R-FCN): output channel c's bin (ph, pw) averages
bilinear samples of input channel (c * PH + ph) * PW + pw; the kernel is cthtorch._C._internal.ps_roi_align
(src/ATen/ATRoi.c)."""
from cthtorch import nn
from cthtorch._C import _internal
from cthtorch.vision.ops._utils import roi_input


def ps_roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1):
    """input [N, C_out * PH * PW, H, W]; boxes as for roi_align; the [K, C_out, PH, PW] pooled regions"""
    rois, output_size = roi_input(boxes, output_size)
    return _internal.ps_roi_align(input, rois, spatial_scale, output_size[0], output_size[1], sampling_ratio)


class PSRoIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    def forward(self, input, rois):
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio})")
