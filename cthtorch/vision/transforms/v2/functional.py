"""torchvision.transforms.v2.functional: the v1 kernels under their v1 and v2 names, with v2's to_image,
to_dtype and the bounding box format conversion."""
from cthtorch.vision.transforms.functional import *  # noqa: F401,F403
from cthtorch.vision.transforms.functional import (InterpolationMode, hflip, vflip, to_pil_image,  # noqa: F401
                                                   pil_to_tensor, get_dimensions, get_image_size, _size_of)
from cthtorch.vision.transforms.v2._geometry import convert_bounding_box_format  # noqa: F401
from cthtorch.vision.transforms.v2._type_conversion import to_image, to_dtype  # noqa: F401

horizontal_flip = hflip
vertical_flip = vflip


def get_size(inpt):
    """[height, width] of an image, mask or boxes (their canvas)"""
    from cthtorch.vision import tv_tensors
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return list(inpt.canvas_size)
    return list(_size_of(inpt))
