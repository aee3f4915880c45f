"""The v2 Transform base: a transform takes any nested structure (tuples, lists, dicts) of images (PIL images,
tensors, tv_tensors.Image), masks, bounding boxes and other values, draws its random parameters once per call
and applies them to every leaf by its kind, passing the leaves it does not transform through."""
import sys
from enum import Enum

import cthtorch
from cthtorch.utils import _pytree
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F


def _is_pure_tensor(x):
    return isinstance(x, cthtorch.Tensor) and not isinstance(x, tv_tensors.TVTensor)


def _kind(x):
    """'image' (PIL, tv_tensors.Image/Video or a tensor taken as the image), 'mask', 'boxes' or None"""
    if isinstance(x, tv_tensors.BoundingBoxes):
        return "boxes"
    if isinstance(x, tv_tensors.Mask):
        return "mask"
    if F._is_pil(x) or isinstance(x, cthtorch.Tensor):
        return "image"
    return None


def _is_array(x):
    # a numpy array (numpy is not imported for it: if it is not loaded, x is no array)
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def _needs_transform_list(flat_inputs, arrays=False):
    # as torchvision: a plain tensor is the image only when no PIL/Image/Video is present, and only the first one;
    # numpy arrays only for the transforms that take them (arrays=True: ToImage, ToTensor)
    transform_pure = not any(F._is_pil(x) or isinstance(x, (tv_tensors.Image, tv_tensors.Video))
                             for x in flat_inputs)
    needs = []
    for x in flat_inputs:
        need = _kind(x) is not None or (arrays and _is_array(x))
        if need and _is_pure_tensor(x):
            need, transform_pure = transform_pure, False
        needs.append(need)
    return needs


def query_size(flat_inputs):
    """(height, width) shared by the images, masks and boxes of a sample"""
    sizes = set()
    for x in flat_inputs:
        if isinstance(x, tv_tensors.BoundingBoxes):
            sizes.add(tuple(x.canvas_size))
        elif _kind(x) is not None:
            sizes.add(tuple(F._size_of(x)))
    if not sizes:
        raise TypeError("No image, video, mask or bounding box was found in the sample")
    if len(sizes) > 1:
        raise ValueError("Found multiple HxW dimensions in the sample: %s" % ", ".join(sorted(map(str, sizes))))
    return sizes.pop()


def _find_labels_default_heuristic(inputs):
    """the labels of (image, labels) or (image, {"labels": ...}), or a dict's "labels" key (else the first key
    holding "label"), as torchvision's default labels_getter finds them"""
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if isinstance(inputs, cthtorch.Tensor):
        return inputs
    if not isinstance(inputs, dict):
        raise ValueError("When using the default labels_getter, the input passed to forward must be a dictionary "
                         "or a two-tuple whose second item is a dictionary or a tensor, but got %s instead."
                         % (inputs,))
    key = next((k for k in inputs if isinstance(k, str) and k.lower() == "labels"), None)
    if key is None:
        key = next((k for k in inputs if isinstance(k, str) and "label" in k.lower()), None)
    if key is None:
        raise ValueError("Could not infer where the labels are in the sample. Try passing a callable as the "
                         "labels_getter parameter?If there are no labels in the sample by design, pass "
                         "labels_getter=None.")
    return inputs[key]


def _plain(x):
    return x.as_subclass(cthtorch.Tensor) if isinstance(x, tv_tensors.TVTensor) else x


class Transform(cthtorch.nn.Module):
    """Subclasses set make_params (one draw per call) and _image / _mask / _boxes (what happens to each kind;
    by default masks are treated as images and boxes pass through)."""

    _transforms_arrays = False   # whether numpy arrays are inputs to transform (torchvision's _transformed_types)

    def forward(self, *inputs):
        flat, spec = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        needs = _needs_transform_list(flat, self._transforms_arrays)
        # subclasses written for torchvision < 0.21 override the private names
        make = self._get_params if hasattr(self, "_get_params") else self.make_params
        apply = self._transform if hasattr(self, "_transform") else self.transform
        params = make([x for x, n in zip(flat, needs) if n])
        out = [apply(x, params) if n else x for x, n in zip(flat, needs)]
        return _pytree.tree_unflatten(out, spec)

    def make_params(self, flat_inputs):
        return {}

    def transform(self, inpt, params):
        kind = _kind(inpt)
        params = dict(params, input_type=type(inpt))   # the kernels see plain tensors; a fill dict is by type
        if kind == "boxes":
            return self._boxes(inpt, params)
        if kind == "mask":
            squeeze = inpt.ndim == 2   # a (H, W) mask goes through the image kernels as (1, H, W)
            x = _plain(inpt)
            out = self._mask(x.unsqueeze(0) if squeeze else x, params)
            return tv_tensors.wrap(out.squeeze(0) if squeeze else out, like=inpt)
        out = self._image(_plain(inpt), params)
        if isinstance(inpt, tv_tensors.TVTensor) and isinstance(out, cthtorch.Tensor):
            out = tv_tensors.wrap(out, like=inpt)
        return out

    def _image(self, img, params):
        return img

    def _mask(self, mask, params):
        return self._image(mask, params)

    def _boxes(self, boxes, params):
        return boxes

    def extra_repr(self):
        # torchvision shows only the plain-valued attributes (a dtype or a callable is left out)
        return ", ".join("%s=%s" % (k, v) for k, v in vars(self).items()
                         if not k.startswith("_") and k != "training"
                         and isinstance(v, (bool, int, float, str, tuple, list, Enum)))


class _RandomApplyTransform(Transform):
    """Applied with probability p (one draw per call, before any parameter)"""

    def __init__(self, p=0.5):
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        super().__init__()
        self.p = p

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        if cthtorch.rand(1) >= self.p:
            return sample
        return super().forward(*inputs)


class _ColorTransform(Transform):
    """Colour transforms leave masks and boxes as they are"""

    def _mask(self, mask, params):
        return mask
