"""torchvision.ops: the layers the model zoo is built from, box geometry and NMS (boxes), RoI pooling, the box
and focal losses, FPN, DropBlock, and the reference scripts' helpers (_utils)."""
import sys as _sys

from cthtorch.vision.ops import _utils, box_losses  # noqa: F401
from cthtorch.vision.ops.box_losses import (complete_box_iou_loss, distance_box_iou_loss,  # noqa: F401
                                            generalized_box_iou_loss, sigmoid_focal_loss)
from cthtorch.vision.ops.boxes import (batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image,  # noqa: F401
                                       complete_box_iou, distance_box_iou, generalized_box_iou, masks_to_boxes, nms,
                                       remove_small_boxes)
from cthtorch.vision.ops.deform_conv import DeformConv2d, deform_conv2d  # noqa: F401
from cthtorch.vision.ops.drop_block import DropBlock2d, DropBlock3d, drop_block2d, drop_block3d  # noqa: F401
from cthtorch.vision.ops.feature_pyramid_network import FeaturePyramidNetwork  # noqa: F401
from cthtorch.vision.ops.misc import (Conv2dNormActivation, Conv3dNormActivation, FrozenBatchNorm2d,  # noqa: F401
                                      MLP, Permute, SqueezeExcitation)
from cthtorch.vision.ops.poolers import MultiScaleRoIAlign  # noqa: F401
from cthtorch.vision.ops.ps_roi_align import PSRoIAlign, ps_roi_align  # noqa: F401
from cthtorch.vision.ops.ps_roi_pool import PSRoIPool, ps_roi_pool  # noqa: F401
from cthtorch.vision.ops.roi_align import RoIAlign, roi_align  # noqa: F401
from cthtorch.vision.ops.roi_pool import RoIPool, roi_pool  # noqa: F401
from cthtorch.vision.ops.stochastic_depth import StochasticDepth, stochastic_depth  # noqa: F401

# torchvision's one-loss-per-file module paths (from torchvision.ops.focal_loss import sigmoid_focal_loss)
for _name in ("focal_loss", "giou_loss", "diou_loss", "ciou_loss"):
    _sys.modules[f"{__name__}.{_name}"] = box_losses
    globals()[_name] = box_losses
del _name
