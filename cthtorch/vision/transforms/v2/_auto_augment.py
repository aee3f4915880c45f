"""AutoAugment, RandAugment, TrivialAugmentWide and AugMix of v2: the v1 policies' op spaces and functional
ops, drawn as v2 draws them (0-d randint for ops and bins, a rand() <= 0.5 for signs and rand() <= p for
AutoAugment's steps; solarize's thresholds are fractions of the image's maximum), applied to the sample's one
image or video; other leaves pass through, boxes and masks are refused as torchvision refuses them."""
import cthtorch
from cthtorch.utils import _pytree
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import autoaugment as v1
from cthtorch.vision.transforms.functional import InterpolationMode
from cthtorch.vision.transforms.v2 import functional as F
from cthtorch.vision.transforms.v2._transform import Transform, _needs_transform_list, _plain

AutoAugmentPolicy = v1.AutoAugmentPolicy


def _v2_space(space, num_bins):
    """a v1 op space as v2 has it: no magnitudes (None) for the ops without, solarize as a fraction"""
    out = {}
    for name, (magnitudes, signed) in space.items():
        if magnitudes.ndim == 0:
            magnitudes = None
        elif name == "Solarize":
            magnitudes = cthtorch.linspace(1.0, 0.0, num_bins)
        out[name] = (magnitudes, signed)
    return out


def _fill_for_type(fill, input_type):
    """fill, or a {type: fill, "others": fill} dict's entry for input_type"""
    if isinstance(fill, dict):
        for cls in input_type.__mro__:
            if cls in fill:
                return fill[cls]
        return fill.get("others")
    return fill


class _AutoAugmentBase(Transform):
    _input_type = cthtorch.Tensor   # the type of the sample's image, set by forward

    def __init__(self, *, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.interpolation = F._interp_mode(interpolation)
        self.fill = fill

    def _random_item(self, space):
        keys = tuple(space)
        key = keys[int(cthtorch.randint(len(keys), ()))]
        return key, space[key]

    def _signed(self, magnitude, signed):
        if signed and cthtorch.rand(()) <= 0.5:
            magnitude = -magnitude
        return magnitude

    def _extract(self, inputs):
        flat, spec = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        found = []
        for i, (x, need) in enumerate(zip(flat, _needs_transform_list(flat))):
            if isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)):
                raise TypeError(f"Inputs of type {type(x).__name__} are not supported by {type(self).__name__}()")
            if need:
                found.append(i)
        if not found:
            raise TypeError("Found no image in the sample.")
        if len(found) > 1:
            raise TypeError("Auto augment transformations are only properly defined for a single image or video, "
                            f"but found {len(found)}.")
        return flat, spec, found[0]

    def _apply(self, image, name, magnitude):
        # a fill dict is looked up by the sample's image type (AugMix's by the plain tensor it mixes)
        fill = _fill_for_type(self.fill, cthtorch.Tensor if isinstance(self, AugMix) else self._input_type)
        if name == "Solarize":   # the fraction of the image's maximum (255 for PIL images)
            bound = F._bound(image) if isinstance(image, cthtorch.Tensor) else 255.0
            return F.solarize(image, bound * magnitude)
        if name == "Posterize":
            return F.posterize(image, int(magnitude))
        if name == "Equalize":
            return F.equalize(image)
        return v1._apply_op(image, name, magnitude, self.interpolation, fill)

    def forward(self, *inputs):
        flat, spec, idx = self._extract(inputs)
        original = flat[idx]
        self._input_type = type(original)
        image = _plain(original)
        height, width = F.get_size(image)
        out = self._augment(image, height, width)
        if isinstance(original, tv_tensors.TVTensor):
            out = tv_tensors.wrap(out, like=original)
        flat[idx] = out
        return _pytree.tree_unflatten(flat, spec)


class AutoAugment(_AutoAugmentBase):
    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        self.policy = policy
        self._policies = v1._policies(policy)

    def _augment(self, image, height, width):
        space = _v2_space(v1.AutoAugment._augmentation_space(None, 10, (height, width)), 10)
        policy = self._policies[int(cthtorch.randint(len(self._policies), ()))]
        for name, probability, bin_ in policy:
            if not cthtorch.rand(()) <= probability:
                continue
            magnitudes, signed = space[name]
            magnitude = self._signed(float(magnitudes[bin_]), signed) if magnitudes is not None else 0.0
            image = self._apply(image, name, magnitude)
        return image


class RandAugment(_AutoAugmentBase):
    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        if not isinstance(num_ops, int) or num_ops < 0:
            raise ValueError(f"num_ops should be a non-negative integer, but got {num_ops} instead.")
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins

    def _augment(self, image, height, width):
        space = _v2_space(v1.RandAugment._augmentation_space(None, self.num_magnitude_bins, (height, width)),
                          self.num_magnitude_bins)
        for _ in range(self.num_ops):
            name, (magnitudes, signed) = self._random_item(space)
            magnitude = self._signed(float(magnitudes[self.magnitude]), signed) if magnitudes is not None else 0.0
            image = self._apply(image, name, magnitude)
        return image


class TrivialAugmentWide(_AutoAugmentBase):
    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        self.num_magnitude_bins = num_magnitude_bins

    def _augment(self, image, height, width):
        n = self.num_magnitude_bins
        space = _v2_space(v1.TrivialAugmentWide._augmentation_space(None, n), n)
        name, (magnitudes, signed) = self._random_item(space)
        if magnitudes is not None:
            magnitude = self._signed(float(magnitudes[int(cthtorch.randint(n, ()))]), signed)
        else:
            magnitude = 0.0
        return self._apply(image, name, magnitude)


class AugMix(_AutoAugmentBase):
    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        v1._augmix_args(self, severity, mixture_width, chain_depth, alpha, all_ops)

    def _sample_dirichlet(self, params):
        return cthtorch._sample_dirichlet(params)

    def _augment(self, image, height, width):
        pil = not isinstance(image, cthtorch.Tensor)
        img = F.pil_to_tensor(image) if pil else image
        space = _v2_space(v1.AugMix._augmentation_space(self, self._PARAMETER_MAX, (height, width)),
                          self._PARAMETER_MAX)

        def step(aug):
            name, (magnitudes, signed) = self._random_item(space)
            magnitude = 0.0
            if magnitudes is not None:
                magnitude = self._signed(float(magnitudes[int(cthtorch.randint(self.severity, ()))]), signed)
            return self._apply(aug, name, magnitude)
        mix = v1._augmix(self, img, step)
        return F.to_pil_image(mix) if pil else mix
