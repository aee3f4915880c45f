"""torchvision.tv_tensors: tensor subclasses that tell transforms.v2 what a tensor holds (an image, a mask,
bounding boxes), so each is transformed by its kind. As torchvision's, an op on one returns a plain tensor
(the meaning is not kept by arithmetic); clone/to/detach/requires_grad_ keep the subclass and its metadata."""
from enum import Enum

import cthtorch

__all__ = ["TVTensor", "Image", "Video", "Mask", "BoundingBoxes", "BoundingBoxFormat", "wrap"]

# the Tensor methods whose result is the same data, so it keeps the subclass (torchvision's
# _FORCE_TORCHFUNCTION_SUBCLASS); matched by identity, so torch.clone(img) or img.float() give plain tensors as
# torchvision's do
_KEEP_SUBCLASS = {cthtorch.Tensor.clone, cthtorch.Tensor.to, cthtorch.Tensor.detach, cthtorch.Tensor.requires_grad_,
                  cthtorch.Tensor.pin_memory}


class TVTensor(cthtorch.Tensor):
    @classmethod
    def _wrap(cls, tensor):
        return tensor.as_subclass(cls)

    @staticmethod
    def _to_tensor(data, dtype=None, device=None, requires_grad=None):
        if requires_grad is None:
            requires_grad = data.requires_grad if isinstance(data, cthtorch.Tensor) else False
        return cthtorch.as_tensor(data, dtype=dtype, device=device).requires_grad_(requires_grad)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with cthtorch._C.DisableTorchFunctionSubclass():
            output = func(*args, **(kwargs or {}))
        if func in _KEEP_SUBCLASS and args and isinstance(args[0], cls) and isinstance(output, cthtorch.Tensor):
            return wrap(output, like=args[0])
        if isinstance(output, cls):
            # an in-place op or a no-op conversion (add_, float() of a float image) hands back the tv_tensor
            # itself; torchvision unwraps it
            return output.as_subclass(cthtorch.Tensor)
        return output

    def __deepcopy__(self, memo):
        # as torchvision's and a plain tensor's deepcopy: a new leaf, outside the graph (a bare clone is not)
        return self.detach().clone().requires_grad_(self.requires_grad)


class Image(TVTensor):
    """A (..., C, H, W) image; a PIL image or a 2-d tensor becomes (C, H, W) as torchvision's does."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        from cthtorch.vision.transforms import functional as F
        if F._is_pil(data):
            data = F.pil_to_tensor(data)
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim < 2:
            raise ValueError
        if tensor.ndim == 2:
            tensor = tensor.unsqueeze(0)
        return tensor.as_subclass(cls)


class Video(TVTensor):
    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim < 4:
            raise ValueError
        return tensor.as_subclass(cls)


class Mask(TVTensor):
    """A segmentation or detection mask, (..., H, W): geometric transforms move it with nearest interpolation,
    colour transforms leave it alone."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        from cthtorch.vision.transforms import functional as F
        if F._is_pil(data):
            data = F.pil_to_tensor(data)   # (1, H, W), as torchvision's
        return cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad).as_subclass(cls)


class BoundingBoxFormat(Enum):
    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"


class BoundingBoxes(TVTensor):
    """(N, 4) boxes in `format` on an image of canvas_size (height, width); geometric transforms move them."""

    format: BoundingBoxFormat
    canvas_size: tuple

    @classmethod
    def _wrap(cls, tensor, *, format, canvas_size, check_dims=True):
        if check_dims:
            if tensor.ndim == 1:
                tensor = tensor.unsqueeze(0)
            elif tensor.ndim != 2:
                raise ValueError("Expected a 1D or 2D tensor, got %dD" % tensor.ndim)
        if isinstance(format, str):
            format = BoundingBoxFormat[format.upper()]
        boxes = tensor.as_subclass(cls)
        boxes.format = format
        boxes.canvas_size = tuple(canvas_size)
        return boxes

    def __new__(cls, data, *, format, canvas_size, dtype=None, device=None, requires_grad=None):
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        return cls._wrap(tensor, format=format, canvas_size=canvas_size)

    def __repr__(self):
        body = cthtorch.Tensor.__repr__(self)
        return body[:-1] + ", format=%s, canvas_size=%s)" % (self.format, self.canvas_size)


def wrap(wrappee, *, like, **kwargs):
    """wrappee as a tv_tensor of like's type, with like's metadata unless given in kwargs."""
    if isinstance(like, BoundingBoxes):
        return BoundingBoxes._wrap(wrappee, format=kwargs.get("format", like.format),
                                   canvas_size=kwargs.get("canvas_size", like.canvas_size), check_dims=False)
    return wrappee.as_subclass(type(like))
