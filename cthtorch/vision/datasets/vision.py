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
        self.transforms = transforms

    def _apply(self, img, target):
        if self.transforms is not None:   # a joint transform of (image, target), as VOC's and COCO's take
            return self.transforms(img, target)
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
        if self.transform is not None:
            body += ["Transform: " + repr(self.transform).replace("\n", "\n" + " " * 4)]
        lines = [head] + [" " * self._repr_indent + line for line in body]
        return "\n".join(lines)

    def extra_repr(self):
        return ""


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
