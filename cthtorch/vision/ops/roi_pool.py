"""torchvision.ops.roi_pool: each box's region of a feature map max-pooled to a fixed grid (Fast R-CNN's
RoIPool); the kernel is cthtorch._C._internal.roi_pool (src/ATen/ATRoi.c)."""
from cthtorch import nn
from cthtorch._C import _internal
from cthtorch.vision.ops._utils import roi_input


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """boxes: Tensor[K, 5] (batch index, x1, y1, x2, y2) or a list of per-image Tensor[L, 4];
    the [K, C, output_size] pooled regions"""
    rois, output_size = roi_input(boxes, output_size)
    output, _ = _internal.roi_pool(input, rois, spatial_scale, output_size[0], output_size[1])
    return output


class RoIPool(nn.Module):
    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
