"""torchvision's wrap_dataset_for_transforms_v2: a dataset's samples with their targets as tv_tensors (boxes as
BoundingBoxes, masks as Mask) so transforms.v2 moves them with the image; the dataset's own transforms run
after the wrapping. Classification datasets pass through; VOC, Kitti, CelebA and Oxford-IIIT Pet targets
are converted as torchvision converts them. Loaded on first use (tv_tensors arm the subclass hand-over)."""
import collections.abc
import contextlib

import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST, GTSRB, Caltech256, CelebA,
                                      DatasetFolder, ImageFolder, ImageNet, Imagenette, Kitti, OxfordIIITPet,
                                      VOCDetection, VOCSegmentation)
from cthtorch.vision.datasets.vision import VisionDataset
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms.v2._geometry import convert_bounding_box_format

VOC_DETECTION_CATEGORIES = ["__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car",
                            "cat", "chair", "cow", "diningtable", "dog", "horse", "motorbike", "person",
                            "pottedplant", "sheep", "sofa", "train", "tvmonitor"]
KITTI_CATEGORIES = ["Car", "Van", "Truck", "Pedestrian", "Person_sitting", "Cyclist", "Tram", "Misc", "DontCare"]


def _parse_target_keys(target_keys, available, default):
    if target_keys is None:
        return set(default)
    if target_keys == "all":
        return set(available)
    target_keys = set(target_keys)
    extra = target_keys - set(available)
    if extra:
        raise ValueError("Target keys %s are not available. The available keys are %s."
                         % (sorted(extra), sorted(available)))
    return target_keys


def _dict_of_lists(dicts):
    out = collections.defaultdict(list)
    for d in dicts:
        for key, value in d.items():
            out[key].append(value)
    return dict(out)


def _size(image):
    return tuple(F._size_of(image))


def _classification(dataset, target_keys):
    return lambda idx, sample: sample


def _segmentation(dataset, target_keys):
    def wrapper(idx, sample):
        image, mask = sample
        return image, tv_tensors.Mask(mask)
    return wrapper


def _voc_detection(dataset, target_keys):
    keys = _parse_target_keys(target_keys, {"annotation", "boxes", "labels"}, {"boxes", "labels"})
    category_to_idx = {c: i for i, c in enumerate(VOC_DETECTION_CATEGORIES)}

    def wrapper(idx, sample):
        image, target = sample
        objects = _dict_of_lists(target["annotation"]["object"])
        target = target if "annotation" in keys else {}
        if "boxes" in keys:
            target["boxes"] = tv_tensors.BoundingBoxes(
                [[int(b[p]) for p in ("xmin", "ymin", "xmax", "ymax")] for b in objects["bndbox"]],
                format=tv_tensors.BoundingBoxFormat.XYXY, canvas_size=_size(image))
        if "labels" in keys:
            target["labels"] = cthtorch.tensor([category_to_idx[c] for c in objects["name"]])
        return image, target
    return wrapper


def _kitti(dataset, target_keys):
    keys = _parse_target_keys(target_keys, {"type", "truncated", "occluded", "alpha", "bbox", "dimensions",
                                            "location", "rotation_y", "boxes", "labels"}, {"boxes", "labels"})
    category_to_idx = {c: i for i, c in enumerate(KITTI_CATEGORIES)}

    def wrapper(idx, sample):
        image, target = sample
        if target is None:
            return image, target
        batched = _dict_of_lists(target)
        target = {}
        if "boxes" in keys:
            target["boxes"] = tv_tensors.BoundingBoxes(batched["bbox"], format=tv_tensors.BoundingBoxFormat.XYXY,
                                                       canvas_size=_size(image))
        if "labels" in keys:
            target["labels"] = cthtorch.tensor([category_to_idx[c] for c in batched["type"]])
        for key in keys - {"boxes", "labels"}:
            target[key] = batched[key]
        return image, target
    return wrapper


def _per_target_type(convert):
    """a wrapper for datasets whose target is one value or a tuple by target type (dataset.<attr>)"""
    def factory(dataset, target_keys, attr):
        def wrapper(idx, sample):
            image, target = sample
            types = getattr(dataset, attr)
            if target is None:
                return image, target
            parts = (target,) if len(types) == 1 else target
            parts = tuple(convert(t, part, image) for t, part in zip(types, parts))
            return image, parts[0] if len(parts) == 1 else parts
        return wrapper
    return factory


def _not_supported(description):
    raise RuntimeError("%s is currently not supported by this wrapper. If this would be helpful for you, please open "
                       "an issue at https://github.com/pytorch/vision/issues." % description)


def _celeba(dataset, target_keys):
    if any(kind in dataset.target_type for kind in ("attr", "landmarks")):
        _not_supported("`CelebA` dataset with `target_type=['attr', 'landmarks', ...]`")
    return _per_target_type(_celeba_part)(dataset, target_keys, "target_type")


def _celeba_part(kind, value, image):
    if kind == "bbox":   # CelebA's (x, y, width, height), given in XYXY as torchvision converts it
        xyxy = convert_bounding_box_format(cthtorch.as_tensor(value), "XYWH", "XYXY")
        return tv_tensors.BoundingBoxes(xyxy, format=tv_tensors.BoundingBoxFormat.XYXY, canvas_size=_size(image))
    return value


def _pet_part(kind, value, image):
    return tv_tensors.Mask(value) if kind == "segmentation" else value


_FACTORIES = [
    (VOCDetection, _voc_detection), (VOCSegmentation, _segmentation), (Kitti, _kitti),
    (CelebA, _celeba),
    (OxfordIIITPet, lambda d, k: _per_target_type(_pet_part)(d, k, "_target_types")),
    (Caltech256, _classification), (CIFAR10, _classification), (CIFAR100, _classification),
    (ImageNet, _classification), (MNIST, _classification), (FashionMNIST, _classification),
    (GTSRB, _classification), (Imagenette, _classification), (ImageFolder, _classification),
    (DatasetFolder, _classification),
]


class VisionDatasetTVTensorWrapper:
    def __init__(self, dataset, target_keys):
        dataset_cls = type(dataset)
        if not isinstance(dataset, VisionDataset):
            raise TypeError("This wrapper is meant for subclasses of `torchvision.datasets.VisionDataset`, but got a "
                            "'%s' instead.\nFor an example of how to perform the wrapping for custom datasets, see\n\n"
                            "https://pytorch.org/vision/main/auto_examples/plot_tv_tensors.html#do-i-have-to-wrap-the-"
                            "output-of-the-datasets-myself" % dataset_cls.__name__)
        factory = next((f for cls in dataset_cls.__mro__ for c, f in _FACTORIES if c is cls), None)
        if factory is None:
            raise TypeError("%s is currently not supported by this wrapper. If this would be helpful for you, please "
                            "open an issue at https://github.com/pytorch/vision/issues." % dataset_cls.__name__)
        self._dataset = dataset
        self._target_keys = target_keys
        self._wrapper = factory(dataset, target_keys)
        # the dataset's transforms run after the wrapping, so they see tv_tensors
        self.transform, dataset.transform = dataset.transform, None
        self.target_transform, dataset.target_transform = dataset.target_transform, None
        self.transforms, dataset.transforms = dataset.transforms, None

    def __getattr__(self, item):
        with contextlib.suppress(AttributeError):
            return object.__getattribute__(self, item)
        return getattr(self._dataset, item)

    def __getitem__(self, idx):
        image, target = self._wrapper(idx, self._dataset[idx])
        if self.transforms is not None:
            return self.transforms(image, target)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __len__(self):
        return len(self._dataset)

    def __reduce__(self):
        return wrap_dataset_for_transforms_v2, (self._dataset, self._target_keys)


def wrap_dataset_for_transforms_v2(dataset, target_keys=None):
    if not (target_keys is None or target_keys == "all" or (
            isinstance(target_keys, collections.abc.Collection) and all(isinstance(k, str) for k in target_keys))):
        raise ValueError("`target_keys` can be None, 'all', or a collection of strings denoting the keys to be "
                         "returned, but got %s" % (target_keys,))
    # a subclass of the dataset's own class, so isinstance checks on the wrapped dataset still hold
    cls = type("Wrapped%s" % type(dataset).__name__, (VisionDatasetTVTensorWrapper, type(dataset)), {})
    return cls(dataset, target_keys)
