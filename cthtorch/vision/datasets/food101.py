"""Food-101: root/food-101/meta/{train,test}.json ({class: ["class/id", ...]}) and images/<class>/<id>.jpg."""
import json
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import LabelledImageFiles, no_download


class Food101(LabelledImageFiles):
    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = os.path.join(self.root, "food-101")
        self._meta_folder = os.path.join(self._base_folder, "meta")
        self._images_folder = os.path.join(self._base_folder, "images")
        if not all(os.path.isdir(f) for f in (self._meta_folder, self._images_folder)):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        with open(os.path.join(self._meta_folder, "%s.json" % split)) as f:
            metadata = json.loads(f.read())
        self.classes = sorted(metadata.keys())
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._labels, self._image_files = [], []
        for class_label, rel_paths in metadata.items():   # the file's order, as torchvision keeps it
            self._labels += [self.class_to_idx[class_label]] * len(rel_paths)
            self._image_files += [os.path.join(self._images_folder, *("%s.jpg" % p).split("/")) for p in rel_paths]
