"""CelebA from root/celeba: img_align_celeba/*.jpg and the annotation lists (list_eval_partition.txt,
identity_CelebA.txt, list_bbox_celeba.txt, list_landmarks_align_celeba.txt, list_attr_celeba.txt), read as
torchvision reads them: space-separated, attributes mapped from {-1, 1} to {0, 1}."""
import csv
import os
from collections import namedtuple

import cthtorch
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download

CSV = namedtuple("CSV", ["header", "index", "data"])

_LISTS = ("list_eval_partition.txt", "identity_CelebA.txt", "list_bbox_celeba.txt",
          "list_landmarks_align_celeba.txt", "list_attr_celeba.txt")


class CelebA(VisionDataset):
    base_folder = "celeba"

    def __init__(self, root, split="train", target_type="attr", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = target_type if isinstance(target_type, list) else [target_type]
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        folder = os.path.join(self.root, self.base_folder)
        if not (os.path.isdir(os.path.join(folder, "img_align_celeba"))
                and all(os.path.isfile(os.path.join(folder, f)) for f in _LISTS)):
            if download:
                no_download(type(self).__name__, folder)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        split_ = {"train": 0, "valid": 1, "test": 2, "all": None}[
            verify_str_arg(split.lower(), "split", ("train", "valid", "test", "all"))]
        splits = self._load_csv("list_eval_partition.txt")
        identity = self._load_csv("identity_CelebA.txt")
        bbox = self._load_csv("list_bbox_celeba.txt", header=1)
        landmarks_align = self._load_csv("list_landmarks_align_celeba.txt", header=1)
        attr = self._load_csv("list_attr_celeba.txt", header=1)
        if split_ is None:
            mask = slice(None)
            self.filename = splits.index
        else:
            mask = (splits.data == split_).squeeze(-1)
            self.filename = [splits.index[i] for i in cthtorch.nonzero(mask).reshape(-1).tolist()]
        self.identity = identity.data[mask]
        self.bbox = bbox.data[mask]
        self.landmarks_align = landmarks_align.data[mask]
        self.attr = cthtorch.div(attr.data[mask] + 1, 2, rounding_mode="floor")
        self.attr_names = attr.header

    def _load_csv(self, filename, header=None):
        with open(os.path.join(self.root, self.base_folder, filename)) as f:
            data = list(csv.reader(f, delimiter=" ", skipinitialspace=True))
        headers = []
        if header is not None:
            headers, data = data[header], data[header + 1:]
        indices = [row[0] for row in data]
        values = [list(map(int, row[1:])) for row in data]
        return CSV(headers, indices, cthtorch.tensor(values, dtype=cthtorch.int64))

    def __getitem__(self, index):
        from PIL import Image
        X = Image.open(os.path.join(self.root, self.base_folder, "img_align_celeba", self.filename[index]))
        target = []
        for t in self.target_type:
            if t == "attr":
                target.append(self.attr[index, :])
            elif t == "identity":
                target.append(self.identity[index, 0])
            elif t == "bbox":
                target.append(self.bbox[index, :])
            elif t == "landmarks":
                target.append(self.landmarks_align[index, :])
            else:
                raise ValueError('Target type "%s" is not recognized.' % t)
        if self.transform is not None:
            X = self.transform(X)
        if not target:
            return X, None
        target = tuple(target) if len(target) > 1 else target[0]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return X, target

    def __len__(self):
        return len(self.attr)

    def extra_repr(self):
        return "Target type: {}\nSplit: {}".format(self.target_type, self.split)
