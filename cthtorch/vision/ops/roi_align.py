"""torchvision.ops.roi_align: each box's region of a feature map resampled to a fixed grid by averaging
bilinear samples per bin (Mask R-CNN's RoIAlign); the kernel is cthtorch._C._internal.roi_align (src/ATen/ATRoi.c)."""
from cthtorch import nn
from cthtorch._C import _internal
from cthtorch.vision.ops._utils import roi_input


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """boxes: Tensor[K, 5] (batch index, x1, y1, x2, y2) or a list of per-image Tensor[L, 4];
    the [K, C, output_size] pooled regions"""
    rois, output_size = roi_input(boxes, output_size)
    return _internal.roi_align(input, rois, spatial_scale, output_size[0], output_size[1], sampling_ratio, aligned)


class RoIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")
