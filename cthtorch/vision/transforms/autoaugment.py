"""torchvision.transforms.autoaugment: AutoAugment (the learned ImageNet, CIFAR10 and SVHN policies),
RandAugment, TrivialAugmentWide and AugMix draw image ops and magnitude bins from the global generator in
torchvision's order, so a seeded run picks the same ops, and apply them with the functional ops."""
import math
from enum import Enum

import cthtorch
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms.functional import InterpolationMode


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


def _shear(img, degrees_x, degrees_y, interpolation, fill):
    # sheared about the top-left corner, as the augmentation papers' PIL transform does
    return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=[degrees_x, degrees_y],
                    interpolation=interpolation, fill=fill, center=[0, 0])


def _translate(img, dx, dy, interpolation, fill):
    return F.affine(img, angle=0.0, translate=[dx, dy], scale=1.0, shear=[0.0, 0.0],
                    interpolation=interpolation, fill=fill)


# op name -> f(img, magnitude, interpolation, fill); shear magnitudes are slopes (tan of the angle)
_OPS = {
    "Identity": lambda img, m, interp, fill: img,
    "ShearX": lambda img, m, interp, fill: _shear(img, math.degrees(math.atan(m)), 0.0, interp, fill),
    "ShearY": lambda img, m, interp, fill: _shear(img, 0.0, math.degrees(math.atan(m)), interp, fill),
    "TranslateX": lambda img, m, interp, fill: _translate(img, int(m), 0, interp, fill),
    "TranslateY": lambda img, m, interp, fill: _translate(img, 0, int(m), interp, fill),
    "Rotate": lambda img, m, interp, fill: F.rotate(img, m, interpolation=interp, fill=fill),
    "Brightness": lambda img, m, interp, fill: F.adjust_brightness(img, 1.0 + m),
    "Color": lambda img, m, interp, fill: F.adjust_saturation(img, 1.0 + m),
    "Contrast": lambda img, m, interp, fill: F.adjust_contrast(img, 1.0 + m),
    "Sharpness": lambda img, m, interp, fill: F.adjust_sharpness(img, 1.0 + m),
    "Posterize": lambda img, m, interp, fill: F.posterize(img, int(m)),
    "Solarize": lambda img, m, interp, fill: F.solarize(img, m),
    "AutoContrast": lambda img, m, interp, fill: F.autocontrast(img),
    "Equalize": lambda img, m, interp, fill: F.equalize(img),
    "Invert": lambda img, m, interp, fill: F.invert(img),
}


def _apply_op(img, op_name, magnitude, interpolation, fill):
    op = _OPS.get(op_name)
    if op is None:
        raise ValueError(f"The provided operator {op_name} is not recognized.")
    return op(img, magnitude, interpolation, fill)


def _fill_list(img, fill):
    """A number fill becomes one float per channel for tensor images; PIL images take it as given."""
    if not isinstance(img, cthtorch.Tensor) or fill is None:
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_image_num_channels(img)
    return [float(f) for f in fill]


def _posterize_bits(num_bins, lowest_bits):
    """Bits kept per bin: 8 at bin 0 falling evenly to 8 - lowest_bits at the last bin, rounded half to even."""
    return 8 - (cthtorch.arange(num_bins) / ((num_bins - 1) / lowest_bits)).round().int()


def _space(num_bins, shear, translate_x, translate_y, rotate, enhance, posterize_lowest):
    """The magnitudes of the ops the policies share, name -> (magnitudes, signed), in torchvision's order (the
    op index drawn picks by it): magnitudes rise linearly from 0 over num_bins bins, except posterize's bits
    (falling from 8) and solarize's threshold (falling from 255)."""
    lin = lambda hi: cthtorch.linspace(0.0, hi, num_bins)  # noqa: E731
    return {
        "ShearX": (lin(shear), True),
        "ShearY": (lin(shear), True),
        "TranslateX": (lin(translate_x), True),
        "TranslateY": (lin(translate_y), True),
        "Rotate": (lin(rotate), True),
        "Brightness": (lin(enhance), True),
        "Color": (lin(enhance), True),
        "Contrast": (lin(enhance), True),
        "Sharpness": (lin(enhance), True),
        "Posterize": (_posterize_bits(num_bins, posterize_lowest), False),
        "Solarize": (cthtorch.linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (cthtorch.tensor(0.0), False),
        "Equalize": (cthtorch.tensor(0.0), False),
    }


def _draw_and_apply(img, space, pick_bin, interpolation, fill):
    """Draw an op uniformly from `space` (name -> (magnitudes, signed)), its bin with pick_bin(n_bins), then a
    sign for signed ops; the draws are the generator calls torchvision makes, in its order."""
    names = list(space)
    op_name = names[int(cthtorch.randint(len(names), (1,)).item())]
    magnitudes, signed = space[op_name]
    magnitude = float(magnitudes[pick_bin(len(magnitudes))].item()) if magnitudes.ndim > 0 else 0.0
    if signed and cthtorch.randint(2, (1,)):
        magnitude = -magnitude
    return _apply_op(img, op_name, magnitude, interpolation, fill)


class RandAugment(cthtorch.nn.Module):
    """num_ops ops drawn uniformly from 14, each at bin `magnitude` of num_magnitude_bins, random sign."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        height, width = image_size   # (height, width), as torchvision passes it to an overriding subclass
        return {"Identity": (cthtorch.tensor(0.0), False),
                **_space(num_bins, 0.3, 150.0 / 331.0 * width, 150.0 / 331.0 * height, 30.0, 0.9, 4)}

    def forward(self, img):
        fill = _fill_list(img, self.fill)
        for _ in range(self.num_ops):
            _, height, width = F.get_dimensions(img)
            space = self._augmentation_space(self.num_magnitude_bins, (height, width))
            img = _draw_and_apply(img, space, lambda n: self.magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, "
                f"fill={self.fill})")


class TrivialAugmentWide(cthtorch.nn.Module):
    """One op drawn uniformly from 14 at a uniformly drawn bin of num_magnitude_bins (the "wide" ranges of
    TrivialAugment), with a random sign for signed ops."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        return {"Identity": (cthtorch.tensor(0.0), False), **_space(num_bins, 0.99, 32.0, 32.0, 135.0, 0.99, 6)}

    def forward(self, img):
        fill = _fill_list(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins)
        pick = lambda n: cthtorch.randint(n, (1,), dtype=cthtorch.long)  # noqa: E731
        return _draw_and_apply(img, space, pick, self.interpolation, fill)

    def __repr__(self):
        return (f"{type(self).__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


# The learned policies: each is two (op, probability, magnitude bin) steps; one policy is drawn per image.
# Written as "op probability bin" so the tables read as the paper's.
_POLICY_TABLES = {
    "imagenet": """
        Posterize .4 8, Rotate .6 9 | Solarize .6 5, AutoContrast .6 - | Equalize .8 -, Equalize .6 -
        Posterize .6 7, Posterize .6 6 | Equalize .4 -, Solarize .2 4 | Equalize .4 -, Rotate .8 8
        Solarize .6 3, Equalize .6 - | Posterize .8 5, Equalize 1 - | Rotate .2 3, Solarize .6 8
        Equalize .6 -, Posterize .4 6 | Rotate .8 8, Color .4 0 | Rotate .4 9, Equalize .6 -
        Equalize 0 -, Equalize .8 - | Invert .6 -, Equalize 1 - | Color .6 4, Contrast 1 8
        Rotate .8 8, Color 1 2 | Color .8 8, Solarize .8 7 | Sharpness .4 7, Invert .6 -
        ShearX .6 5, Equalize 1 - | Color .4 0, Equalize .6 - | Equalize .4 -, Solarize .2 4
        Solarize .6 5, AutoContrast .6 - | Invert .6 -, Equalize 1 - | Color .6 4, Contrast 1 8
        Equalize .8 -, Equalize .6 -""",
    "cifar10": """
        Invert .1 -, Contrast .2 6 | Rotate .7 2, TranslateX .3 9 | Sharpness .8 1, Sharpness .9 3
        ShearY .5 8, TranslateY .7 9 | AutoContrast .5 -, Equalize .9 - | ShearY .2 7, Posterize .3 7
        Color .4 3, Brightness .6 7 | Sharpness .3 9, Brightness .7 9 | Equalize .6 -, Equalize .5 -
        Contrast .6 7, Sharpness .6 5 | Color .7 7, TranslateX .5 8 | Equalize .3 -, AutoContrast .4 -
        TranslateY .4 3, Sharpness .2 6 | Brightness .9 6, Color .2 8 | Solarize .5 2, Invert 0 -
        Equalize .2 -, AutoContrast .6 - | Equalize .2 -, Equalize .6 - | Color .9 9, Equalize .6 -
        AutoContrast .8 -, Solarize .2 8 | Brightness .1 3, Color .7 0 | Solarize .4 5, AutoContrast .9 -
        TranslateY .9 9, TranslateY .7 9 | AutoContrast .9 -, Solarize .8 3 | Equalize .8 -, Invert .1 -
        TranslateY .7 9, AutoContrast .9 -""",
    "svhn": """
        ShearX .9 4, Invert .2 - | ShearY .9 8, Invert .7 - | Equalize .6 -, Solarize .6 6
        Invert .9 -, Equalize .6 - | Equalize .6 -, Rotate .9 3 | ShearX .9 4, AutoContrast .8 -
        ShearY .9 8, Invert .4 - | ShearY .9 5, Solarize .2 6 | Invert .9 -, AutoContrast .8 -
        Equalize .6 -, Rotate .9 3 | ShearX .9 4, Solarize .3 3 | ShearY .8 8, Invert .7 -
        Equalize .9 -, TranslateY .6 6 | Invert .9 -, Equalize .6 - | Contrast .3 3, Rotate .8 4
        Invert .8 -, TranslateY 0 2 | ShearY .7 6, Solarize .4 8 | Invert .6 -, Rotate .8 4
        ShearY .3 7, TranslateX .9 3 | ShearX .1 6, Invert .6 - | Solarize .7 2, TranslateY .6 7
        ShearY .8 4, Invert .8 - | ShearX .7 9, TranslateY .8 3 | ShearY .8 5, AutoContrast .7 -
        ShearX .7 2, Invert .1 -""",
}


def _policies(policy):
    """[((op, probability, bin or None), (op, probability, bin or None)), ...] of an AutoAugmentPolicy"""
    table = _POLICY_TABLES.get(getattr(policy, "value", None)) if isinstance(policy, AutoAugmentPolicy) else None
    if table is None:
        raise ValueError(f"The provided policy {policy} is not recognized.")
    out = []
    for pair in table.replace("\n", "|").split("|"):
        if pair.strip():
            steps = []
            for step in pair.split(","):
                name, p, b = step.split()
                steps.append((name, float(p), None if b == "-" else int(b)))
            out.append(tuple(steps))
    return out


class AutoAugment(cthtorch.nn.Module):
    """One of the policy's 25 op pairs drawn per image; each op applied with its probability at its bin of 10,
    a signed op negated when its sign draw is 0."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy):
        return _policies(policy)

    def _augmentation_space(self, num_bins, image_size):
        height, width = image_size
        return {**_space(num_bins, 0.3, 150.0 / 331.0 * width, 150.0 / 331.0 * height, 30.0, 0.9, 4),
                "Invert": (cthtorch.tensor(0.0), False)}

    @staticmethod
    def get_params(transform_num):
        """(policy index, the two ops' probability draws, their sign draws)"""
        policy_id = int(cthtorch.randint(transform_num, (1,)).item())
        probs = cthtorch.rand((2,))
        signs = cthtorch.randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img):
        fill = _fill_list(img, self.fill)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id].item()) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude = -magnitude
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(policy={self.policy}, fill={self.fill})"


def _augmix_args(t, severity, mixture_width, chain_depth, alpha, all_ops):
    t._PARAMETER_MAX = 10
    if not (1 <= severity <= t._PARAMETER_MAX):
        raise ValueError(f"The severity must be between [1, {t._PARAMETER_MAX}]. Got {severity} instead.")
    t.severity, t.mixture_width, t.chain_depth, t.alpha, t.all_ops = severity, mixture_width, chain_depth, alpha, all_ops


def _augmix(t, img, chain_step):
    """AugMix's mix of img (..., C, H, W) for the transform t (v1's or v2's): the Dirichlet weights are drawn
    first, then each chain's depth and its ops (chain_step applies one drawn op), as torchvision draws them."""
    orig_dims = list(img.shape)
    batch = img.reshape([1] * max(4 - img.ndim, 0) + orig_dims)
    batch_dims = [batch.size(0)] + [1] * (batch.ndim - 1)
    # Beta(alpha, alpha) as a two-way Dirichlet: column 0 weighs the original, column 1 the chains
    m = t._sample_dirichlet(cthtorch.tensor([t.alpha, t.alpha]).expand(batch_dims[0], -1))
    combined_weights = t._sample_dirichlet(cthtorch.tensor([t.alpha] * t.mixture_width).expand(batch_dims[0], -1)) \
        * m[:, 1].reshape([batch_dims[0], -1])
    mix = m[:, 0].reshape(batch_dims) * batch
    for i in range(t.mixture_width):
        aug = batch
        depth = t.chain_depth if t.chain_depth > 0 else int(cthtorch.randint(low=1, high=4, size=(1,)).item())
        for _ in range(depth):
            aug = chain_step(aug)
        mix.add_(combined_weights[:, i].reshape(batch_dims) * aug)
    return mix.reshape(orig_dims).to(dtype=img.dtype)


class AugMix(cthtorch.nn.Module):
    """mixture_width chains of chain_depth ops (1 to 3 drawn when negative) at a bin drawn below severity,
    mixed with Dirichlet weights, then blended with the original by a Beta(alpha, alpha) draw."""

    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__()
        _augmix_args(self, severity, mixture_width, chain_depth, alpha, all_ops)
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        height, width = image_size
        shared = _space(num_bins, 0.3, width / 3.0, height / 3.0, 30.0, 0.9, 4)
        # AugMix's posterize keeps 4 bits at bin 0 down to 0 bits; its photometric ops come last, if at all
        shared["Posterize"] = (_posterize_bits(num_bins, 4) - 4, False)
        first = ("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Posterize", "Solarize",
                 "AutoContrast", "Equalize")
        last = ("Brightness", "Color", "Contrast", "Sharpness") if self.all_ops else ()
        return {name: shared[name] for name in first + last}

    def _sample_dirichlet(self, params):
        # a method of its own, as torchvision's, so tests can replace the draws
        return cthtorch._sample_dirichlet(params)

    def forward(self, orig_img):
        channels, height, width = F.get_dimensions(orig_img)
        fill = _fill_list(orig_img, self.fill)
        img = orig_img if isinstance(orig_img, cthtorch.Tensor) else F.pil_to_tensor(orig_img)
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        pick = lambda n: cthtorch.randint(self.severity, (1,), dtype=cthtorch.long)  # noqa: E731
        mix = _augmix(self, img, lambda aug: _draw_and_apply(aug, op_meta, pick, self.interpolation, fill))
        return mix if isinstance(orig_img, cthtorch.Tensor) else F.to_pil_image(mix)

    def __repr__(self):
        return (f"{type(self).__name__}(severity={self.severity}, mixture_width={self.mixture_width}, "
                f"chain_depth={self.chain_depth}, alpha={self.alpha}, all_ops={self.all_ops}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
