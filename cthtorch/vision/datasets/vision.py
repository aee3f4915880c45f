"""VisionDataset base: root, transform/target_transform, repr."""
import os

from cthtorch.utils.data import Dataset


class VisionDataset(Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        if transforms is not None and (transform is not None or target_transform is not None):
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        if transform is not None or target_transform is not None:   # one callable of (image, target) either way
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def _apply(self, img, target):
        if self.transforms is not None and not isinstance(self.transforms, StandardTransform):
            return self.transforms(img, target)   # a joint transform, as VOC's and COCO's take
        # the separate ones as the attributes are now (torchvision's datasets read them, so reassigning
        # dataset.transform after construction takes effect)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self):
        head = "Dataset " + self.__class__.__name__
        body = ["Number of datapoints: %d" % self.__len__()]
        if self.root is not None:
            body.append("Root location: %s" % self.root)
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:   # one item: only its first line is indented
            body.append(repr(self.transforms))
        lines = [head] + [" " * self._repr_indent + line for line in body]
        return "\n".join(lines)

    def _format_transform_repr(self, transform, head):
        return _format_transform_repr(transform, head)

    def extra_repr(self):
        return ""


def _format_transform_repr(transform, head):
    """transform's repr after head, its later lines aligned under the first"""
    lines = repr(transform).splitlines()
    return [head + lines[0]] + [" " * len(head) + line for line in lines[1:]]


class StandardTransform:
    """transform and target_transform as one callable of (input, target)"""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def _format_transform_repr(self, transform, head):
        return _format_transform_repr(transform, head)

    def __repr__(self):
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += _format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += _format_transform_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)


class LabelledImageFiles(VisionDataset):
    """A split's RGB images (self._image_files) and their labels (self._labels), as Flowers102 and Food101
    keep them"""

    def __len__(self):
        return len(self._image_files)

    def __getitem__(self, idx):
        from PIL import Image
        return self._apply(Image.open(self._image_files[idx]).convert("RGB"), self._labels[idx])

    def extra_repr(self):
        return "split=%s" % self._split


def no_download(name, where):
    raise RuntimeError("%s: download=True cannot fetch anything here (no network access at run time). Put the "
                       "dataset files in %s and construct the dataset with download=False." % (name, where))
