"""Conversions between PIL images, tensors and tv_tensors, dtype conversion, Normalize and Lambda (v2)."""
import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms import transforms as v1
from cthtorch.vision.transforms.v2._transform import Transform, _ColorTransform, _is_array, _kind, _plain


def to_image(inpt):
    """a PIL image, numpy array or tensor as a tv_tensors.Image (C, H, W), keeping the dtype (no scaling)"""
    import numpy as np
    if isinstance(inpt, np.ndarray):
        output = cthtorch.from_numpy(np.atleast_3d(inpt)).permute((2, 0, 1)).contiguous()
    elif F._is_pil(inpt):
        output = F.pil_to_tensor(inpt)
    elif isinstance(inpt, cthtorch.Tensor):
        output = _plain(inpt)
    else:
        raise TypeError("Input can either be a pure Tensor, a numpy array, or a PIL image, but got %s instead."
                        % type(inpt))
    return tv_tensors.Image(output)


class ToImage(Transform):
    _transforms_arrays = True

    def transform(self, inpt, params):
        if _kind(inpt) != "image" and not _is_array(inpt):
            return inpt
        return to_image(inpt)


class ToTensor(Transform):
    """v1's to_tensor (a float tensor in [0, 1]) on PIL images and arrays; deprecated in v2, with its warning"""

    def __init__(self):
        import warnings
        warnings.warn("The transform `ToTensor()` is deprecated and will be removed in a future release. Instead, "
                      "please use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.Output is "
                      "equivalent up to float precision.")
        super().__init__()

    _transforms_arrays = True

    def transform(self, inpt, params):
        return F.to_tensor(inpt) if F._is_pil(inpt) or _is_array(inpt) else inpt


class Identity(Transform):
    def transform(self, inpt, params):
        return inpt


class PILToTensor(Transform):
    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt) if F._is_pil(inpt) else inpt


class ToPureTensor(Transform):
    def forward(self, *inputs):
        from cthtorch.utils import _pytree
        flat, spec = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        return _pytree.tree_unflatten([_plain(x) for x in flat], spec)


class ToPILImage(Transform):
    def __init__(self, mode=None):
        super().__init__()
        self.mode = mode

    def transform(self, inpt, params):
        if _kind(inpt) != "image" or F._is_pil(inpt):
            return inpt
        return F.to_pil_image(_plain(inpt), mode=self.mode)


def to_dtype(inpt, dtype=cthtorch.float32, scale=False):
    """the image in dtype; with scale=True its values move to dtype's range as convert_image_dtype does"""
    plain = _plain(inpt)
    out = F.convert_image_dtype(plain, dtype) if scale else plain.to(dtype)
    return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out


class ToDtype(Transform):
    """dtype: one dtype for images (and plain tensors), or a dict {type: dtype} (None keeps the dtype);
    only images are rescaled, as torchvision's"""

    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, (dict, cthtorch.dtype)):
            raise ValueError("dtype must be a dict or a torch.dtype, got %s instead" % type(dtype))
        if isinstance(dtype, dict) and cthtorch.Tensor in dtype and any(
                cls in dtype for cls in (tv_tensors.Image, tv_tensors.Video)):
            import warnings
            warnings.warn("Got `dtype` values for `torch.Tensor` and either `tv_tensors.Image` or "
                          "`tv_tensors.Video`. Note that a plain `torch.Tensor` will *not* be transformed by this "
                          "(or any other transformation) in case a `tv_tensors.Image` or `tv_tensors.Video` is "
                          "present in the input.")
        self.dtype, self.scale = dtype, scale

    def transform(self, inpt, params):
        if F._is_pil(inpt):
            return inpt
        if isinstance(self.dtype, cthtorch.dtype):
            if not (isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)) or not isinstance(
                    inpt, tv_tensors.TVTensor)):
                return inpt   # masks and boxes keep their dtype unless named in a dict
            dtype = self.dtype
        elif type(inpt) in self.dtype:
            dtype = self.dtype[type(inpt)]
        elif "others" in self.dtype:
            dtype = self.dtype["others"]
        else:
            raise ValueError("No dtype was specified for type %s. If you only need to convert the dtype of images "
                             "or videos, you can just pass e.g. dtype=torch.float32. If you're passing a dict as "
                             "dtype, you can use \"others\" as a catch-all key e.g. dtype={tv_tensors.Mask: "
                             "torch.int64, \"others\": None} to pass-through the rest of the inputs." % type(inpt))
        if dtype is None:
            return inpt
        is_image = isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)) or not isinstance(
            inpt, tv_tensors.TVTensor)
        return to_dtype(inpt, dtype, scale=self.scale and is_image)


class ConvertImageDtype(ToDtype):
    def __init__(self, dtype=cthtorch.float32):
        super().__init__(dtype, scale=True)


class Normalize(_ColorTransform):
    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = list(mean), list(std), inplace

    def _image(self, img, params):
        if F._is_pil(img):
            raise TypeError("Normalize() does not support PIL images.")
        return F.normalize(img, self.mean, self.std, self.inplace)


class Lambda(Transform):
    """lambd applied to the leaves of the types given (all leaves by default)"""

    def __init__(self, lambd, *types):
        super().__init__()
        if not callable(lambd):
            raise TypeError("Argument lambd should be callable, got %s" % repr(type(lambd).__name__))
        self.lambd, self.types = lambd, types or (object,)

    def forward(self, *inputs):
        from cthtorch.utils import _pytree
        flat, spec = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        return _pytree.tree_unflatten([self.lambd(x) if isinstance(x, self.types) else x for x in flat], spec)

    def extra_repr(self):
        return "%s, types=%s" % (getattr(self.lambd, "__name__", self.lambd), [t.__name__ for t in self.types])


class LinearTransformation(Transform):
    """v1's whitening (flatten, subtract mean_vector, multiply by transformation_matrix) on tensor images;
    PIL images are refused, boxes and masks pass through"""

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        self._v1 = v1.LinearTransformation(transformation_matrix, mean_vector)   # its argument checks
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector

    def forward(self, *inputs):
        from cthtorch.utils import _pytree
        flat, _ = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        if any(F._is_pil(x) for x in flat):
            raise TypeError("LinearTransformation() does not support PIL images.")
        return super().forward(*inputs)

    def _image(self, img, params):
        return self._v1(img)

    def _mask(self, mask, params):
        return mask
