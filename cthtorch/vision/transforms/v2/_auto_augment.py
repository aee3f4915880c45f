"""AutoAugment, RandAugment, TrivialAugmentWide and AugMix of v2: the v1 policies (one implementation) applied
to the sample's image, other leaves passed through."""
from cthtorch.utils import _pytree
from cthtorch.vision.transforms import autoaugment as v1
from cthtorch.vision.transforms.v2._transform import _kind, _needs_transform_list, _plain
from cthtorch.vision import tv_tensors


class _OnTheImage:
    def forward(self, *inputs):
        flat, spec = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        needs = _needs_transform_list(flat)
        if any(n and _kind(x) != "image" for x, n in zip(flat, needs)):
            raise NotImplementedError("%s of cthtorch.vision.transforms.v2 transforms images only; masks and "
                                      "bounding boxes are not implemented yet" % type(self).__name__)
        images = [i for i, n in enumerate(needs) if n]
        if len(images) != 1:
            raise TypeError("Auto augment transformations are only properly defined for a single image or video, "
                            "but found %d." % len(images))
        x = flat[images[0]]
        out = super().forward(_plain(x))
        flat[images[0]] = tv_tensors.wrap(out, like=x) if isinstance(x, tv_tensors.TVTensor) else out
        return _pytree.tree_unflatten(flat, spec)


class AutoAugment(_OnTheImage, v1.AutoAugment):
    pass


class RandAugment(_OnTheImage, v1.RandAugment):
    pass


class TrivialAugmentWide(_OnTheImage, v1.TrivialAugmentWide):
    pass


class AugMix(_OnTheImage, v1.AugMix):
    pass


AutoAugmentPolicy = v1.AutoAugmentPolicy
