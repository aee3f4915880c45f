"""torchvision.ops: the layers the model zoo is built from, box geometry and NMS (boxes), and the reference
scripts' helpers (_utils)."""
from cthtorch.vision.ops import _utils  # noqa: F401
from cthtorch.vision.ops.boxes import (batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image,  # noqa: F401
                                       generalized_box_iou, masks_to_boxes, nms, remove_small_boxes)
from cthtorch.vision.ops.misc import (Conv2dNormActivation, Conv3dNormActivation, FrozenBatchNorm2d,  # noqa: F401
                                      MLP, Permute, SqueezeExcitation)
from cthtorch.vision.ops.stochastic_depth import StochasticDepth, stochastic_depth  # noqa: F401
from cthtorch.vision.ops.roi_align import RoIAlign, roi_align  # noqa: F401
from cthtorch.vision.ops.roi_pool import RoIPool, roi_pool  # noqa: F401
