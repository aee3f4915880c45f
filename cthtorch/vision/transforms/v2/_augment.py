"""RandomErasing, CutMix and MixUp of v2. CutMix/MixUp work on a batch and its labels, as torchvision's:
labels become one-hot, mixed with the batch rolled by one; lambda is drawn from Beta(alpha, alpha) on torch's
generator."""
import math

import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms import transforms as v1
from cthtorch.vision.transforms.v2.functional import jpeg
from cthtorch.vision.transforms.v2._transform import (Transform, _RandomApplyTransform,
                                                      _find_labels_default_heuristic, _is_pure_tensor,
                                                      _needs_transform_list, _plain, query_size)
from cthtorch.utils import _pytree


class RandomErasing(_RandomApplyTransform):
    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        checked = v1.RandomErasing(p, scale, ratio, value, inplace)   # v1's argument checks
        super().__init__(p=p)
        self.scale, self.ratio, self.value, self.inplace = checked.scale, checked.ratio, checked.value, inplace

    def make_params(self, flat_inputs):
        img = next((x for x in flat_inputs if isinstance(x, cthtorch.Tensor)
                    and not isinstance(x, (tv_tensors.Mask, tv_tensors.BoundingBoxes))), None)
        if img is None:
            raise TypeError("RandomErasing() does not support PIL images.")
        value = v1.RandomErasing._fill_values(self, img.shape[-3])
        plain = _plain(img)
        i, j, h, w, v = v1.RandomErasing.get_params(plain, scale=self.scale, ratio=self.ratio, value=value)
        return dict(i=i, j=j, h=h, w=w, v=None if v is plain else v)   # v1 hands the image back on no fit

    def _image(self, img, params):
        if F._is_pil(img):
            raise TypeError("RandomErasing() does not support PIL images.")
        if params["v"] is None:
            return img
        return F.erase(img, params["i"], params["j"], params["h"], params["w"], params["v"], self.inplace)

    def _mask(self, mask, params):
        return mask


class _BaseMixUpCutMix(Transform):
    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        super().__init__()
        self.alpha = float(alpha)
        self._dist = cthtorch.distributions.Beta(cthtorch.tensor([alpha]), cthtorch.tensor([alpha]))
        self.num_classes = num_classes
        if labels_getter == "default":
            labels_getter = _find_labels_default_heuristic
        elif not callable(labels_getter):
            raise ValueError("labels_getter should either be 'default', a callable, or None, but got %s."
                             % labels_getter)
        self._labels_getter = labels_getter

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat, spec = _pytree.tree_flatten(inputs)
        needs = _needs_transform_list(flat)
        if any(F._is_pil(x) or isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)) for x in flat):
            raise ValueError("%s() does not support PIL images, bounding boxes and masks." % type(self).__name__)
        labels = self._labels_getter(inputs)
        if not isinstance(labels, cthtorch.Tensor):
            raise ValueError("The labels must be a tensor, but got %s instead." % type(labels))
        if labels.ndim not in (1, 2):
            raise ValueError("labels should be index based with shape (batch_size,) or probability based with "
                             "shape (batch_size, num_classes), but got a tensor of shape %s instead."
                             % (labels.shape,))
        if labels.ndim == 2 and self.num_classes is not None and labels.shape[-1] != self.num_classes:
            raise ValueError("When passing 2D labels, the number of elements in last dimension must match "
                             "num_classes: %d != %d. You can Leave num_classes to None."
                             % (labels.shape[-1], self.num_classes))
        if labels.ndim == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")
        params = dict(labels=labels, batch_size=labels.shape[0],
                      **self.make_params([x for x, n in zip(flat, needs) if n]))
        needs[next(i for i, x in enumerate(flat) if x is labels)] = True   # the labels are mixed too
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return _pytree.tree_unflatten(out, spec)

    def _check_image(self, inpt, batch_size):
        expected = 5 if isinstance(inpt, tv_tensors.Video) else 4
        if inpt.ndim != expected:
            raise ValueError("Expected a batched input with %d dims, but got %d dimensions instead."
                             % (expected, inpt.ndim))
        if inpt.shape[0] != batch_size:
            raise ValueError("The batch size of the image or video does not match the batch size of the labels: "
                             "%d != %d." % (inpt.shape[0], batch_size))

    def _mixup_label(self, label, lam):
        if label.ndim == 1:
            label = cthtorch.nn.functional.one_hot(label, num_classes=self.num_classes)
        if not label.dtype.is_floating_point:
            label = label.float()
        return label.roll(1, 0).mul_(1.0 - lam).add_(label.mul(lam))

    def transform(self, inpt, params):
        if inpt is params["labels"]:
            return self._mixup_label(inpt, params["lam"])
        if isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)) or _is_pure_tensor(inpt):
            self._check_image(inpt, params["batch_size"])
            out = self._mix(_plain(inpt), params)
            return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out
        return inpt


class MixUp(_BaseMixUpCutMix):
    """batch * lam + batch.roll(1, 0) * (1 - lam), the labels alike"""

    def make_params(self, flat_inputs):
        return dict(lam=float(self._dist.sample(())))

    def _mix(self, img, params):
        lam = params["lam"]
        return img.roll(1, 0).mul_(1.0 - lam).add_(img.mul(lam))


class CutMix(_BaseMixUpCutMix):
    """a box of area about (1 - lam) of each image replaced by the same box of the batch rolled by one; the
    labels mixed by the box's actual area"""

    def make_params(self, flat_inputs):
        lam = float(self._dist.sample(()))
        H, W = query_size(flat_inputs)
        r_x = cthtorch.randint(W, size=(1,))
        r_y = cthtorch.randint(H, size=(1,))
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * W), int(r * H)
        x1 = int(cthtorch.clamp(r_x - r_w_half, min=0))
        y1 = int(cthtorch.clamp(r_y - r_h_half, min=0))
        x2 = int(cthtorch.clamp(r_x + r_w_half, max=W))
        y2 = int(cthtorch.clamp(r_y + r_h_half, max=H))
        lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))
        return dict(box=(x1, y1, x2, y2), lam=lam_adjusted)

    def _mix(self, img, params):
        x1, y1, x2, y2 = params["box"]
        rolled = img.roll(1, 0)
        out = img.clone()
        out[..., y1:y2, x1:x2] = rolled[..., y1:y2, x1:x2]
        return out


class JPEG(Transform):
    """A JPEG encode/decode round trip at a quality drawn from quality (an int, or a [low, high] range)"""

    def __init__(self, quality):
        super().__init__()
        if isinstance(quality, int):
            if isinstance(quality, bool):
                raise TypeError("quality can't be bool")
            quality = [quality, quality]
        elif not isinstance(quality, (list, tuple)) or len(quality) != 2:
            raise ValueError("quality should be a sequence of length 2.")
        if not (isinstance(quality[0], int) and isinstance(quality[1], int) and 1 <= quality[0] <= quality[1] <= 100):
            raise ValueError("quality must be an integer from 1 to 100, got quality =%s" % (list(quality),))
        self.quality = list(quality)

    def make_params(self, flat_inputs):
        return dict(quality=int(cthtorch.randint(self.quality[0], self.quality[1] + 1, ()).item()))

    def _image(self, img, params):
        return jpeg(img, params["quality"])

    def _mask(self, mask, params):
        return mask
